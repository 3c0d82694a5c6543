// Test hosts in network namespaces this test creates: a "pod" and a "DNS server" joined by a
// veth pair, so a real libc can query the real server from a pod IP. Traffic never leaves them.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { which } from '../helpers/server.js';

export interface NetnsPair {
  server: string;
  pod: string;
  serverIp: string;
  podIp: string;
  destroy(): void;
}

/** Why namespaces cannot be used here, or undefined when they can. */
export function netnsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root: creating network and mount namespaces needs root';
  for (const tool of ['ip', 'unshare', 'getent']) if (!which(tool)) return `${tool} is not installed (Debian packages iproute2, util-linux, libc-bin)`;
  try {
    execFileSync('unshare', ['--mount', '--net', 'true'], { stdio: 'pipe' });
  } catch (err) {
    return `unshare --mount --net failed: ${(err as Error).message.split('\n')[0]}`;
  }
  return undefined;
}

const ip = (...args: string[]): void => {
  execFileSync('ip', args, { stdio: 'pipe' });
};

export function createPair(serverIp: string, podIp: string): NetnsPair {
  const tag = `${process.pid % 100000}${Math.floor(Math.random() * 1000)}`;
  const server = `cdns-s${tag}`;
  const pod = `cdns-p${tag}`;
  ip('netns', 'add', server);
  ip('netns', 'add', pod);
  try {
    ip('link', 'add', `vs${tag}`, 'netns', server, 'type', 'veth', 'peer', 'name', `vp${tag}`, 'netns', pod);
    ip('-n', server, 'addr', 'add', `${serverIp}/8`, 'dev', `vs${tag}`);
    ip('-n', pod, 'addr', 'add', `${podIp}/8`, 'dev', `vp${tag}`);
    // Global IPv6 addresses (without duplicate address detection) from the start: glibc's
    // AI_ADDRCONFIG only asks AAAA once the host has IPv6, and a link-local address that
    // appears a moment after the link comes up would make that depend on timing.
    ip('-n', server, '-6', 'addr', 'add', 'fd00:cd::1/64', 'dev', `vs${tag}`, 'nodad');
    ip('-n', pod, '-6', 'addr', 'add', 'fd00:cd::2/64', 'dev', `vp${tag}`, 'nodad');
    for (const [ns, dev] of [
      [server, `vs${tag}`],
      [pod, `vp${tag}`],
    ] as const) {
      ip('-n', ns, 'link', 'set', 'lo', 'up');
      ip('-n', ns, 'link', 'set', dev, 'up');
    }
  } catch (err) {
    ip('netns', 'del', server);
    ip('netns', 'del', pod);
    throw err;
  }
  return {
    server,
    pod,
    serverIp,
    podIp,
    destroy() {
      for (const ns of [server, pod]) {
        try {
          ip('netns', 'del', ns);
        } catch {
          // already gone
        }
      }
    },
  };
}

/** Runs a command in a namespace; the child is killed by PID by the caller. */
export function spawnIn(ns: string, cmd: string[], opts: { cwd?: string } = {}): ChildProcess {
  return spawn('ip', ['netns', 'exec', ns, ...cmd], { cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * Runs a shell script in the pod namespace inside a private mount namespace, with the given
 * files bind-mounted over /etc files, so the machine's own /etc is never touched.
 */
export function runInPod(pair: NetnsPair, mounts: Record<string, string>, script: string, timeoutMs = 20000): string {
  const binds = Object.entries(mounts)
    .map(([target, source]) => `mount --bind '${source}' '${target}'`)
    .join(' && ');
  return execFileSync('ip', ['netns', 'exec', pair.pod, 'unshare', '--mount', '--propagation', 'private', 'sh', '-c', `${binds} && ${script}`], {
    encoding: 'utf8',
    timeout: timeoutMs,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}
