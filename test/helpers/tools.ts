// The Debian tools the tests drive, and what a test does when one is missing: off CI it is
// skipped with a warning naming the package; under CI=true it fails, since .ci/run installs every
// one of them and a skip there would hide a broken CI machine.
import { describe, it } from 'vitest';
import { which } from './server.js';

export const inCI = process.env.CI === 'true';

/** The Debian package of each tool (as .ci/run installs them). */
const PACKAGE: Record<string, string> = {
  dig: 'bind9-dnsutils',
  etcd: 'etcd-server',
  etcdctl: 'etcd-client',
  openssl: 'openssl',
  nsd: 'nsd',
  'named-checkzone': 'bind9-utils',
  ss: 'iproute2',
  ip: 'iproute2',
  unshare: 'util-linux',
  nsenter: 'util-linux',
  mount: 'mount',
  getent: 'libc-bin',
  hostname: 'hostname',
  'musl-gcc': 'musl-tools',
  go: 'golang-go',
  mkfifo: 'coreutils',
  curl: 'curl',
  chromium: 'chromium',
};

/** `dig (Debian package bind9-dnsutils)`, the way a message names a missing tool. */
export function describeTool(name: string): string {
  const pkg = PACKAGE[name];
  return pkg ? `${name} (Debian package ${pkg})` : name;
}

const found = new Map<string, boolean>();
function installed(name: string): boolean {
  let has = found.get(name);
  if (has === undefined) found.set(name, (has = which(name) !== undefined));
  return has;
}

/** What is missing among `names` (each with its package), or undefined when all are installed. */
export function missingTools(...names: string[]): string | undefined {
  const missing = names.filter((n) => !installed(n)).map(describeTool);
  return missing.length > 0 ? missing.join(', ') : undefined;
}

/**
 * For `describe.skipIf(...)` and `it.skipIf(...)`: true (skip) when `missing` names something
 * `what` needs. Off CI that is a warning and a skip. Under CI=true it also registers, in the
 * suite where it is called, a test that fails with the reason, so the run fails and says which
 * package to install.
 */
export function skipOrFailInCI(missing: string | undefined, what: string): boolean {
  if (!missing) return false;
  if (inCI) {
    it(`${what}: what it needs is installed (CI=true)`, () => {
      throw new Error(`CI=true, but ${what} cannot run: missing ${missing}. Install it (.ci/run does, as root).`);
    });
  } else {
    console.warn(`skipped: ${what}: missing ${missing}`);
  }
  return true;
}

/** `describe(title, fn)` that needs `tools`: skipped without them, failing under CI=true. */
export function describeNeeding(tools: string[], title: string, fn: () => void): void {
  describe.skipIf(skipOrFailInCI(missingTools(...tools), title))(title, fn);
}
