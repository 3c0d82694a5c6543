#!/usr/bin/env node
// Real-cluster scale, served: one `kubectl get -A -o json`-style List (bench/gen-list.js; default
// 10,000 Services and 10,000 EndpointSlices of 10 ready endpoints = 100,000 endpoints) served by
// the real server with `kubernetes cluster.local in-addr.arpa ip6.arpa { pods insecure }`, and
// measured against the bare Node UDP responder (bench/bare-responder.js) in the same run:
//   - start to first answer, RSS after loading, peak RSS over the whole run;
//   - hot path: dnsperf on 40 repeated names (answer cache hits);
//   - miss path: dnsperf on 50,000 distinct names (A hits, AAAA NODATA, ndots:5 search-walk
//     NXDOMAINs), with the default answer cache (32 MiB holds them all) and, on a second server,
//     with the answer cache off, so every query takes the whole miss path;
//   - reloads: a paced client at 2,000 qps (bench/paced-client.js) while the server gets 3
//     SIGHUPs, the manifest touched before each so the whole cluster loads again: queries lost,
//     p50/p99/max latency;
//   - `clusterdns records` on the same input: time and whether it completes.
// Writes a section of bench/RESULTS.md between the scale-serve markers.
//
// Options: --services N (10000) --endpoints N per service (10) --workers N (1) --seconds N per
// dnsperf run (10) --rounds N (2) --reload-qps N (2000) --no-pin.
// Everything stays on loopback; every load is bounded in time; children are stopped by PID.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  BENCH,
  ROOT,
  HOST,
  PIN,
  option,
  freePort,
  checkDnsperf,
  startNode,
  bareReady,
  serverReady,
  stop,
  children,
  measure,
  runLoad,
  median,
  fmt,
  clockTicks,
  machine,
  stopChildrenOnSignals,
  treeRss,
  udpAsk,
  writeQueryFiles,
} from './lib.js';

const SERVICES = option('--services', 10000, 1, 1000000);
const ENDPOINTS = option('--endpoints', 10, 0, 1000);
const WORKERS = option('--workers', 1, 1, 16);
const SECONDS = option('--seconds', 10, 1, 120);
const ROUNDS = option('--rounds', 2, 1, 10);
const RELOAD_QPS = option('--reload-qps', 2000, 1, 50000);
const RELOAD_SECONDS = 15;
const RELOAD_AT = [3, 7, 11];

const mib = (b) => (b / 1048576).toFixed(1);

async function main() {
  checkDnsperf();
  const clkTck = clockTicks();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-scale-serve-'));
  const result = { services: SERVICES, endpointsPerService: ENDPOINTS, workers: WORKERS };
  try {
    const list = path.join(tmp, 'cluster.json');
    const gen = JSON.parse(execFileSync(process.execPath, [path.join(BENCH, 'gen-list.js'), list, String(SERVICES), String(ENDPOINTS)], { encoding: 'utf8' }));
    result.manifestBytes = gen.bytes;
    result.endpoints = gen.endpoints;
    const names = JSON.parse(fs.readFileSync(`${list}.names.json`, 'utf8'));
    const files = writeQueryFiles(tmp, names);
    result.missDistinct = files.distinct;
    const corefile = path.join(tmp, 'Corefile');
    fs.writeFileSync(
      corefile,
      'cluster.local in-addr.arpa ip6.arpa {\n    bind 127.0.0.1\n    kubernetes cluster.local in-addr.arpa ip6.arpa {\n        pods insecure\n    }\n}\n',
    );
    // An empty Node process: the RSS floor every figure below includes.
    result.emptyNodeRss = Number(execFileSync(process.execPath, ['-e', 'console.log(process.resourceUsage().maxRSS * 1024)'], { encoding: 'utf8' }).trim());

    const base = await startNode('baseline', [path.join(BENCH, 'bare-responder.js'), '--address', HOST, '--port', '0'], bareReady);
    // A port free for UDP and TCP alike: with --port 0 the server's UDP pick may be taken on TCP.
    const serverArgs = [path.join(ROOT, 'bin', 'clusterdns.js'), 'serve', '--conf', corefile, '--manifests', list, '--port', String(await freePort())];
    if (WORKERS > 1) serverArgs.push('--workers', String(WORKERS));
    const server = await startNode('clusterdns', serverArgs, serverReady);
    const first = await udpAsk(server.port, `${names.hits[0]}.svc.cluster.local`);
    result.startToFirstAnswerMs = Math.round(performance.now() - server.startedAt);
    result.firstAnswer = first;
    // RSS once loaded: the loader thread is torn down just after the data is handed over, and with
    // --workers the others load after the first, one at a time; so after every worker is ready,
    // and a second more.
    const allReady = Date.now() + 60000;
    while (WORKERS > 1 && Date.now() < allReady && !server.tail.some((l) => l.includes('"all workers ready"'))) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 1000));
    const loaded = treeRss(server.child.pid);
    result.rssAfterLoad = loaded.now;
    console.log(`loaded: first answer after ${result.startToFirstAnswerMs} ms, RSS ${mib(loaded.now)} MiB (${JSON.stringify(first)})`);

    for (const [label, queries] of [
      ['hot', files.hot],
      ['miss', files.miss],
    ]) {
      const pairs = [];
      for (let round = 1; round <= ROUNDS; round++) {
        const b = await measure(base, SECONDS, queries, clkTck);
        const s = await measure(server, SECONDS, queries, clkTck);
        pairs.push({ base: b, server: s });
        console.log(
          `${label} round ${round}: bare ${fmt(b.qps, 0)} qps, clusterdns ${fmt(s.qps, 0)} qps (${fmt(s.cpuUsPerQuery, 1)} us CPU/query, lost ${s.lost}, ${s.rcodes})`,
        );
      }
      result[label] = {
        ratio: median(pairs.map((p) => p.server.qps / p.base.qps)),
        serverQps: median(pairs.map((p) => p.server.qps)),
        baseQps: median(pairs.map((p) => p.base.qps)),
        cpuUsPerQuery: median(pairs.map((p) => p.server.cpuUsPerQuery)),
        baseCpuUsPerQuery: median(pairs.map((p) => p.base.cpuUsPerQuery)),
        lost: Math.max(...pairs.map((p) => p.server.lost)),
        rcodes: pairs[0].server.rcodes,
      };
    }

    // Reloads under a steady load: SIGHUP to the primary (it forwards to workers).
    const before = treeRss(server.child.pid);
    // Each reload finds the manifest file touched, so it loads the whole cluster again (a
    // reload with unchanged files and configuration keeps the loaded data and costs nothing).
    const timers = RELOAD_AT.map((t) =>
      setTimeout(() => {
        const now = new Date();
        fs.utimesSync(list, now, now);
        server.child.kill('SIGHUP');
      }, t * 1000),
    );
    let peakDuringReload = 0;
    const sampler = setInterval(() => {
      try {
        peakDuringReload = Math.max(peakDuringReload, treeRss(server.child.pid).now);
      } catch {
        /* exited */
      }
    }, 100);
    const paced = await runLoad(
      process.execPath,
      [path.join(BENCH, 'paced-client.js'), String(server.port), String(RELOAD_QPS), String(RELOAD_SECONDS), files.miss],
      RELOAD_SECONDS + 30,
    );
    clearInterval(sampler);
    timers.forEach(clearTimeout);
    result.reload = {
      qps: RELOAD_QPS,
      reloads: RELOAD_AT.length,
      ...JSON.parse(paced.trim().split('\n').pop()),
      rssBefore: before.now,
      rssPeakDuring: peakDuringReload,
    };
    console.log(`reloads: ${JSON.stringify(result.reload)}`);
    result.peakRss = treeRss(server.child.pid).peak;
    result.peakRssPerProcess = treeRss(server.child.pid).each;
    await stop(server.child);

    // The miss path alone: the same names with the answer cache off, so every query walks
    // parse, route, lookup and encode (the 50k names above fit in the default 32 MiB cache).
    const uncachedArgs = [
      ...serverArgs.slice(0, serverArgs.indexOf('--port')),
      '--port',
      String(await freePort()),
      '--answer-cache-bytes',
      '0',
      ...(WORKERS > 1 ? ['--workers', String(WORKERS)] : []),
    ];
    const uncached = await startNode('clusterdns (no answer cache)', uncachedArgs, serverReady);
    await udpAsk(uncached.port, `${names.hits[0]}.svc.cluster.local`);
    const pairs = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const b = await measure(base, SECONDS, files.miss, clkTck);
      const s = await measure(uncached, SECONDS, files.miss, clkTck);
      pairs.push({ base: b, server: s });
      console.log(
        `uncached miss round ${round}: bare ${fmt(b.qps, 0)} qps, clusterdns ${fmt(s.qps, 0)} qps (${fmt(s.cpuUsPerQuery, 1)} us CPU/query, lost ${s.lost})`,
      );
    }
    result.uncached = {
      ratio: median(pairs.map((p) => p.server.qps / p.base.qps)),
      serverQps: median(pairs.map((p) => p.server.qps)),
      baseQps: median(pairs.map((p) => p.base.qps)),
      cpuUsPerQuery: median(pairs.map((p) => p.server.cpuUsPerQuery)),
      baseCpuUsPerQuery: median(pairs.map((p) => p.base.cpuUsPerQuery)),
    };
    for (const t of [uncached, base]) await stop(t.child);

    // `records` on the same input, bounded.
    const t0 = performance.now();
    const rec = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'clusterdns.js'), 'records', '--conf', corefile, '--manifests', list], {
      encoding: 'utf8',
      timeout: 120000,
      maxBuffer: 1 << 30,
    });
    result.records = {
      ms: Math.round(performance.now() - t0),
      status: rec.status,
      lines: rec.stdout ? rec.stdout.split('\n').length : 0,
      error: rec.status === 0 ? undefined : (rec.stderr || String(rec.error)).trim().split('\n').slice(-2).join(' '),
    };
    console.log(`records: ${JSON.stringify(result.records)}`);
  } finally {
    for (const c of children) await stop(c);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  console.log(JSON.stringify(result));
  writeSection(result);
}

function writeSection(r) {
  const objects = r.services + r.services + r.endpoints; // services + endpoint slices + endpoints
  const perObject = (bytes) => Math.round((bytes - r.emptyNodeRss * r.workers) / objects);
  const target = 54 * 1048576 + 1024 * objects;
  const m = machine();
  const section = [
    `<!-- scale-serve:${r.workers}:start -->`,
    `## Served at scale: ${r.services} Services, ${r.endpoints} endpoints${r.workers > 1 ? `, --workers ${r.workers}` : ''} (bench/scale-serve.js)`,
    '',
    `- date: ${new Date().toISOString()}; ${m.nproc} CPUs (${m.cpu}), Node ${m.node}; ${PIN ? `server${r.workers > 1 ? ' (all its processes)' : ''} on CPU 0, load on CPU 1` : 'not pinned'}`,
    `- input: one kubectl-style JSON List, ${mib(r.manifestBytes)} MiB (${r.services} Services, ${r.services} EndpointSlices, ${r.endpoints} ready endpoints, with annotations, owner references and status as \`kubectl get -o json\` prints them); Corefile \`kubernetes cluster.local in-addr.arpa ip6.arpa { pods insecure }\``,
    '',
    '| figure | value | target |',
    '| --- | ---: | --- |',
    `| start to first answer | ${r.startToFirstAnswerMs} ms | <= 2,000 ms |`,
    `| RSS once loaded (1 s after ${r.workers > 1 ? 'every worker is ready; all processes' : 'the first answer'}) | ${mib(r.rssAfterLoad)} MiB | |`,
    `| peak RSS over the run${r.workers > 1 ? ' (sum of processes)' : ''} | ${mib(r.peakRss)} MiB (${perObject(r.peakRss)} B per object above an empty Node's ${mib(r.emptyNodeRss)} MiB) | <= ${mib(target * r.workers)} MiB (54 MiB + 1 KB per object${r.workers > 1 ? ', per process' : ''}) |`,
    `| hot path (40 names, cached) | ${fmt(r.hot.ratio, 3)} of bare (${fmt(r.hot.serverQps, 0)} vs ${fmt(r.hot.baseQps, 0)} qps; ${fmt(r.hot.cpuUsPerQuery, 1)} vs ${fmt(r.hot.baseCpuUsPerQuery, 1)} us CPU/query) | >= 1.0 |`,
    `| miss path, answer cache off (every query parsed, routed, looked up, encoded) | ${fmt(r.uncached.ratio, 3)} of bare (${fmt(r.uncached.serverQps, 0)} vs ${fmt(r.uncached.baseQps, 0)} qps; ${fmt(r.uncached.cpuUsPerQuery, 1)} vs ${fmt(r.uncached.baseCpuUsPerQuery, 1)} us CPU/query) | >= 0.7 (stretch 0.9) |`,
    `| ${r.missDistinct} distinct names, default answer cache | ${fmt(r.miss.ratio, 3)} of bare (${fmt(r.miss.serverQps, 0)} vs ${fmt(r.miss.baseQps, 0)} qps; ${fmt(r.miss.cpuUsPerQuery, 1)} vs ${fmt(r.miss.baseCpuUsPerQuery, 1)} us CPU/query; ${r.miss.rcodes}) | (most are answer-cache hits after the first pass) |`,
    `| ${r.reload.reloads} SIGHUP reloads (manifest touched: full load each) at a steady ${r.reload.qps} qps | ${r.reload.lost} of ${r.reload.sent} lost; p50 ${r.reload.p50ms} ms, p99 ${r.reload.p99ms} ms, max ${r.reload.maxms} ms | 0 lost, p99 < 5 ms, max < 50 ms |`,
    `| RSS during reloads | ${mib(r.reload.rssPeakDuring)} MiB peak vs ${mib(r.reload.rssBefore)} MiB before | < 2x steady state |`,
    `| \`clusterdns records\` | ${r.records.status === 0 ? `${r.records.ms} ms, ${r.records.lines} lines` : `failed after ${r.records.ms} ms: ${r.records.error}`} | <= 10,000 ms |`,
    `<!-- scale-serve:${r.workers}:end -->`,
    '',
  ].join('\n');
  const results = path.join(BENCH, 'RESULTS.md');
  const old = fs.existsSync(results) ? fs.readFileSync(results, 'utf8') : '# clusterdns benchmark\n\n';
  const re = new RegExp(`<!-- scale-serve:${r.workers}:start -->[\\s\\S]*<!-- scale-serve:${r.workers}:end -->\\n?`);
  fs.writeFileSync(results, old.replace(re, '').trimEnd() + '\n\n' + section);
  console.log(`scale-serve section written to ${results}`);
}

stopChildrenOnSignals();
main().catch((err) => {
  console.error(`bench: ${err instanceof Error ? err.stack : String(err)}`);
  process.exitCode = 1;
});
