#!/usr/bin/env node
// Multi-core figure: dnsperf against `serve --workers 1` and `serve --workers auto` in the same
// run, alternating, unpinned (the workers need every core; dnsperf shares them). Appends a
// section to bench/RESULTS.md. Loopback only; every run bounded by -l seconds.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const SECONDS = 10;
const ROUNDS = 3;
const HOST = '127.0.0.1';

function start(workers) {
  const child = spawn(
    process.execPath,
    [
      path.join(root, 'bin/clusterdns.js'),
      'serve',
      '--conf',
      path.join(here, 'Corefile'),
      '--manifests',
      path.join(root, 'examples/manifests'),
      '--port',
      '0',
      '--workers',
      workers,
    ],
    {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`--workers ${workers} not ready in 20 s`)), 20000);
    let buf = '';
    const need = workers === 'auto' ? os.availableParallelism() : Number(workers);
    let ready = 0;
    let port;
    child.stdout.on('data', (d) => {
      buf += d.toString();
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (!line.includes('"clusterdns ready"')) continue;
        port = JSON.parse(line).listeners[0].port;
        if (++ready === need) {
          clearTimeout(timer);
          resolve({ child, port, workers });
        }
      }
    });
    child.once('exit', (code) => reject(new Error(`--workers ${workers} exited with ${code}`)));
  });
}

function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    const t = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

function dnsperf(port) {
  const r = spawnSync(
    'dnsperf',
    ['-s', HOST, '-p', String(port), '-d', path.join(here, 'queries.txt'), '-l', String(SECONDS), '-c', '4', '-T', '2', '-q', '150', '-Q', '400000'],
    { encoding: 'utf8', timeout: (SECONDS + 15) * 1000 },
  );
  const qps = Number(/Queries per second:\s+([\d.]+)/.exec(r.stdout ?? '')?.[1] ?? NaN);
  const lost = Number(/Queries lost:\s+(\d+)/.exec(r.stdout ?? '')?.[1] ?? NaN);
  return { qps, lost };
}

const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const servers = [];
const runs = { 1: [], auto: [] };
try {
  servers.push(await start('1'), await start('auto'));
  for (let round = 1; round <= ROUNDS; round++) {
    for (const s of servers) {
      const r = dnsperf(s.port);
      runs[s.workers].push(r);
      console.log(`round ${round}/${ROUNDS} --workers ${s.workers}: ${r.qps.toFixed(0)} qps, lost ${r.lost}`);
    }
  }
} finally {
  for (const s of servers) await stop(s.child);
}
const one = median(runs[1].map((r) => r.qps));
const auto = median(runs.auto.map((r) => r.qps));
const section = [
  '<!-- workers:start -->',
  '## Multi-core (bench/workers.js)',
  '',
  `dnsperf -c 4 -T 2 -q 150 -l ${SECONDS}, unpinned, ${ROUNDS} alternating rounds; ${os.availableParallelism()} CPUs shared by dnsperf and the server.`,
  '',
  '| target | median qps | runs (qps) | lost |',
  '| --- | ---: | --- | ---: |',
  `| serve --workers 1 | ${one.toFixed(0)} | ${runs[1].map((r) => r.qps.toFixed(0)).join(', ')} | ${runs[1].reduce((n, r) => n + r.lost, 0)} |`,
  `| serve --workers auto (${os.availableParallelism()}) | ${auto.toFixed(0)} | ${runs.auto.map((r) => r.qps.toFixed(0)).join(', ')} | ${runs.auto.reduce((n, r) => n + r.lost, 0)} |`,
  '',
  `- ratio workers auto / workers 1: **${(auto / one).toFixed(3)}**`,
  '<!-- workers:end -->',
  '',
].join('\n');
const file = path.join(here, 'RESULTS.md');
const old = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '# clusterdns benchmark\n';
fs.writeFileSync(file, old.replace(/<!-- workers:start -->[\s\S]*<!-- workers:end -->\n?/, '').trimEnd() + '\n\n' + section);
console.log(`workers auto / workers 1 = ${(auto / one).toFixed(3)}; written to bench/RESULTS.md`);
