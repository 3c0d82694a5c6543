#!/usr/bin/env node
// One JSON List in two layouts (compact JSON had loaded slower than pretty-printed, a cost
// that grew with the length of a line): bench/gen-list.js's 10,000 Services and 10,000
// EndpointSlices of 10 ready endpoints written pretty (`kubectl get -o json`, 4-space indents)
// and compact (`jq -c`, the whole List on one line). For each, in the same run and alternating:
//   - the in-process load (loadManifests, a fresh process per run): ms and µs per object;
//   - the server's start to first answer (`clusterdns serve --manifests LIST`, then one query).
// Prints the medians and the ratio compact / pretty of each (the target: <= 1 per object).
// Not part of `npm run bench` (about 40 s on 2 vCPUs): `npm run build && node bench/json-layout.js`.
//
// Options: --services N (10000) --endpoints N per service (10) --runs N (2) --no-serve
// --root DIR (the checkout whose dist/ and bin/ are measured, to compare two builds; default this
// one) --no-pin.
import { execFileSync } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { BENCH, ROOT, HOST, option, freePort, encodeQuery, startNode, serverReady, stop, median, stopChildrenOnSignals } from './lib.js';

// The pretty List is larger than the default 64 MiB file limit at 10k Services.
const MAX_FILE_BYTES = 1 << 30;

if (process.argv[2] === '--child') {
  const [, , , dist, input] = process.argv;
  const { loadManifests } = await import(pathToFileURL(path.join(dist, 'cluster/load.js')).href);
  const t0 = performance.now();
  const { model } = loadManifests([input], { podCIDRs: ['10.128.0.0/9', 'fd00:10:244::/56'], manifestLimits: { maxFileBytes: MAX_FILE_BYTES } });
  console.log(JSON.stringify({ loadMs: performance.now() - t0, objects: model.objectCount }));
  process.exit(0);
}

const SERVICES = option('--services', 10000, 1, 1000000);
const ENDPOINTS = option('--endpoints', 10, 0, 1000);
const RUNS = option('--runs', 2, 1, 10);
const SERVE = !process.argv.includes('--no-serve');
const rootAt = process.argv.indexOf('--root');
const root = rootAt >= 0 ? path.resolve(process.argv[rootAt + 1]) : ROOT;
const self = path.join(BENCH, 'json-layout.js');

/** One query until it is answered with records (the first load may still be running). */
async function firstAnswer(port, name, deadlineMs = 120000) {
  const q = encodeQuery(name, 'A', 0x4a4c);
  const end = performance.now() + deadlineMs;
  while (performance.now() < end) {
    const answers = await new Promise((resolve) => {
      const s = dgram.createSocket('udp4');
      const timer = setTimeout(() => {
        s.close();
        resolve(-1);
      }, 200);
      s.on('message', (m) => {
        clearTimeout(timer);
        s.close();
        resolve((m[3] & 15) === 0 ? m.readUInt16BE(6) : 0);
      });
      s.send(q, port, HOST);
    });
    if (answers > 0) return true;
    if (answers === 0) await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

function loadOnce(list) {
  const out = execFileSync(process.execPath, [self, '--child', path.join(root, 'dist'), list], { encoding: 'utf8', timeout: 300_000 });
  return JSON.parse(out.trim().split('\n').pop());
}

async function serveOnce(tmp, list, name) {
  const corefile = path.join(tmp, 'Corefile');
  const port = await freePort();
  const args = [
    path.join(root, 'bin', 'clusterdns.js'),
    'serve',
    '--conf',
    corefile,
    '--manifests',
    list,
    '--port',
    String(port),
    '--max-manifest-file-bytes',
    String(MAX_FILE_BYTES),
  ];
  const server = await startNode('clusterdns', args, serverReady);
  try {
    if (!(await firstAnswer(server.port, name))) throw new Error(`no answer for ${name}`);
    return performance.now() - server.startedAt;
  } finally {
    await stop(server.child);
  }
}

async function main() {
  stopChildrenOnSignals();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-json-layout-'));
  try {
    const layouts = ['pretty', 'compact'];
    const lists = {};
    let names;
    for (const layout of layouts) {
      lists[layout] = path.join(tmp, `${layout}.json`);
      const gen = JSON.parse(
        execFileSync(process.execPath, [path.join(BENCH, 'gen-list.js'), lists[layout], String(SERVICES), String(ENDPOINTS), `--${layout}`], {
          encoding: 'utf8',
        }),
      );
      console.log(`${layout}: ${(gen.bytes / 1048576).toFixed(1)} MiB`);
      names ??= JSON.parse(fs.readFileSync(`${lists[layout]}.names.json`, 'utf8'));
    }
    fs.writeFileSync(
      path.join(tmp, 'Corefile'),
      'cluster.local in-addr.arpa ip6.arpa {\n    bind 127.0.0.1\n    kubernetes cluster.local in-addr.arpa ip6.arpa {\n        pods insecure\n    }\n}\n',
    );
    const name = `${names.hits[names.hits.length - 1]}.svc.cluster.local`;
    const samples = Object.fromEntries(layouts.map((l) => [l, { loadMs: [], serveMs: [], objects: 0 }]));
    for (let r = 0; r < RUNS; r++) {
      for (const layout of r % 2 === 0 ? layouts : [...layouts].reverse()) {
        const s = samples[layout];
        const load = loadOnce(lists[layout]);
        s.loadMs.push(load.loadMs);
        s.objects = load.objects;
        if (SERVE) s.serveMs.push(await serveOnce(tmp, lists[layout], name));
      }
    }
    const result = { services: SERVICES, endpointsPerService: ENDPOINTS, runs: RUNS, root };
    for (const layout of layouts) {
      const s = samples[layout];
      const loadMs = median(s.loadMs);
      result[layout] = {
        bytes: fs.statSync(lists[layout]).size,
        objects: s.objects,
        loadMs: Math.round(loadMs),
        usPerObject: Math.round((loadMs * 1000) / s.objects),
        ...(SERVE ? { startToFirstAnswerMs: Math.round(median(s.serveMs)) } : {}),
      };
    }
    result.compactOverPretty = {
      load: Number((result.compact.loadMs / result.pretty.loadMs).toFixed(2)),
      ...(SERVE ? { startToFirstAnswer: Number((result.compact.startToFirstAnswerMs / result.pretty.startToFirstAnswerMs).toFixed(2)) } : {}),
    };
    for (const layout of layouts) {
      const x = result[layout];
      console.log(`${layout.padEnd(8)} load ${x.loadMs} ms (${x.usPerObject} µs/object)${SERVE ? `, start to first answer ${x.startToFirstAnswerMs} ms` : ''}`);
    }
    console.log(
      `compact / pretty: load ${result.compactOverPretty.load}${SERVE ? `, start to first answer ${result.compactOverPretty.startToFirstAnswer}` : ''}`,
    );
    console.log(JSON.stringify(result));
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
