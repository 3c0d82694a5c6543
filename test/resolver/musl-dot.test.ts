// musl 1.2.3 and a `.` search entry: it builds the candidate `name..` and sends it
// encoded its own way (__res_mkquery strips one trailing dot only), a packet no server can parse.
// `clusterdns resolve --libc musl` sends those same bytes and shows what the server did with them.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveCommand } from '../../src/cli/resolver-commands.js';
import { muslQuery } from '../../src/resolver/musl.js';
import { repoRoot } from '../helpers/server.js';
import { missingTools, skipOrFailInCI } from '../helpers/tools.js';

const dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-musl-dot-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const resolvConf = path.join(dir, 'resolv.conf');
writeFileSync(resolvConf, 'nameserver 127.0.0.1\nsearch . b.example\noptions timeout:1 attempts:1\n');

/** The message without its 2-byte ID (random in musl). */
const noId = (hex: string): string => hex.slice(4);

describe('musl 1.2.3: the query for a `.` search entry', () => {
  it('is encoded as musl encodes it: the label, then 0x2e where the terminating zero belongs', () => {
    // Captured from musl 1.2.3 (Debian's musl-tools) asking `web` with `search . b.example`.
    expect(noId(muslQuery('web..', 'A')!.toString('hex'))).toBe('01000001000000000000' + '03776562' + '2e' + '0001000100');
    // A well-formed name is the ordinary encoding.
    expect(noId(muslQuery('web.b.example.', 'AAAA')!.toString('hex'))).toBe(
      '01000001000000000000' + '03776562' + '0162' + '076578616d706c65' + '00' + '001c0001',
    );
  });

  it('resolve sends those bytes and reports what the server answered (FORMERR, ignored by musl)', async () => {
    const sink = { write: () => true } as unknown as NodeJS.WritableStream;
    const trace = await resolveCommand(
      'web',
      {
        resolvConf,
        libc: 'musl',
        type: 'A',
        conf: path.join(repoRoot, 'test/fixtures/resolver/Corefile'),
        manifests: [path.join(repoRoot, 'test/fixtures/resolver/manifests')],
        json: true,
      },
      sink,
      sink,
    );
    const first = trace.queries[0]!;
    expect(first.name).toBe('web..');
    expect(first.malformed).toBe(true);
    expect(first.wire && noId(first.wire)).toBe(noId(muslQuery('web..', 'A')!.toString('hex')));
    expect(first.rcode).toBe('FORMERR');
    // musl accepts only NOERROR and NXDOMAIN: the lookup waits out its timeout and stops there.
    expect(trace.result.error).toBe('EAI_AGAIN');
    expect(new Set(trace.queries.map((q) => q.name))).toEqual(new Set(['web..']));
  });

  const missing = process.getuid?.() !== 0 ? 'root (for unshare)' : missingTools('musl-gcc', 'unshare', 'ip');
  it.skipIf(skipOrFailInCI(missing, 'real musl'))('the bytes match what real musl sends', () => {
    const prog = path.join(dir, 'gai-musl');
    execFileSync('musl-gcc', ['-static', '-O1', '-o', prog, path.join(repoRoot, 'test/resolver/programs/gai.c')], { timeout: 60000 });
    // In a private network and mount namespace: a listener on 127.0.0.1:53 prints what it gets.
    // It says on a FIFO when it listens (the client starts then) and stops when its stdin,
    // another FIFO the shell holds open until the client is done, ends.
    const listener =
      "const s=require('dgram').createSocket('udp4');s.on('message',(m)=>console.log(m.toString('hex')));s.bind(53,'127.0.0.1',()=>require('fs').writeSync(3,'up\\n'));process.stdin.on('end',()=>s.close()).resume();";
    const fifos = mkdtempSync(path.join(dir, 'fifo-'));
    const out = execFileSync(
      'unshare',
      [
        '--mount',
        '--net',
        '--propagation',
        'private',
        '--',
        'sh',
        '-c',
        `ip link set lo up && mount --bind "$1" /etc/resolv.conf && mkfifo "$5/up" "$5/stop" && { "$2" -e "$3" <"$5/stop" 3>"$5/up" & } && exec 4>"$5/stop" && read _ <"$5/up" && "$4" -4 web; exec 4>&-; wait`,
        'sh',
        resolvConf,
        process.execPath,
        listener,
        prog,
        fifos,
      ],
      { timeout: 20000, encoding: 'utf8' },
    );
    const packets = out.split('\n').filter((l) => /^[0-9a-f]{20,}$/.test(l));
    expect(packets.length).toBeGreaterThan(0);
    expect(noId(packets[0]!)).toBe(noId(muslQuery('web..', 'A')!.toString('hex')));
    expect(out).toContain('EAI_AGAIN');
  });
});
