#!/usr/bin/env node
// How soon a new Service answers at real-cluster size (the target: <= 0.5 s after
// its file lands, under a steady 2,000 qps with 0 lost, p99 < 5 ms, max < 50 ms).
// The server serves a large tree; a paced client (bench/paced-client.js) asks 2,000 queries a
// second for 15 s; at 3, 7 and 11 s a new Service's file is written beside the tree (written to a
// temporary name and renamed, as a GitOps sync or `kubectl` would publish it) and, with
// --mode sighup, the server gets SIGHUP; from that moment the new name is asked every 10 ms until
// it answers. Prints each latency, the paced client's figures and the RSS before and at peak.
// Trees: --tree list (default): one `kubectl get -o json` List of --services Services and
// EndpointSlices of 10 ready endpoints each (bench/gen-list.js; --compact writes it on one line);
// --tree workload: Deployments and StatefulSets deriving 10 pods per Service (bench/gen-cluster.js).
// Usage: node bench/new-service.js [--tree list|workload] [--compact] [--mode sighup|watch]
//          [--services N] [--qps N] [--no-pin]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  BENCH,
  ROOT,
  option,
  freePort,
  startNode,
  serverReady,
  stop,
  runLoad,
  stopChildrenOnSignals,
  treeRss,
  udpAsk,
  writeQueryFiles,
  median,
} from './lib.js';

const SERVICES = option('--services', 10000, 1, 1000000);
const QPS = option('--qps', 2000, 1, 50000);
const argv = process.argv.slice(2);
const flagValue = (name, fallback) => {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] ? argv[i + 1] : fallback;
};
const TREE = flagValue('--tree', 'list');
const MODE = flagValue('--mode', 'sighup');
const COMPACT = argv.includes('--compact');
const SECONDS = 15;
const ADD_AT = [3, 7, 11];
const GIVE_UP_MS = 3000;
const mib = (b) => (b / 1048576).toFixed(1);

async function main() {
  stopChildrenOnSignals();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-new-service-'));
  const dir = path.join(tmp, 'manifests');
  fs.mkdirSync(dir);
  let server;
  try {
    let names;
    if (TREE === 'workload') {
      execFileSync(process.execPath, [path.join(BENCH, 'gen-cluster.js'), dir, String(SERVICES), String(SERVICES * 10)]);
      // gen-cluster's Services: app-S in namespace team-(S mod namespaces); the shape gen-list's names file has.
      names = { hits: Array.from({ length: Math.min(SERVICES, 5000) }, (_, s) => `app-${s}.team-${s % Math.max(1, Math.round(SERVICES / 50))}`) };
    } else {
      const list = path.join(dir, 'cluster.json');
      execFileSync(process.execPath, [path.join(BENCH, 'gen-list.js'), list, String(SERVICES), '10', ...(COMPACT ? ['--compact'] : [])]);
      names = JSON.parse(fs.readFileSync(`${list}.names.json`, 'utf8'));
      fs.renameSync(`${list}.names.json`, path.join(tmp, 'names.json'));
    }
    // A tree written just now would be hashed as well as stat'ed (a file changed within 2 s of its
    // read may change again unseen within the same modification time): back-date it, as a
    // checkout that has been there a while.
    const past = new Date(Date.now() - 60_000);
    for (const f of fs.readdirSync(dir)) fs.utimesSync(path.join(dir, f), past, past);
    const files = writeQueryFiles(tmp, names);
    const conf = path.join(tmp, 'Corefile');
    // watch: 500 ms polls in watch mode; in SIGHUP mode the watch is off, so only the signal loads.
    fs.writeFileSync(
      conf,
      `cluster.local in-addr.arpa ip6.arpa {\n    bind 127.0.0.1\n    kubernetes {\n        pods insecure\n        watch ${MODE === 'watch' ? '500ms' : '0s'}\n    }\n}\n`,
    );
    const port = await freePort();
    server = await startNode(
      'clusterdns',
      [
        path.join(ROOT, 'bin/clusterdns.js'),
        'serve',
        '--conf',
        conf,
        '--manifests',
        dir,
        '--port',
        String(port),
        ...(TREE === 'workload' ? ['--pod-cidr', '10.128.0.0/9'] : []),
      ],
      serverReady,
    );
    const startMs = server.readyAt - server.startedAt;
    const before = treeRss(server.child.pid);
    let peak = before.now;
    const sampler = setInterval(() => {
      try {
        peak = Math.max(peak, treeRss(server.child.pid).now);
      } catch {
        /* exited */
      }
    }, 100);
    const latencies = [];
    const adds = ADD_AT.map(
      (t, i) =>
        new Promise((resolve) =>
          setTimeout(async () => {
            const name = `zz-new-${i}`;
            const file = path.join(dir, `${name}.yaml`);
            fs.writeFileSync(
              `${file}.tmp`,
              `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n  selector:\n    app: ${name}\n  ports:\n  - port: 80\n`,
            );
            // Hidden and not *.yaml until renamed: the server never sees it half-written.
            fs.renameSync(`${file}.tmp`, file);
            const landed = performance.now();
            if (MODE === 'sighup') server.child.kill('SIGHUP');
            for (;;) {
              const r = await udpAsk(server.port, `${name}.default.svc.cluster.local`, 200);
              const ms = performance.now() - landed;
              if (r && r.rcode === 0 && r.answers > 0) {
                latencies.push(ms);
                break;
              }
              if (ms > GIVE_UP_MS) {
                latencies.push(Infinity);
                break;
              }
              await new Promise((r2) => setTimeout(r2, 10));
            }
            resolve();
          }, t * 1000),
        ),
    );
    const paced = await runLoad(
      process.execPath,
      [path.join(BENCH, 'paced-client.js'), String(server.port), String(QPS), String(SECONDS), files.miss],
      SECONDS + 30,
    );
    await Promise.all(adds);
    clearInterval(sampler);
    const load = JSON.parse(paced.trim().split('\n').pop());
    const result = {
      tree: TREE,
      compact: COMPACT,
      mode: MODE,
      services: SERVICES,
      startMs: Math.round(startMs),
      newServiceMs: latencies.map((x) => (Number.isFinite(x) ? Math.round(x) : 'none')),
      medianMs: Math.round(median(latencies)),
      load: { qps: QPS, sent: load.sent, lost: load.lost, p50ms: load.p50ms, p99ms: load.p99ms, maxms: load.maxms },
      rssMiB: { before: mib(before.now), peak: mib(peak) },
    };
    console.log(JSON.stringify(result));
  } finally {
    if (server) await stop(server.child);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
