// CoreDNS plugin/file/setup_test.go (TestFileParse), ported: zones, fallthrough and options.
import { describe, it, expect } from 'vitest';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import pino from 'pino';
import { Writable } from 'node:stream';
import { buildApp } from '../../../src/app.js';
import { corefileErrors } from '../../../src/chain/corefile.js';
import { repoRoot } from '../../helpers/server.js';
import { setupBlock, setupPlugin } from '../../helpers/setup.js';
import type { FileConfig } from '../../../src/plugins/file/config.js';

// Relative owner names, so it loads for any origin.
const db = path.join(repoRoot, 'test/fixtures/file/example.net.zone');
const cfgOf = async (body: string) => (await setupPlugin<{ cfg: FileConfig }>(body, 'file')).cfg;

describe('file setup (CoreDNS TestFileParse)', () => {
  it.each([
    [`file ${db} miek.nl.`, ['miek.nl.'], undefined],
    [`file ${db} dnssex.nl.`, ['dnssex.nl.'], undefined],
    [`file ${db} 10.0.0.0/8`, ['10.in-addr.arpa.'], undefined],
    [`file ${db} example.org. {\n  fallthrough\n}`, ['example.org.'], []],
    [`file ${db} example.org. {\n  fallthrough www.example.org\n}`, ['example.org.'], ['www.example.org.']],
  ])('accepts %j', async (body, zones, fallthrough) => {
    const c = await cfgOf(body);
    expect([c.zones, c.fallthrough]).toEqual([zones, fallthrough]);
  });

  it.each([
    [`file ${db} miek.nl {\n  transfer from 127.0.0.1\n}`, /unknown file option "transfer"/],
    ['file', /file: wrong number of arguments: 0 given, at least 1 expected; usage `file DBFILE \[ZONES...\]`/],
    [`file ${db} example.net. {\n  no_reload\n}`, /unknown file option "no_reload"/],
    [`file ${db} example.net. {\n  no_rebloat\n}`, /unknown file option "no_rebloat"/],
    [`file ${db} example.net. {\n  reload_by_mtime\n}`, /reload_by_mtime is not supported/],
  ])('rejects %j', async (body, reason) => {
    expect((await setupBlock(body)).errors.join('\n')).toMatch(reason);
  });

  it('loads a zone outside the server block as CoreDNS does, with a warning', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const app = await buildApp({ corefileText: `example.org {\n  file ${db} example.net\n}\n`, logger: pino({ level: 'warn' }, sink), oneShot: true });
    await app.close();
    expect(lines.join('')).toContain("file zone example.net. is not inside the server block's zones (example.org.)");
  });
});

describe('file setup errors, word for word', () => {
  // Every message of file/setup.ts that the table above matches only in part or not at all.
  it.each([
    ['file', '2: file: wrong number of arguments: 0 given, at least 1 expected; usage `file DBFILE [ZONES...]`, e.g. `file db.example.org example.org`'],
    [`file ${db} example.org example.org`, '2: file: zone listed twice (example.org. example.org.)'],
    [`file ${db} example.org {\n  reload\n}`, '3: file reload: wrong number of arguments: 0 given, 1 expected; usage `reload DURATION`, e.g. `reload 30s`'],
    [
      `file ${db} example.org {\n  reload 1m 2m\n}`,
      '3: file reload: wrong number of arguments: 2 given, 1 expected; usage `reload DURATION`, e.g. `reload 30s`',
    ],
    [`file ${db} example.org {\n  reload soon\n}`, '3: file reload: "soon" is not a duration; write e.g. 30s, 1m30s or 0 to disable'],
    [`file ${db} example.org {\n  reload -1s\n}`, '3: file reload: "-1s" must not be negative'],
    [`file ${db} example.org {\n  reload_by_mtime\n}`, '3: file reload_by_mtime is not supported: the zone file is reloaded when its SOA serial changes'],
    [`file ${db} example.org {\n  notify\n}`, '3: unknown file option "notify"; valid options: reload, fallthrough, upstream'],
  ])('rejects %j', async (body, error) => {
    expect((await setupBlock(body)).errors).toEqual([error]);
  });

  it('accepts reload 0 (no reload) and the old upstream option, which CoreDNS ignores', async () => {
    expect((await cfgOf(`file ${db} example.org {\n  reload 0\n  upstream\n}`)).reloadMs).toBe(0);
  });

  const errorsOf = async (corefileText: string): Promise<string[]> => {
    try {
      await (await buildApp({ corefileText, logger: pino({ level: 'silent' }), oneShot: true })).close();
    } catch (err) {
      const found = corefileErrors(err);
      if (found) return found.map((e) => `${e.file}:${e.line}: ${e.reason}`);
      throw err;
    }
    return [];
  };

  it('points at the directive when the zone file cannot be read, and at the zone file line for a bad record', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-file-setup-'));
    const missing = path.join(dir, 'missing.zone');
    expect(await errorsOf(`example.org {\n  file ${missing}\n}\n`)).toEqual([`Corefile:2: file: ${missing}: cannot read the zone file: no such file`]);
    const bad = path.join(dir, 'bad.zone');
    fs.writeFileSync(
      bad,
      [
        '$ORIGIN example.org.',
        '@ 3600 IN SOA ns.example.org. admin.example.org. 1 7200 3600 1209600 3600',
        '@ 3600 IN NS ns',
        'ns 3600 IN A 192.0.2.1',
        'bad 3600 IN A 300.1.1.1',
      ].join('\n'),
    );
    expect(await errorsOf(`example.org {\n  file ${bad}\n}\n`)).toEqual([`${bad}:5: A: "300.1.1.1" is not an IPv4 address`]);
  });
});
