#!/usr/bin/env node
// Start to first answer with and without the manifest feed's persisted image (src/cluster/feed-image.ts),
// at real-cluster size: a 10k Services / 100k endpoints List (pretty-printed and compact,
// bench/gen-list.js) and the workload tree (10k Services from Deployments and StatefulSets, 100k
// pods, bench/gen-cluster.js). For each tree, in alternating rounds:
//   off:   --no-manifest-image (the baseline: every start parses the manifests);
//   cold:  the image on, none written yet (what recording and writing the image costs a start);
//   image: the image on, written by the run before (a start on unchanged files).
// Each start is timed from spawn to the first answer of a name of the tree (asked every 10 ms)
// and to the "clusterdns ready" line; RSS is read once the start has settled (the loader thread
// loads the files in the background after an image start). The answers of a sample of names are
// compared between every start. Then the first change after the start: a new Service's file and
// SIGHUP, timed to its first answer (after an image start the loader thread must have restored
// the feed's reads, so that this change reads one file). Medians over --rounds.
// Usage: node bench/start-image.js [--services N] [--rounds N] [--trees list,compact,workload] [--no-pin]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { BENCH, ROOT, option, freePort, startNode, serverReady, stop, stopChildrenOnSignals, treeRss, udpReply, median, cpuTicks } from './lib.js';

const SERVICES = option('--services', 10000, 1, 1000000);
const ROUNDS = option('--rounds', 5, 1, 50);
const argv = process.argv.slice(2);
const treesArg = argv.includes('--trees') ? argv[argv.indexOf('--trees') + 1] : 'list,compact,workload';
const TREES = treesArg.split(',');
/** After ready: RSS is read once the server has used under 5% of a CPU for a second (the image start's background load and the settling collection are over), or after this long. */
const SETTLE_GIVE_UP_MS = 90_000;
const FIRST_ANSWER_GIVE_UP_MS = 60_000;
const SAMPLE = 40;
const CHANGE_GIVE_UP_MS = 20_000;
const mib = (b) => (b / 1048576).toFixed(1);

function generate(tree, dir) {
  fs.mkdirSync(dir, { recursive: true });
  let names;
  if (tree === 'workload') {
    execFileSync(process.execPath, [path.join(BENCH, 'gen-cluster.js'), dir, String(SERVICES), String(SERVICES * 10)]);
    names = Array.from({ length: Math.min(SERVICES, 5000) }, (_, s) => `app-${s}.team-${s % Math.max(1, Math.round(SERVICES / 50))}`);
  } else {
    const list = path.join(dir, 'cluster.json');
    execFileSync(process.execPath, [path.join(BENCH, 'gen-list.js'), list, String(SERVICES), '10', ...(tree === 'compact' ? ['--compact'] : [])]);
    names = JSON.parse(fs.readFileSync(`${list}.names.json`, 'utf8')).hits;
    fs.rmSync(`${list}.names.json`);
  }
  // A checkout that has been there a while (files written within 2 s of a read are hashed too).
  const past = new Date(Date.now() - 60_000);
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      fs.utimesSync(p, past, past);
    }
  };
  walk(dir);
  return names.map((n) => `${n}.svc.cluster.local`);
}

async function settled(pid) {
  const hz = 100;
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, 2000));
  let last = cpuTicks(pid);
  while (performance.now() - t0 < SETTLE_GIVE_UP_MS) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = cpuTicks(pid);
    if ((now - last) / hz < 0.05) return;
    last = now;
  }
}

async function start(tree, dir, conf, mode, imageDir, name, sample) {
  // dir: the manifests; imageDir: where the image is (mode image) or goes (cold).
  const port = await freePort();
  const args = [path.join(ROOT, 'bin/clusterdns.js'), 'serve', '--conf', conf, '--manifests', dir, '--port', String(port)];
  if (tree === 'workload') args.push('--pod-cidr', '10.128.0.0/9');
  if (mode === 'off') args.push('--no-manifest-image');
  else args.push('--manifest-image-dir', imageDir);
  const t0 = performance.now();
  const ready = startNode('clusterdns', args, serverReady);
  ready.catch(() => undefined);
  let firstMs;
  for (;;) {
    const r = await udpReply(port, name, 20);
    const ms = performance.now() - t0;
    if (r && (r[3] & 15) === 0 && r.readUInt16BE(6) > 0) {
      firstMs = ms;
      break;
    }
    if (ms > FIRST_ANSWER_GIVE_UP_MS) throw new Error(`${tree} ${mode}: no answer within ${FIRST_ANSWER_GIVE_UP_MS} ms`);
    await new Promise((r2) => setTimeout(r2, 10));
  }
  const server = await ready;
  const readyMs = server.readyAt - t0;
  await settled(server.child.pid);
  const rss = treeRss(server.child.pid).now;
  const answers = [];
  for (const n of sample) answers.push((await udpReply(port, n, 1000))?.subarray(2).toString('hex') ?? 'none');
  const log = server.tail.join('\n');
  // The image a cold start wrote, kept as it was before the change below rewrites it.
  if (mode === 'cold') {
    fs.rmSync(`${imageDir}.kept`, { recursive: true, force: true });
    fs.cpSync(imageDir, `${imageDir}.kept`, { recursive: true });
  }
  // The first change after the start: a new Service's file and SIGHUP, to its first answer.
  const added = path.join(dir, 'zz-added.yaml');
  fs.writeFileSync(
    `${added}.tmp`,
    'apiVersion: v1\nkind: Service\nmetadata:\n  name: zz-added\n  namespace: default\nspec:\n  selector:\n    app: zz-added\n  ports:\n  - port: 80\n',
  );
  fs.renameSync(`${added}.tmp`, added);
  const c0 = performance.now();
  server.child.kill('SIGHUP');
  let changeMs = Infinity;
  while (performance.now() - c0 < CHANGE_GIVE_UP_MS) {
    const r = await udpReply(port, 'zz-added.default.svc.cluster.local', 100);
    if (r && (r[3] & 15) === 0 && r.readUInt16BE(6) > 0) {
      changeMs = performance.now() - c0;
      break;
    }
    await new Promise((r2) => setTimeout(r2, 10));
  }
  await stop(server.child);
  fs.rmSync(added);
  return { firstMs, readyMs, rss, answers, log, changeMs };
}

async function main() {
  stopChildrenOnSignals();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-start-image-'));
  const results = [];
  try {
    for (const tree of TREES) {
      const dir = path.join(tmp, tree, 'manifests');
      const imageDir = path.join(tmp, tree, 'images');
      const names = generate(tree, dir);
      const conf = path.join(tmp, tree, 'Corefile');
      fs.writeFileSync(
        conf,
        'cluster.local in-addr.arpa ip6.arpa {\n    bind 127.0.0.1\n    kubernetes {\n        pods insecure\n        watch 0s\n    }\n}\n',
      );
      const name = names[Math.floor(names.length / 2)];
      const sample = Array.from({ length: SAMPLE }, (_, i) => names[Math.floor((i * names.length) / SAMPLE)]);
      const runs = { off: [], cold: [], image: [] };
      let reference;
      for (let round = 0; round < ROUNDS; round++) {
        // Alternating, so that a slower stretch of the shared machine falls on every mode alike.
        for (const mode of round % 2 === 0 ? ['off', 'cold', 'image'] : ['cold', 'image', 'off']) {
          fs.rmSync(imageDir, { recursive: true, force: true });
          if (mode === 'image') {
            if (!fs.existsSync(`${imageDir}.kept`)) throw new Error('no image written by the cold start');
            fs.cpSync(`${imageDir}.kept`, imageDir, { recursive: true });
          }
          const r = await start(tree, dir, conf, mode, imageDir, name, sample);
          if (mode === 'image' && !/"image":true/.test(r.log) && !r.log.includes('"reread":0')) {
            // Not from the image: say so rather than report a cold start as an image start.
            console.error(`${tree} image start did not use the image; last lines:\n${r.log}`);
          }
          reference ??= r.answers;
          if (r.answers.join() !== reference.join()) throw new Error(`${tree} ${mode}: answers differ from the first start's`);
          runs[mode].push(r);
        }
      }
      const kept = `${imageDir}.kept`;
      const imageBytes = fs.readdirSync(kept).reduce((n, f) => n + fs.statSync(path.join(kept, f)).size, 0);
      const row = { tree, services: SERVICES, rounds: ROUNDS, imageMiB: mib(imageBytes) };
      for (const [mode, rs] of Object.entries(runs)) {
        row[mode] = {
          firstAnswerMs: Math.round(median(rs.map((r) => r.firstMs))),
          readyMs: Math.round(median(rs.map((r) => r.readyMs))),
          rssMiB: mib(median(rs.map((r) => r.rss))),
          firstChangeMs: Math.round(median(rs.map((r) => r.changeMs))),
          firstAnswerAllMs: rs.map((r) => Math.round(r.firstMs)),
        };
      }
      console.log(JSON.stringify(row));
      results.push(row);
      fs.rmSync(path.join(tmp, tree), { recursive: true, force: true });
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
