// Several `file` lines in one block: each zone answered by its own file, records lists both.
import { describe, it, expect } from 'vitest';
import { ask } from '../../helpers/decode.js';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { buildApp } from '../../../src/app.js';
import { launcher, repoRoot } from '../../helpers/server.js';

const conf = path.join(repoRoot, 'test/fixtures/file/multi.Corefile');

describe('file: several lines in one server block', () => {
  it('answers each zone from its own file', async () => {
    const app = await buildApp({ conf });
    try {
      const web = await ask(app, 'web.example.org', 'A');
      expect(web.answers?.map((a) => String(a.data)).sort()).toEqual(['192.0.2.80', '192.0.2.81']);
      const ptr = await ask(app, '80.2.0.192.in-addr.arpa', 'PTR');
      expect(ptr.answers?.map((a) => String(a.data))).toEqual(['web.example.org']);
      const nx = await ask(app, 'nope.example.org', 'A');
      expect(nx.rcode).toBe('NXDOMAIN');
    } finally {
      await app.close();
    }
  });

  it('lists both zones in `clusterdns records`', () => {
    const out = execFileSync(process.execPath, [launcher, 'records', '--conf', conf], { cwd: repoRoot, encoding: 'utf8' });
    expect(out).toMatch(/^; zone example\.org\. \(\d+ records\)/m);
    expect(out).toMatch(/^; zone 2\.0\.192\.in-addr\.arpa\. \(\d+ records\)/m);
  });
});
