#!/usr/bin/env node
// Scale figures: load time and peak RSS for synthetic clusters, each measured in a fresh
// process, with an empty Node process as the RSS baseline. Appends a section to RESULTS.md.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const sizes = [
  { services: 1000, pods: 10000 },
  { services: 10000, pods: 100000 },
];
const run = (args) =>
  JSON.parse(
    execFileSync(process.execPath, ['--max-old-space-size=8192', ...args], { encoding: 'utf8', maxBuffer: 1 << 24 })
      .trim()
      .split('\n')
      .pop(),
  );

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-scale-'));
const rows = [];
try {
  const empty = run([path.join(here, 'load-one.js'), '--empty']);
  for (const size of sizes) {
    const dir = path.join(tmp, `${size.services}`);
    execFileSync(process.execPath, [path.join(here, 'gen-cluster.js'), dir, String(size.services), String(size.pods)]);
    const bytes = fs.readdirSync(dir).reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0);
    const r = run([path.join(here, 'load-one.js'), dir]);
    const derivedObjects = r.services + r.pods + r.endpointSlices;
    const row = {
      ...size,
      manifestBytes: bytes,
      ...r,
      emptyRss: empty.maxRssBytes,
      bytesPerObject: Math.round((r.maxRssBytes - empty.maxRssBytes) / derivedObjects),
    };
    rows.push(row);
    console.log(JSON.stringify(row));
  }
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}

const mib = (b) => (b / 1048576).toFixed(1);
const section = [
  '<!-- scale:start -->',
  '## Scale (bench/scale.js)',
  '',
  `Synthetic clusters from bench/gen-cluster.js (Deployments and StatefulSets with Services; pods and`,
  `endpoint slices derived by the control-plane emulation), loaded in a fresh process each, pods verified.`,
  `Peak RSS of an empty Node process: ${mib(rows[0]?.emptyRss ?? 0)} MiB.`,
  '',
  '| services | pods | manifest MiB | objects read | endpoint slices | load ms | store ms | peak RSS MiB | RSS bytes per service+pod+slice |',
  '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...rows.map(
    (r) =>
      `| ${r.services} | ${r.pods} | ${mib(r.manifestBytes)} | ${r.objects} | ${r.endpointSlices} | ${r.loadMs} | ${r.storeMs} | ${mib(r.maxRssBytes)} | ${r.bytesPerObject} |`,
  ),
  '<!-- scale:end -->',
  '',
].join('\n');
const results = path.join(here, 'RESULTS.md');
const old = fs.existsSync(results) ? fs.readFileSync(results, 'utf8') : '# clusterdns benchmark\n\n';
const stripped = old.replace(/<!-- scale:start -->[\s\S]*<!-- scale:end -->\n?/, '');
fs.writeFileSync(results, stripped.trimEnd() + '\n\n' + section);
console.log(`scale section written to ${results}`);
