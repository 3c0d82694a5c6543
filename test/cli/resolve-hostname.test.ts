// `clusterdns resolve --resolv-conf FILE` without --pod emulates this machine: a resolv.conf with
// no search or domain line gets glibc's and Go's default search domain from gethostname(), the
// part after its first dot, as res_init does.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { launcher, repoRoot } from '../helpers/server.js';
import { missingTools, skipOrFailInCI } from '../helpers/tools.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'clusterdns-hostname-'));
const resolvConf = path.join(dir, 'resolv.conf');
writeFileSync(resolvConf, 'nameserver 127.0.0.1\noptions ndots:1\n');

const args = (libc: string, ...extra: string[]): string[] => [
  launcher,
  'resolve',
  'web',
  '--json',
  '--libc',
  libc,
  '--resolv-conf',
  resolvConf,
  '--conf',
  'examples/Corefile',
  '--manifests',
  'examples/manifests',
  ...extra,
];

/** The names the lookup asked, in order. */
function asked(argv: string[], prefix: string[] = []): string[] {
  const [cmd, ...rest] = prefix.length > 0 ? [...prefix, process.execPath, ...argv] : [process.execPath, ...argv];
  const r = spawnSync(cmd!, rest, { cwd: repoRoot, encoding: 'utf8', timeout: 30000 });
  if (r.stdout === '') throw new Error(`no output: ${r.stderr}`);
  const trace = JSON.parse(r.stdout) as { queries: { name: string }[] };
  return [...new Set(trace.queries.map((q) => q.name))];
}

/** What glibc searches for `web` with ndots:1 and the search domain of `hostname`. */
function expected(hostname: string): string[] {
  const dot = hostname.indexOf('.');
  const domain = dot >= 0 && dot < hostname.length - 1 ? hostname.slice(dot + 1) : undefined;
  return domain ? [`web.${domain}.`, 'web.'] : ['web.'];
}

describe('resolve --resolv-conf without a search line: the search domain of this machine', () => {
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('takes os.hostname() when no --hostname is given', () => {
    expect(asked(args('glibc'))).toEqual(expected(os.hostname()));
  });

  it('--hostname still wins', () => {
    expect(asked(args('glibc', '--hostname', 'a.b.example'))).toEqual(['web.b.example.', 'web.']);
  });

  const missing = missingTools('unshare');
  describe.skipIf(skipOrFailInCI(missing, 'a run under another hostname (unshare --uts)'))('on a machine named ci.corp.example.com', () => {
    // A UTS namespace of its own gives the run a hostname with a domain, whatever this machine's is.
    const prefix = ['unshare', '--user', '--map-root-user', '--uts', 'sh', '-c', 'hostname ci.corp.example.com && exec "$@"', 'sh'];

    it('glibc and Go search corp.example.com; musl, which has no such default, does not', () => {
      expect(asked(args('glibc'), prefix)).toEqual(['web.corp.example.com.', 'web.']);
      expect(asked(args('go'), prefix)[0]).toBe('web.corp.example.com.');
      expect(asked(args('musl'), prefix)).toEqual(['web.']);
    });
  });
});
