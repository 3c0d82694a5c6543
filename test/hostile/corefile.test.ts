// Hostile Corefiles (issues #9 and #11): files that never end or block, imports that explode,
// unset variables, errors that would echo a file's contents, and Corefiles with many mistakes.
// The CLI cases run the real `clusterdns` process with a timeout, since a hang is the bug.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawnSync, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { launcher, repoRoot } from '../helpers/server.js';
import { setupBlock } from '../helpers/setup.js';
import { type CorefileError, CorefileErrors, corefileErrors, loadCorefile, parseCorefile } from '../../src/chain/corefile.js';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-hostile-corefile-'));
});
afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Runs a one-shot command; the timeout kills it (by its own PID) when it hangs. */
function run(
  args: string[],
  timeout = 8000,
  env: NodeJS.ProcessEnv = {},
): { code: number | null; out: string; err: string; ms: number; signal: NodeJS.Signals | null } {
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [launcher, ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
    timeout,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, ...env },
  });
  return { code: r.status, out: r.stdout, err: r.stderr, ms: Date.now() - t0, signal: r.signal };
}

function write(name: string, text: string): string {
  const p = path.join(dir, name);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, text);
  return p;
}

/** Every error a parse throws (one CorefileError or a CorefileErrors). */
function errorsOf(fn: () => unknown): CorefileError[] {
  try {
    fn();
  } catch (e) {
    const found = corefileErrors(e);
    if (!found) throw e;
    return [...found];
  }
  throw new Error('expected Corefile errors');
}

describe('item 1: a Corefile or import that is not a regular file', () => {
  it('an import of a FIFO fails at once naming the file, instead of hanging', () => {
    const fifo = path.join(dir, 'fifo.conf');
    execFileSync('mkfifo', [fifo]);
    const conf = write('fifo.Corefile', '. {\n  import fifo.conf\n}\n');
    const r = run(['check', '--conf', conf]);
    expect(r.signal).toBeNull();
    expect(r.out).toContain(`${conf}:2: error: could not import ${fifo}: it is a FIFO; a Corefile and its imports must be regular files`);
    expect(r.code).toBe(1);
  });

  it('--conf naming a FIFO fails at once', () => {
    const fifo = path.join(dir, 'conf.fifo');
    execFileSync('mkfifo', [fifo]);
    const r = run(['check', '--conf', fifo]);
    expect(r.signal).toBeNull();
    // A --conf that cannot be read is a command line that cannot run: exit 2, as eslint.
    expect(r.err).toContain(`clusterdns check: --conf ${fifo}: cannot read Corefile: it is a FIFO`);
    expect(r.code).toBe(2);
  });

  it('an import of /dev/zero fails at once instead of reading gigabytes', () => {
    const conf = write('zero.Corefile', '. {\n  import /dev/zero\n}\n');
    const r = run(['check', '--conf', conf]);
    expect(r.signal).toBeNull();
    expect(r.out).toContain(`${conf}:2: error: could not import /dev/zero: it is a character device`);
    expect(r.ms).toBeLessThan(5000);
  });

  it('a file over the size cap is refused with the limit and its flag; the flag raises it', () => {
    const big = write('big/huge.conf', `${'# padding\n'.repeat(120_000)}log\n`); // ~1.2 MB
    const conf = write('big/Corefile', '. {\n  import huge.conf\n}\n');
    const r = run(['check', '--conf', conf]);
    expect(r.out).toContain(`${conf}:2: error: could not import ${big}: it is 1200004 bytes, more than the limit of 1048576 (--max-corefile-bytes)`);
    const raised = run(['check', '--conf', conf, '--max-corefile-bytes', '2000000']);
    expect(raised.out).toContain('0 error(s)');
  });
});

describe('item 2: huge imports, unset variables, import depth and count', () => {
  it('an imported file of 100k lines gives file:line errors, not a stack overflow', () => {
    const conf = write('lines/Corefile', '. {\n  import many.conf\n}\n');
    write('lines/many.conf', 'cache 30\n'.repeat(100_000));
    // Parses (200k tokens) without throwing RangeError; the block is just 100k cache lines.
    const blocks = loadCorefile(conf, { env: {} });
    expect(blocks[0]!.directives).toHaveLength(100_000);
    expect(blocks[0]!.directives[99_999]!.line).toBe(100_000);
    // The CLI reports the duplicates with file and line, and stops at the error cap.
    const r = run(['check', '--conf', conf]);
    expect(r.out).toContain(`${path.join(dir, 'lines/many.conf')}:2: error: plugin "cache" appears twice in this server block (first at line 1)`);
    expect(r.out).toContain('stopped after 100 errors (--max-corefile-errors)');
    expect(r.out).not.toContain('Maximum call stack');
  });

  it('100k nested blocks give an error at the first level too deep, not a stack overflow', () => {
    const n = 100_000;
    const conf = write('nest/Corefile', `. {\n${'a {\n'.repeat(n)}${'}\n'.repeat(n)}}\n`);
    const r = run(['check', '--conf', conf]);
    expect(r.out).toContain(`${conf}:17: error: blocks nest more than 16 deep (--max-corefile-nesting)`);
    expect(r.err + r.out).not.toContain('Maximum call stack');
  });

  it('bounds the zones CIDR keys and zone arguments expand to (10.x.y.0/25 is 128 zones each)', async () => {
    const cidrs = Array.from({ length: 2000 }, (_, i) => `10.${i >> 8}.${i & 255}.0/25`);
    // 256,000 zones: gigabytes and minutes before the cap, an error at once with it.
    const keys = errorsOf(() => parseCorefile(`${cidrs.join(',')} {\n}\n`, 'Corefile', { env: {} }));
    expect(keys.map((e) => e.message)).toEqual([
      'Corefile:1: more than 10000 server block zones (--max-corefile-zones); a CIDR key off an octet boundary counts every zone it is split into',
    ]);
    const r = await setupBlock(`hosts /etc/hosts ${cidrs.join(' ')}`);
    expect(r.errors).toEqual(['2: hosts: more than 10000 zones (--max-corefile-zones)']);
  });

  it('bounds listen address and port pairs (each is two sockets)', async () => {
    const keys = Array.from({ length: 300 }, (_, i) => `example.org:${20000 + i}`).join(',');
    const r = await setupBlock('bind 127.0.0.1 127.0.0.2', { key: keys });
    expect(r.errors).toEqual(['1: more than 256 listen addresses and ports (--max-corefile-listeners); use fewer ports or bind addresses']);
  });

  it('an unset variable is an error with file:line and its name, also inside a kubernetes block', () => {
    const conf = write('unset/Corefile', '. {\n  kubernetes cluster.local {\n    manifests {$CLUSTERDNS_TEST_UNSET}\n  }\n}\n');
    const r = run(['check', '--conf', conf]);
    expect(r.out).toContain(`${conf}:3: error: environment variable CLUSTERDNS_TEST_UNSET is not set (used in '{$CLUSTERDNS_TEST_UNSET}')`);
    expect(r.out).not.toMatch(/^:0:/m);
  });

  it('an unset variable in a server key is an error, not the root zone', () => {
    const errors = errorsOf(() => parseCorefile('{$ZONE}:1053 {\n  log\n}\n', 'Corefile', { env: {} }));
    expect(errors.map((e) => e.message)).toEqual([
      "Corefile:1: environment variable ZONE is not set (used in '{$ZONE}:1053'); set it, or write the value instead",
    ]);
  });

  it('an argument that a variable set to empty empties is an error', () => {
    const errors = errorsOf(() => parseCorefile('. {\n  forward . {$UP}\n}\n', 'Corefile', { env: { UP: '' } }));
    expect(errors[0]!.message).toBe("Corefile:2: '{$UP}' is empty once environment variables are substituted; give the variable a value");
  });

  it('bounds import depth', () => {
    for (let i = 0; i < 12; i++) write(`deep/f${i}.conf`, i < 11 ? `import f${i + 1}.conf\n` : 'log\n');
    const conf = write('deep/Corefile', '. {\n  import f0.conf\n}\n');
    const errors = errorsOf(() => loadCorefile(conf, { env: {} }));
    expect(errors).toHaveLength(1);
    expect(errors[0]!.file).toBe(path.join(dir, 'deep/f9.conf'));
    expect(errors[0]!.reason).toMatch(/^imports nest more than 10 deep \(--max-corefile-import-depth\)/);
    expect(loadCorefile(conf, { env: {}, limits: { maxImportDepth: 20 } })[0]!.directives).toHaveLength(1);
  });

  it('bounds the files a glob imports', () => {
    for (let i = 0; i < 30; i++) write(`glob/d/${String(i).padStart(2, '0')}.conf`, '');
    const conf = write('glob/Corefile', '. {\n  import d/*.conf\n}\n');
    const errors = errorsOf(() => loadCorefile(conf, { env: {}, limits: { maxImports: 20 } }));
    expect(errors.map((e) => e.message)).toEqual([`${conf}:2: more than 20 files imported (--max-corefile-imports); import fewer files`]);
    expect(loadCorefile(conf, { env: {} })).toHaveLength(1);
  });

  it('bounds the tokens a snippet fan-out expands to', () => {
    // 500 snippet imports of 2,500 tokens: 1.25 million tokens, under the 1000-import cap.
    const text = `(big) {\n${'  log a b c d\n'.repeat(500)}}\n. {\n${'  import big\n'.repeat(500)}}\n`;
    const errors = errorsOf(() => parseCorefile(text, 'Corefile', { env: {} }));
    expect(errors.map((e) => e.message)).toEqual([
      expect.stringMatching(/^Corefile:\d+: more than 1000000 tokens after expanding imports \(--max-corefile-tokens\)/),
    ]);
  });
});

describe('item 3: errors echo at most a short excerpt', () => {
  it('import /etc/passwd does not echo its first line', () => {
    const conf = write('passwd.Corefile', '. {\n  import /etc/passwd\n}\n');
    const first = fs.readFileSync('/etc/passwd', 'utf8').split('\n')[0]!;
    const r = run(['check', '--conf', conf]);
    expect(r.code).toBe(1);
    expect(r.out).toContain('/etc/passwd:1: error: this line does not start with a plugin name; is this file a Corefile?');
    expect(r.out).not.toContain(first.split(':')[0] + ':x:');
    // One error for the file, not one per line.
    expect(r.out).toContain('1 error(s)');
  });

  it('import /etc/passwd outside a block does not echo its lines either', () => {
    const conf = write('passwd-top.Corefile', 'import /etc/passwd\n');
    const lines = fs
      .readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .filter((l) => l.includes(':'));
    const r = run(['check', '--conf', conf]);
    expect(r.code).toBe(1);
    for (const l of lines.slice(0, 3)) expect(r.out).not.toContain(l.split(':').slice(0, 2).join(':'));
  });

  it('a word-like secret in an imported file is not quoted back', () => {
    const secret = write('secret.txt', 'dXNlcjpodW50ZXIyc2VjcmV0\n');
    const conf = write('secret.Corefile', `. {\n  import ${secret}\n}\n`);
    const r = run(['check', '--conf', conf]);
    expect(r.out).toContain(`${secret}:1: error: this line does not start with a plugin CoreDNS knows (an imported file's text is not quoted back)`);
    expect(r.out).not.toContain('dXNlcjpodW50ZXIy');
  });

  it('a huge token is cut to 40 characters and "..."', () => {
    const huge = 'x'.repeat(300_000); // three of them stay under the 1 MiB file cap
    const conf = write('huge.Corefile', `. {\n  ${huge}\n  errors ${huge}\n}\n${huge}.example:1053 {\n}\n`);
    const r = run(['check', '--conf', conf]);
    expect(r.code).toBe(1);
    const lines = r.out.trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const line of lines) expect(line.length).toBeLessThan(400);
    expect(r.out).toContain(`${conf}:2: error: this line does not start with a plugin name`);
    expect(r.out).toContain(`${conf}:3: error: errors: invalid log file "${'x'.repeat(40)}..."`);
    expect(r.out).toContain(`${conf}:5: error: zone in key '${'x'.repeat(40)}...'`);
  });
});

describe('item 4: every mistake of a Corefile in one run, in line order', () => {
  it('reports errors across directives and server blocks, sorted by line', () => {
    const conf = write(
      'many.Corefile',
      [
        '. {', // 1
        '  loop extra', // 2: loop takes no arguments
        '  errors bogus', // 3: bad errors argument
        '  frobnicate', // 4: unknown plugin
        '  log {', // 5
        '    nosuchoption', // 6: unknown log option
        '  }', // 7
        '}', // 8
        'example.org:99999 {', // 9: bad port
        '  cache abc -1', // 10
        '}', // 11
        'example.net {', // 12
        '  reload 1ms', // 13: too short
        '}', // 14
      ].join('\n') + '\n',
    );
    const r = run(['check', '--conf', conf]);
    const lines = r.out
      .split('\n')
      .filter((l) => l.includes(': error: '))
      .map((l) => Number(l.slice(conf.length + 1).split(':')[0]));
    expect(lines).toEqual([2, 3, 4, 6, 9, 13]);
    expect(r.out).toContain('6 error(s)');
  });

  it('the same list is thrown at once by the parser for parse-time mistakes', () => {
    const errors = errorsOf(() => parseCorefile('a..b {\n}\n{$NOPE} {\n}\nc:x {\n}\n', 'Corefile', { env: {} }));
    expect(errors.map((e) => e.line)).toEqual([1, 3, 5]);
    expect(() => parseCorefile('a..b {\n}\nc:x {\n}\n', 'Corefile', { env: {} })).toThrow(CorefileErrors);
  });

  it('reports every bad option line of a plugin block, not only the first', async () => {
    const r = await setupBlock('cache 30 {\n  success x\n  prefetch -1\n  nosuch\n}\nforward . 127.0.0.1 {\n  policy bogus\n  max_fails x\n}');
    expect(r.errors).toEqual([
      '3: cache success: CAPACITY "x" is not an integer',
      '4: cache prefetch: AMOUNT must be at least 0: -1',
      '5: unknown cache option "nosuch"; valid options: success, denial, prefetch, serve_stale, servfail, disable, keepttl',
      '8: forward policy: policy "bogus" is not one of random, round_robin or sequential',
      '9: forward max_fails: value "x" is not an integer',
    ]);
  });

  it('serve prints every error and does not start', () => {
    const conf = write('serve-many.Corefile', '. {\n  loop extra\n  errors bogus\n}\n');
    const r = run(['serve', '--conf', conf, '--port', '0']);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`${conf}:2: loop`);
    expect(r.err).toContain(`${conf}:3: errors`);
  });
});

describe('item 5: one-shot commands do not warn about reload', () => {
  it('records with the built-in Corefile prints no "reload has no Corefile to watch"', () => {
    const r = run(['records', '--manifests', 'examples/manifests'], 20000, { CLUSTERDNS_UPSTREAM_RESOLV_CONF: 'test/fixtures/no-upstream.resolv.conf' });
    expect(r.code).toBe(0);
    expect(r.out).toContain('$ORIGIN cluster.local.');
    expect(r.err).not.toContain('reload has no Corefile to watch');
  });

  it('check with the built-in Corefile prints no reload warning either', () => {
    const r = run(['check', '--manifests', 'examples/manifests', '--log-level', 'info'], 20000, {
      CLUSTERDNS_UPSTREAM_RESOLV_CONF: 'test/fixtures/no-upstream.resolv.conf',
    });
    expect(r.err + r.out).not.toContain('reload has no Corefile to watch');
  });

  it('a one-shot command still rejects bad reload arguments', () => {
    const conf = write('reload-bad.Corefile', '. {\n  reload 1ms\n}\n');
    const r = run(['check', '--conf', conf]);
    expect(r.out).toContain(`${conf}:2: error: reload: interval "1ms" must be`);
  });
});
