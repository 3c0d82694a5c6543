// `clusterdns ui` as a command: the built launcher serves the page on the --listen address and
// exits 0 on SIGTERM.
import { spawn } from 'node:child_process';
import { expect, it } from 'vitest';
import { freePort, launcher, onLines, repoRoot, stopProcess } from '../helpers/server.js';

it('clusterdns ui serves the page on --listen and stops on SIGTERM', async () => {
  const port = await freePort();
  const proc = spawn(process.execPath, [launcher, 'ui', '--conf', 'examples/Corefile', '--manifests', 'examples/manifests', '--listen', `127.0.0.1:${port}`], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      onLines(proc.stderr!, (line) => {
        lines.push(line);
        if (line.includes(`clusterdns ui: open http://127.0.0.1:${port}/`)) resolve();
      });
      proc.once('exit', (code) => reject(new Error(`exited ${code} before serving:\n${lines.join('\n')}`)));
    });
    const res = await fetch(`http://127.0.0.1:${port}/api/pods`);
    expect(res.status).toBe(200);
    const pods = (await res.json()) as { pods: { namespace: string; name: string }[] };
    expect(pods.pods.map((p) => `${p.namespace}/${p.name}`)).toContain('apps/web-0');
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    proc.kill('SIGTERM');
    expect(await exited).toBe(0);
  } finally {
    await stopProcess(proc);
  }
});
