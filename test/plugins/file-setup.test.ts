// CoreDNS plugin/file/setup_test.go (TestFileParse), ported: zones, fallthrough and options.
import { describe, it, expect } from 'vitest';
import * as path from 'node:path';
import pino from 'pino';
import { Writable } from 'node:stream';
import { buildApp } from '../../src/app.js';
import { repoRoot } from '../helpers/server.js';
import { setupBlock, setupPlugin } from '../helpers/setup.js';
import type { FileConfig } from '../../src/plugins/file/setup.js';

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
    ['file', /file needs the zone file/],
    [`file ${db} example.net. {\n  no_reload\n}`, /unknown file option "no_reload"/],
    [`file ${db} example.net. {\n  no_rebloat\n}`, /unknown file option "no_rebloat"/],
    [`file ${db} example.net. {\n  reload_by_mtime\n}`, /reload_by_mtime is not supported/],
  ])('rejects %j', async (body, reason) => {
    expect((await setupBlock(body)).errors.join('\n')).toMatch(reason);
  });

  it('loads a zone outside the server block as CoreDNS does, with a warning', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write(chunk, _enc, cb) { lines.push(String(chunk)); cb(); } });
    const app = await buildApp({ corefileText: `example.org {\n  file ${db} example.net\n}\n`, logger: pino({ level: 'warn' }, sink), oneShot: true });
    await app.close();
    expect(lines.join('')).toContain("file zone example.net. is not inside the server block's zones (example.org.)");
  });
});
