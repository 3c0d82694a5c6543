// Zone files, hosts files and the Corefile the reload plugin watches are read as regular files
// only, bounded: a FIFO or a device named by the Corefile never stalls the server (#9.14).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launcher, startServer, type RunningServer } from '../helpers/server.js';
import { buildQuery, decode, T, udpQuery } from '../server/raw.js';
import { quietFor } from '../helpers/wait.js';
import { readRegularFile, UnreadableFile } from '../../src/pkg/regular-file.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-datafiles-'));
  for (const f of ['zone.fifo', 'hosts.fifo']) execFileSync('mkfifo', [path.join(dir, f)]);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('data files a Corefile names (#9.14)', () => {
  it('refuses a FIFO and a device at once, naming the kind, and bounds the bytes read', () => {
    expect(() => readRegularFile(path.join(dir, 'zone.fifo'))).toThrow(/it is a FIFO/);
    expect(() => readRegularFile('/dev/zero')).toThrow(/it is a character device/);
    writeFileSync(path.join(dir, 'big'), Buffer.alloc(2048, 0x61));
    expect(() => readRegularFile(path.join(dir, 'big'), 1024)).toThrow(UnreadableFile);
    expect(readRegularFile(path.join(dir, 'big'), 4096)).toHaveLength(2048);
  });

  it('a zone file that is a FIFO stops the start with file:line, at once', () => {
    writeFileSync(path.join(dir, 'Corefile.zone'), `example.org:0 {\n    bind 127.0.0.1\n    file ${path.join(dir, 'zone.fifo')}\n}\n`);
    const started = Date.now();
    let out = '';
    try {
      execFileSync(process.execPath, [launcher, 'serve', '--conf', path.join(dir, 'Corefile.zone')], {
        encoding: 'utf8',
        timeout: 10_000,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (err) {
      out = String((err as { stderr?: string }).stderr);
    }
    expect(out).toContain(`Corefile.zone:3: file: `);
    expect(out).toContain('it is a FIFO');
    expect(Date.now() - started).toBeLessThan(8000);
  });

  describe('a hosts file that is a FIFO, and a watched Corefile replaced by one', () => {
    let server: RunningServer;
    const corefile = (): string => path.join(dir, 'Corefile.hosts');
    beforeAll(async () => {
      writeFileSync(
        corefile(),
        `example.org {\n    bind 127.0.0.1\n    reload 2s 1s\n    hosts ${path.join(dir, 'hosts.fifo')} {\n        10.0.0.1 a.example.org\n        reload 1s\n    }\n}\n`,
      );
      server = await startServer(['--conf', corefile()]);
    }, 20_000);
    afterAll(async () => server?.stop());

    it('serves the inline entries and keeps answering while the FIFO and the replaced Corefile are polled', async () => {
      const ask = async (): Promise<string | undefined> => {
        const reply = decode(await udpQuery(buildQuery({ name: 'a.example.org', type: T.A }), { port: server.port }, 1000));
        return (reply.answers?.[0] as { data?: string } | undefined)?.data;
      };
      expect(await ask()).toBe('10.0.0.1');
      // The reload plugin now finds a FIFO where its Corefile was.
      rmSync(corefile());
      execFileSync('mkfifo', [corefile()]);
      for (let i = 0; i < 6; i++) {
        await quietFor(500, 'the reload plugin (every 2 s) and hosts (every 1 s) to meet the FIFO between answers');
        expect(await ask()).toBe('10.0.0.1');
      }
      expect(server.proc.exitCode).toBeNull();
    }, 20_000);
  });
});
