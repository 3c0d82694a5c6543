// The file plugin's Corefile errors, startup failures and reload: a changed zone file is served
// after the reload interval; a broken edit is logged with file:line and the previous version
// keeps serving.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ask } from '../../helpers/decode.js';
import { buildApp, type App } from '../../../src/app.js';
import { FilePlugin } from '../../../src/plugins/file/plugin.js';
import { parseGoDuration as parseDuration } from '../../../src/pkg/duration.js';
import { repoRoot, startServer, which, type RunningServer } from '../../helpers/server.js';
import { digQuery } from '../../helpers/clients.js';
import { describeNeeding } from '../../helpers/tools.js';
import { quietFor, waitUntil } from '../../helpers/wait.js';

const fixtures = path.join(repoRoot, 'test/fixtures/file');
const exampleZone = path.join(repoRoot, 'zones/example.org.zone');

function zoneText(serial: number, body: string): string {
  return `$ORIGIN reload.test.\n$TTL 30\n@ SOA ns hostmaster ${serial} 7200 1800 86400 30\n  NS ns\nns A 192.0.2.53\n${body}\n`;
}

/** Polls until `f` holds or the time is up. */
const until = (f: () => boolean | Promise<boolean>, ms = 5000): Promise<void> => waitUntil('the reload', f, ms, 50);

function filePlugin(app: App): FilePlugin {
  return app.chains.flatMap((c) => c.plugins).find((p): p is FilePlugin => p instanceof FilePlugin)!;
}

/** Resolves once the plugin's reload loop has finished `n` more polls (at most 5 s). */
async function polls(app: App, n: number): Promise<void> {
  const spy = vi.spyOn(filePlugin(app), 'reload');
  try {
    await waitUntil(`${n} reload polls`, () => spy.mock.settledResults.filter((r) => r.type === 'fulfilled').length >= n, 5000, 20);
  } finally {
    spy.mockRestore();
  }
}

const answers = async (app: App, name: string, type = 'A'): Promise<string[]> =>
  ((await ask(app, name, type)).answers ?? []).map((a) => `${a.name} ${String(a.data)}`);

describe('file: Corefile errors name the Corefile line', () => {
  const rows: { why: string; conf: string; error: RegExp }[] = [
    {
      why: 'no DBFILE',
      conf: 'example.org {\n  file\n}',
      error: /^Corefile:2: file: wrong number of arguments: 0 given, at least 1 expected; usage `file DBFILE \[ZONES...\]`/,
    },
    {
      why: 'unknown option',
      conf: `example.org {\n  file ${exampleZone} {\n    nope 1\n  }\n}`,
      error: /^Corefile:3: unknown file option "nope"; valid options: reload, fallthrough, upstream/,
    },
    {
      why: 'bad reload duration',
      conf: `example.org {\n  file ${exampleZone} {\n    reload 10\n  }\n}`,
      error: /^Corefile:3: file reload: "10" is not a duration/,
    },
    {
      why: 'missing zone file',
      conf: 'example.org {\n  file /nonexistent/db.example.org\n}',
      error: /^Corefile:2: file: \/nonexistent\/db\.example\.org: cannot read the zone file/,
    },
    {
      why: 'a zone file error stops the load with the zone file line',
      conf: `example.org {\n  file ${path.join(fixtures, 'broken-include.zone')}\n}`,
      error: /broken\.inc:3: A: "192\.0\.2\.300" is not an IPv4 address$/,
    },
    {
      why: 'the file loaded for an origin it does not fit',
      conf: `example.net {\n  file ${exampleZone}\n}`,
      error: /example\.org\.zone:7: example\.org\. is outside the zone example\.net\.; write it relative, or fix \$ORIGIN$/,
    },
  ];
  for (const r of rows) {
    it(r.why, async () => {
      await expect(buildApp({ corefileText: r.conf, port: 0 })).rejects.toThrow(r.error);
    });
  }

  it('reload durations as Go parses them', () => {
    expect(parseDuration('1m')).toBe(60_000);
    expect(parseDuration('1m30s')).toBe(90_000);
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('0')).toBe(0);
    expect(parseDuration('1.5h')).toBe(5_400_000);
    expect(parseDuration('-1s')).toBe(-1000); // parsed as Go does; the file setup refuses negatives
    expect(parseDuration('10')).toBeUndefined();
  });

  it('the server does not start on a broken zone, and says where', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-file-'));
    try {
      const conf = path.join(dir, 'Corefile');
      writeFileSync(conf, `example.org {\n  bind 127.0.0.1\n  file ${path.join(fixtures, 'broken-include.zone')}\n}\n`);
      await expect(startServer(['--conf', conf])).rejects.toThrow(/broken\.inc:3: A: "192\.0\.2\.300" is not an IPv4 address/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});

describe('file: reload (in process)', () => {
  let dir: string;
  let zone: string;
  let app: App;
  const logs: string[] = [];
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-file-'));
    zone = path.join(dir, 'db.reload.test');
    writeFileSync(zone, zoneText(1, 'a A 192.0.2.1'));
    writeFileSync(path.join(dir, 'Corefile'), 'reload.test {\n  file db.reload.test {\n    reload 300ms\n  }\n}\n');
    const logger = pino({ level: 'info' }, { write: (s: string) => void logs.push(s) });
    app = await buildApp({ conf: path.join(dir, 'Corefile'), port: 0, logger });
  });
  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the first version', async () => {
    expect(await answers(app, 'a.reload.test.')).toEqual(['a.reload.test 192.0.2.1']);
    expect((await ask(app, 'b.reload.test.', 'A')).rcode).toBe('NXDOMAIN');
  });

  it('an unchanged file is not reloaded', async () => {
    await polls(app, 2);
    expect(filePlugin(app).generation).toBe(0);
  });

  it('a changed file is served after the reload interval', async () => {
    writeFileSync(zone, zoneText(2, 'a A 192.0.2.11\nc A 192.0.2.3'));
    await until(() => filePlugin(app).generation === 1);
    // Spellings never asked before: whatever the server cached for the old version, these
    // questions reach the plugin.
    expect(await answers(app, 'c.reload.test.')).toEqual(['c.reload.test 192.0.2.3']);
    expect(await answers(app, 'A.reload.test.')).toEqual(['A.reload.test 192.0.2.11']);
    expect(logs.some((l) => l.includes('"zone reloaded"') && l.includes('"serial":2'))).toBe(true);
  });

  it('a broken edit is logged with file:line and the previous version keeps serving', async () => {
    writeFileSync(zone, zoneText(3, 'a A 192.0.2.21\nbad A 192.0.2.999'));
    await until(() => logs.some((l) => l.includes('still serving the previous version')));
    const line = logs.find((l) => l.includes('still serving the previous version'))!;
    const entry = JSON.parse(line) as { file: string; line: number; msg: string; level: number };
    expect(entry.level).toBe(50); // error
    expect(entry.file).toBe(zone);
    expect(entry.line).toBe(7);
    expect(entry.msg).toContain(`${zone}:7: A: "192.0.2.999" is not an IPv4 address`);
    expect(await answers(app, 'C.reload.test.')).toEqual(['C.reload.test 192.0.2.3']);
    expect(await answers(app, 'a.RELOAD.test.')).toEqual(['a.RELOAD.test 192.0.2.11']);
    // Logged once, not at every interval.
    await polls(app, 2);
    expect(logs.filter((l) => l.includes('still serving the previous version'))).toHaveLength(1);
    expect(filePlugin(app).generation).toBe(1);
  });

  it('fixing the file loads it again', async () => {
    writeFileSync(zone, zoneText(4, 'a A 192.0.2.31'));
    await until(() => filePlugin(app).generation === 2);
    expect(await answers(app, 'a.reload.TEST.')).toEqual(['a.reload.TEST 192.0.2.31']);
    expect((await ask(app, 'c.reload.TEST.', 'A')).rcode).toBe('NXDOMAIN');
  });

  it('answers cached before a reload are dropped (needs the server hook dataChanged)', async (ctx) => {
    if (!filePlugin(app).notifiesServer) {
      console.warn('file reload: the server offers no dataChanged hook yet; cached answers may outlive a reload (see src/plugins/file/README.md, Reload)');
      ctx.skip();
    }
    expect(await answers(app, 'a.reload.test.')).toEqual(['a.reload.test 192.0.2.31']);
    writeFileSync(zone, zoneText(5, 'a A 192.0.2.41'));
    await until(() => filePlugin(app).generation === 3);
    expect(await answers(app, 'a.reload.test.')).toEqual(['a.reload.test 192.0.2.41']);
  });

  it('reload 0 never reads the file again', async () => {
    const d = mkdtempSync(path.join(tmpdir(), 'clusterdns-file-'));
    try {
      const z = path.join(d, 'db');
      writeFileSync(z, zoneText(1, 'a A 192.0.2.1'));
      const a = await buildApp({ corefileText: `reload.test {\n  file ${z} {\n    reload 0\n  }\n}\n`, port: 0 });
      writeFileSync(z, zoneText(2, 'b A 192.0.2.2'));
      await quietFor(300, 'a reload of the edited file (reload 0: there must be none)');
      expect((await ask(a, 'b.reload.test.', 'A')).rcode).toBe('NXDOMAIN');
      expect(await filePlugin(a).reload()).toBe(true); // reload() itself still works when asked
      await a.close();
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});

const dig = which('dig');

describeNeeding(['dig'], 'file: reload through the real server (dig)', () => {
  let dir: string;
  let zone: string;
  let server: RunningServer | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-file-'));
    zone = path.join(dir, 'db.reload.test');
    writeFileSync(zone, zoneText(1, 'a A 192.0.2.1'));
    writeFileSync(path.join(dir, 'Corefile'), 'reload.test {\n  bind 127.0.0.1\n  file db.reload.test {\n    reload 1s\n  }\n}\n');
    server = await startServer(['--conf', path.join(dir, 'Corefile')]);
  }, 30_000);
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a new name appears after the reload; a broken edit keeps it', async () => {
    const a = await digQuery(dig!, server!.port, 'a.reload.test.', 'A', false);
    expect(a.answer).toEqual(['a.reload.test. 30 IN A 192.0.2.1']);
    writeFileSync(zone, zoneText(2, 'a A 192.0.2.1\nnew A 192.0.2.2'));
    await until(() => server!.logs.some((l) => l.includes('"zone reloaded"')), 10_000);
    const n = await digQuery(dig!, server!.port, 'new.reload.test.', 'A', false);
    expect(n.rcode).toBe('NOERROR');
    expect(n.answer).toEqual(['new.reload.test. 30 IN A 192.0.2.2']);
    writeFileSync(zone, zoneText(3, 'a A 192.0.2.1\nnew A 192.0.2.2\n( broken'));
    await until(() => server!.logs.some((l) => l.includes('still serving the previous version')), 10_000);
    const logged = server!.logs.find((l) => l.includes('still serving the previous version'))!;
    expect(logged).toContain(`${zone}:8: \\"(\\" is never closed`);
    const again = await digQuery(dig!, server!.port, 'NEW.reload.test.', 'A', true);
    expect(again.answer).toEqual(['NEW.reload.test. 30 IN A 192.0.2.2']);
  }, 30_000);
});
