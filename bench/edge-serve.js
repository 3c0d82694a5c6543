#!/usr/bin/env node
// k8s_gateway served at scale (the edge target): ROUTES HTTPRoutes and INGRESSES Ingresses
// of one host each (bench/gen-edge.js) behind `k8s_gateway { resources HTTPRoute Ingress }`:
//   - start to first answer and RSS once loaded;
//   - a paced client at QPS (bench/paced-client.js, every host in turn) while a new route file lands
//     three times: queries lost, p50/p99/max latency, and how long each new host took to answer
//     (the plugin's manifest watch, `watch 500ms` here: a change applies once the files are the
//     same at two polls in a row, so the floor is about two intervals).
// Everything stays on loopback; children are stopped by PID.
// Usage: node bench/edge-serve.js [--routes N (10000)] [--ingresses N (10000)] [--qps N (2000)] [--no-pin]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BENCH, ROOT, option, freePort, startNode, serverReady, stop, runLoad, machine, stopChildrenOnSignals, treeRss, udpAsk } from './lib.js';
import { edgeManifests, ingressManifests } from './gen-edge.js';

const ROUTES = option('--routes', 10000, 1, 1000000);
const INGRESSES = option('--ingresses', 10000, 0, 1000000);
const QPS = option('--qps', 2000, 1, 50000);
const SECONDS = 15;
const CHANGES_AT = [3, 7, 11];

/** Polls `name` every 20 ms until it answers with an address; ms from `since`, or null after 10 s. */
async function untilAnswered(port, name, since) {
  while (performance.now() - since < 10000) {
    const r = await udpAsk(port, name, 200);
    if (r && r.rcode === 0 && r.answers > 0) return Math.round(performance.now() - since);
    await new Promise((res) => setTimeout(res, 20));
  }
  return null;
}

async function main() {
  stopChildrenOnSignals();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-edge-serve-'));
  const result = { routes: ROUTES, ingresses: INGRESSES, qps: QPS, machine: machine() };
  try {
    const dir = path.join(tmp, 'manifests');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'edge.yaml'), `${edgeManifests(ROUTES, 1)}---\n${ingressManifests(INGRESSES)}`);
    const names = [];
    for (let r = 0; r < ROUTES; r++) names.push(`h0.r${r}.example.com A`);
    for (let k = 0; k < INGRESSES; k++) names.push(`i${k}.example.com A`);
    const namesFile = path.join(tmp, 'names.txt');
    fs.writeFileSync(namesFile, `${names.join('\n')}\n`);
    const corefile = path.join(tmp, 'Corefile');
    fs.writeFileSync(
      corefile,
      `example.com {\n    bind 127.0.0.1\n    k8s_gateway {\n        resources HTTPRoute Ingress\n        manifests ${dir}\n        watch 500ms\n    }\n}\n`,
    );
    const server = await startNode(
      'clusterdns',
      [path.join(ROOT, 'bin', 'clusterdns.js'), 'serve', '--conf', corefile, '--port', String(await freePort())],
      serverReady,
    );
    const first = await untilAnswered(server.port, 'h0.r0.example.com', server.startedAt);
    result.startToFirstAnswerMs = first;
    await new Promise((r) => setTimeout(r, 1000));
    result.rssAfterLoad = treeRss(server.child.pid).now;
    console.log(`loaded: first answer after ${first} ms, RSS ${(result.rssAfterLoad / 1048576).toFixed(1)} MiB`);

    const appear = [];
    const changes = CHANGES_AT.map(
      (t, i) =>
        new Promise((resolve) =>
          setTimeout(async () => {
            const host = `new${i}.example.com`;
            const since = performance.now();
            // Written beside, then renamed: the watch never sees half a file.
            const file = path.join(dir, `new-${i}.yaml`);
            fs.writeFileSync(
              `${file}.tmp`,
              `apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: new${i}\n  namespace: default\nspec:\n  ingressClassName: nginx\n  rules:\n    - host: ${host}\nstatus:\n  loadBalancer:\n    ingress:\n      - ip: 192.0.2.${i + 1}\n`,
            );
            fs.renameSync(`${file}.tmp`, file);
            appear.push(await untilAnswered(server.port, host, since));
            resolve();
          }, t * 1000),
        ),
    );
    const paced = await runLoad(
      process.execPath,
      [path.join(BENCH, 'paced-client.js'), String(server.port), String(QPS), String(SECONDS), namesFile],
      SECONDS + 30,
    );
    await Promise.all(changes);
    result.load = JSON.parse(paced.trim().split('\n').pop());
    result.newHostAnswersAfterMs = appear;
    result.rssAfterChanges = treeRss(server.child.pid).now;
    console.log(`under ${QPS} qps with 3 new files: ${JSON.stringify(result.load)}; new hosts answered after ${appear.join(', ')} ms`);
    await stop(server.child);
    console.log(JSON.stringify(result));
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
