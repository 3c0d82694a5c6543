#!/usr/bin/env node
// etcd figures: a synthetic cluster of about 100k records through `clusterdns sync` into a real
// one-member etcd (time, etcd DB size), three replicas serving it with the etcd plugin (RSS),
// propagation latency of 1,000 edits to all three (p50/p99), and qps of one replica served
// from the mirror against the kubernetes plugin on the same manifests (dnsperf, loopback).
//
// Usage: npm run build && node bench/etcd.js [--services N] [--pods N] [--edits N] [--seconds N]
// Everything listens on 127.0.0.1; every process started here is stopped by PID at the end.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import dnsPacket from 'dns-packet';
import { Etcd3 } from 'etcd3';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.dirname(here);
const launcher = path.join(root, 'bin/clusterdns.js');

function option(name, fallback) {
  const i = process.argv.indexOf(name);
  if (i < 0) return fallback;
  const n = Number(process.argv[i + 1]);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name}: expected a positive whole number`);
  return n;
}
const SERVICES = option('--services', 6600);
const PODS = option('--pods', 33000);
const EDITS = option('--edits', 1000);
const SECONDS = Math.min(option('--seconds', 5), 30);

const procs = [];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-bench-etcd-'));

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function start(cmd, args, readyLine, timeoutMs = 120_000) {
  const proc = spawn(cmd, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  procs.push(proc);
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${cmd} not ready in ${timeoutMs} ms:\n${out.slice(-2000)}`)), timeoutMs);
    const onData = (b) => {
      out += b.toString();
      if (out.length > 1 << 20) out = out.slice(-65536);
      if (!readyLine || out.includes(readyLine)) {
        clearTimeout(timer);
        resolve(proc);
      }
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${cmd} exited (${code}):\n${out.slice(-2000)}`));
    });
    if (!readyLine) {
      clearTimeout(timer);
      resolve(proc);
    }
  });
}

function rssMiB(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

function query(sock, port, name) {
  return new Promise((resolve) => {
    const id = Math.floor(Math.random() * 65535);
    const timer = setTimeout(() => {
      sock.off('message', onMsg);
      resolve(undefined);
    }, 1000);
    const onMsg = (msg) => {
      const p = dnsPacket.decode(msg);
      if (p.id !== id) return;
      clearTimeout(timer);
      sock.off('message', onMsg);
      resolve(p.answers?.find((a) => a.type === 'A')?.data);
    };
    sock.on('message', onMsg);
    sock.send(dnsPacket.encode({ id, type: 'query', questions: [{ name, type: 'A', class: 'IN' }] }), port, '127.0.0.1');
  });
}

function dnsperf(port, file) {
  const r = spawnSync('dnsperf', ['-s', '127.0.0.1', '-p', String(port), '-d', file, '-l', String(SECONDS), '-c', '2', '-T', '1', '-q', '150'], {
    encoding: 'utf8',
    timeout: (SECONDS + 20) * 1000,
  });
  const qps = /Queries per second:\s+([\d.]+)/.exec(r.stdout ?? '');
  const lost = /Queries lost:\s+(\d+)/.exec(r.stdout ?? '');
  return { qps: qps ? Number(qps[1]) : NaN, lost: lost ? Number(lost[1]) : NaN };
}

const q = (xs, p) => xs[Math.min(xs.length - 1, Math.ceil(p * xs.length) - 1)];

async function main() {
  const figures = {};
  // The cluster and its record list.
  const manifests = path.join(tmp, 'manifests');
  execFileSync(process.execPath, [path.join(here, 'gen-cluster.js'), manifests, String(SERVICES), String(PODS)]);
  const corefile = path.join(here, 'Corefile');
  const listing = execFileSync(process.execPath, [launcher, 'records', '--conf', corefile, '--manifests', manifests], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const lines = listing.split('\n').filter((l) => l && !l.startsWith(';') && !l.startsWith('$'));
  figures.records = lines.length;
  const aNames = [
    ...new Set(
      lines
        .map((l) => l.split(/\s+/))
        .filter((f) => f[3] === 'A')
        .map((f) => f[0]),
    ),
  ];

  // etcd, one member.
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${clientPort}`;
  const dataDir = path.join(tmp, 'etcd');
  await start(
    'etcd',
    [
      '--data-dir',
      dataDir,
      '--listen-client-urls',
      url,
      '--advertise-client-urls',
      url,
      '--listen-peer-urls',
      `http://127.0.0.1:${peerPort}`,
      '--initial-advertise-peer-urls',
      `http://127.0.0.1:${peerPort}`,
      '--initial-cluster',
      `default=http://127.0.0.1:${peerPort}`,
      '--logger',
      'zap',
      '--log-level',
      'info',
    ],
    'serving client traffic',
  );

  // sync: time, transactions, DB size.
  let t0 = performance.now();
  const synced = spawnSync(process.execPath, [launcher, 'sync', '--etcd', url, '--conf', corefile, '--manifests', manifests], {
    encoding: 'utf8',
    timeout: 600_000,
    maxBuffer: 1 << 26,
  });
  figures.syncSeconds = (performance.now() - t0) / 1000;
  const result = JSON.parse(
    synced.stderr
      .trim()
      .split('\n')
      .filter((l) => l.includes('"sync: etcd'))
      .pop(),
  );
  Object.assign(figures, {
    syncKeys: result.records,
    syncTransactions: result.transactions,
    syncMode: result.mode,
    syncBuildSeconds: result.buildMs / 1000,
    syncEtcdSeconds: result.etcdMs / 1000,
  });
  t0 = performance.now();
  const again = spawnSync(process.execPath, [launcher, 'sync', '--etcd', url, '--conf', corefile, '--manifests', manifests], {
    encoding: 'utf8',
    timeout: 600_000,
    maxBuffer: 1 << 26,
  });
  figures.resyncSeconds = (performance.now() - t0) / 1000;
  const second = JSON.parse(
    again.stderr
      .trim()
      .split('\n')
      .filter((l) => l.includes('"sync: etcd'))
      .pop(),
  );
  figures.resyncMode = second.mode;
  figures.resyncEtcdSeconds = second.etcdMs / 1000;
  const client = new Etcd3({ hosts: url });
  const status = await client.maintenance.status();
  figures.etcdDbMiB = Number(status.dbSize) / 1048576;

  // Three replicas.
  const replicaConf = path.join(tmp, 'Corefile');
  fs.writeFileSync(replicaConf, `cluster.local in-addr.arpa ip6.arpa {\n    bind 127.0.0.1\n    etcd {\n        endpoint ${url}\n    }\n}\n`);
  const replicaPorts = [];
  const replicas = [];
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    t0 = performance.now();
    replicas.push(
      await start(process.execPath, [launcher, 'serve', '--conf', replicaConf, '--port', String(port), '--log-level', 'warn'], i === 0 ? undefined : undefined),
    );
    // Ready: the first sync answered.
    const sock = createSocket('udp4');
    for (;;) {
      if ((await query(sock, port, aNames[0])) !== undefined) break;
      if (performance.now() - t0 > 120_000) throw new Error('replica not serving within 120 s');
      await new Promise((r) => setTimeout(r, 50));
    }
    sock.close();
    if (i === 0) figures.replicaStartSeconds = (performance.now() - t0) / 1000;
    replicaPorts.push(port);
  }
  figures.replicaRssMiB = replicas.map((p) => rssMiB(p.pid));

  // Propagation of EDITS edits to all three replicas.
  const socks = replicaPorts.map(() => createSocket('udp4'));
  const lat = [];
  const key = '/skydns/local/cluster/svc/bench/edit';
  for (let i = 0; i < EDITS; i++) {
    const ip = `10.${200 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
    const t = performance.now();
    await client
      .put(key)
      .value(JSON.stringify({ host: ip }))
      .exec();
    await Promise.all(
      replicaPorts.map(async (port, j) => {
        while ((await query(socks[j], port, 'edit.bench.svc.cluster.local.')) !== ip) {
          if (performance.now() - t > 10_000) throw new Error(`edit ${i} not seen on ${port}`);
        }
        lat.push(performance.now() - t);
      }),
    );
  }
  for (const s of socks) s.close();
  lat.sort((a, b) => a - b);
  figures.propagationMs = { p50: q(lat, 0.5), p99: q(lat, 0.99), max: lat[lat.length - 1], samples: lat.length };

  // qps: a replica (mirror) against the kubernetes plugin on the same manifests.
  const qfile = path.join(tmp, 'queries.txt');
  const sample = [];
  for (let i = 0; i < 5000; i++) sample.push(`${aNames[(i * 7919) % aNames.length]} A`);
  fs.writeFileSync(qfile, sample.join('\n') + '\n');
  const k8sPort = await freePort();
  await start(process.execPath, [launcher, 'serve', '--conf', corefile, '--manifests', manifests, '--port', String(k8sPort)], 'clusterdns ready');
  figures.qpsMirror = dnsperf(replicaPorts[0], qfile);
  figures.qpsKubernetes = dnsperf(k8sPort, qfile);
  figures.qpsRatio = figures.qpsMirror.qps / figures.qpsKubernetes.qps;
  client.close();
  return figures;
}

async function stopAll() {
  for (const p of procs) {
    if (p.exitCode !== null || p.signalCode !== null) continue;
    await new Promise((resolve) => {
      const t = setTimeout(() => p.kill('SIGKILL'), 3000);
      p.once('exit', () => {
        clearTimeout(t);
        resolve();
      });
      p.kill('SIGTERM');
    });
  }
  fs.rmSync(tmp, { recursive: true, force: true });
}

main()
  .then(async (f) => {
    await stopAll();
    const r = (x, d = 1) => Number(x).toFixed(d);
    console.log(JSON.stringify(f));
    console.log(
      `records synced: ${f.records} (${f.syncKeys} keys) in ${r(f.syncSeconds)} s (building the records ${r(f.syncBuildSeconds)} s, etcd read + writes ${r(f.syncEtcdSeconds)} s), ${f.syncTransactions} transactions (${f.syncMode})`,
    );
    console.log(`second run: ${r(f.resyncSeconds)} s, nothing written (${f.resyncMode}; etcd read and diff ${r(f.resyncEtcdSeconds)} s)`);
    console.log(`etcd DB size: ${r(f.etcdDbMiB)} MiB`);
    console.log(`replica RSS: ${f.replicaRssMiB.map((x) => r(x)).join(' / ')} MiB (first replica serving after ${r(f.replicaStartSeconds)} s)`);
    console.log(
      `propagation of ${EDITS} edits to 3 replicas: p50 ${r(f.propagationMs.p50)} ms, p99 ${r(f.propagationMs.p99)} ms, max ${r(f.propagationMs.max)} ms`,
    );
    console.log(
      `qps, ${SECONDS} s dnsperf: mirror ${r(f.qpsMirror.qps, 0)} (lost ${f.qpsMirror.lost}), kubernetes ${r(f.qpsKubernetes.qps, 0)} (lost ${f.qpsKubernetes.lost}), ratio ${r(f.qpsRatio, 2)}`,
    );
  })
  .catch(async (err) => {
    await stopAll();
    console.error(err);
    process.exit(1);
  });
