#!/usr/bin/env node
// The miss path alone, quicker than bench/scale-serve.js: the same cluster (one
// List from bench/gen-list.js, kept in --dir between runs) and the same 50,000 names (A hits,
// AAAA NODATA, ndots:5 search-walk NXDOMAINs), served with the answer cache off, measured with
// dnsperf against the bare Node responder in the same run, paired round by round.
//
//   node bench/miss-path.js [--dir DIR] [--rounds N] [--seconds N] [--hot]
//                           [--server ROOT]... [--prof DIR] [--compare] [--no-pin] [--bare-hold]
//
// --server ROOT (repeatable; default this checkout) runs ROOT/bin/clusterdns.js, so a build of
// the code before a change and one after are measured in the same run. --hot measures the 40
// cached names with the default answer cache instead. --bare-hold runs the bare responder with
// --hold (its replies batched as the server's UDP listener batches them). --prof DIR runs the
// servers under `node --cpu-prof` (profiles written to DIR when they stop). --compare sends every name once
// to each server, with 1,800 varied queries (variedQueries), and checks that the replies are the
// same bytes but for the ID (no load run).
// Everything stays on loopback; dnsperf runs are bounded (-l); children are stopped by PID.
import { execFileSync } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  BENCH,
  ROOT,
  HOST,
  option,
  freePort,
  encodeQuery,
  checkDnsperf,
  startNode,
  bareReady,
  serverReady,
  stop,
  children,
  measure,
  median,
  fmt,
  clockTicks,
  stopChildrenOnSignals,
  writeQueryFiles,
} from './lib.js';

const ROUNDS = option('--rounds', 3, 1, 20);
const SECONDS = option('--seconds', 10, 1, 60);
const SERVICES = 10000;
const ENDPOINTS = 10;
const HOT = process.argv.includes('--hot');
const BARE_HOLD = process.argv.includes('--bare-hold');
const COMPARE = process.argv.includes('--compare');

function values(flag) {
  const out = [];
  for (let i = 0; i < process.argv.length - 1; i++) if (process.argv[i] === flag) out.push(path.resolve(process.argv[i + 1]));
  return out;
}
const DIR = values('--dir')[0] ?? path.join(os.tmpdir(), 'clusterdns-miss-path');
const SERVERS = values('--server');
if (SERVERS.length === 0) SERVERS.push(ROOT);
const PROF = values('--prof')[0];

/** The List, the Corefile and the query files, made once per --dir. */
function prepare() {
  fs.mkdirSync(DIR, { recursive: true });
  const list = path.join(DIR, 'cluster.json');
  if (!fs.existsSync(`${list}.names.json`)) {
    execFileSync(process.execPath, [path.join(BENCH, 'gen-list.js'), list, String(SERVICES), String(ENDPOINTS)], { stdio: 'ignore' });
  }
  const names = JSON.parse(fs.readFileSync(`${list}.names.json`, 'utf8'));
  const { hot, miss, lines } = writeQueryFiles(DIR, names);
  const corefile = path.join(DIR, 'Corefile');
  fs.writeFileSync(
    corefile,
    'cluster.local in-addr.arpa ip6.arpa {\n    bind 127.0.0.1\n    kubernetes cluster.local in-addr.arpa ip6.arpa {\n        pods insecure\n    }\n}\n',
  );
  return { list, corefile, hot, miss, lines, names };
}

async function startServer(root, i, files) {
  const args = [];
  if (PROF) args.push('--cpu-prof', '--cpu-prof-dir', PROF, '--cpu-prof-name', `server-${i}-${Date.now()}.cpuprofile`);
  args.push(path.join(root, 'bin', 'clusterdns.js'), 'serve', '--conf', files.corefile, '--manifests', files.list, '--port', String(await freePort()));
  if (!HOT) args.push('--answer-cache-bytes', '0');
  return startNode(`clusterdns ${root}`, args, serverReady);
}

/** Every query once, a bounded number in flight; the replies by index (null when none came). */
async function askAll(port, queries) {
  const sock = dgram.createSocket('udp4');
  const replies = new Array(queries.length).fill(null);
  const waiting = new Map();
  sock.on('message', (m) => {
    const id = m.readUInt16BE(0);
    const done = waiting.get(id);
    if (done) done(m);
  });
  await new Promise((r) => sock.bind(0, HOST, r));
  let next = 0;
  const worker = async () => {
    while (next < queries.length) {
      const i = next++;
      const id = i & 0xffff;
      for (let attempt = 0; attempt < 3 && replies[i] === null; attempt++) {
        replies[i] = await new Promise((resolve) => {
          const t = setTimeout(() => {
            waiting.delete(id);
            resolve(null);
          }, 1000);
          waiting.set(id, (m) => {
            clearTimeout(t);
            waiting.delete(id);
            resolve(m);
          });
          const q = queries[i];
          q.writeUInt16BE(id, 0);
          sock.send(q, port, HOST);
        });
      }
    }
  };
  // 64 in flight: IDs (index mod 65536) stay distinct among the queries outstanding.
  await Promise.all(Array.from({ length: 64 }, worker));
  sock.close();
  return replies;
}

/** `name` with every other letter in upper case (0x20 clients). */
function mixCase(name) {
  let up = false;
  return name.replace(/[a-z]/g, (c) => ((up = !up) ? c.toUpperCase() : c));
}

/** The query with an OPT record (payload size, DO bit) appended. */
function withOpt(q, udpSize, dnssecOk) {
  const opt = Buffer.alloc(11);
  opt.writeUInt16BE(41, 1);
  opt.writeUInt16BE(udpSize, 3);
  opt.writeUInt16BE(dnssecOk ? 0x8000 : 0, 7);
  const out = Buffer.concat([q, opt]);
  out.writeUInt16BE(1, 10);
  return out;
}

/**
 * 1,800 queries beside the 50k names, so --compare also covers what the load does not ask:
 * 60 names (services, ports, endpoints, pods, reverse names, the apex, the name server, the
 * schema version, names whose labels are those of the SOA's names, 0x20 spellings, names outside
 * the zones) times 10 types times 3 EDNS shapes (none, 1232, 4096 with DO).
 */
function variedQueries(names) {
  const hits = names.hits.slice(0, 6);
  const list = [];
  for (const h of hits) {
    const [svc, ns] = h.split('.');
    list.push(`${h}.svc.cluster.local`, `_http._tcp.${h}.svc.cluster.local`, `10-0-0-1.${h}.svc.cluster.local`, mixCase(`${h}.svc.cluster.local`));
    list.push(`${ns}.svc.cluster.local`, `${svc}.${ns}.pod.cluster.local`);
  }
  list.push('cluster.local', 'svc.cluster.local', 'pod.cluster.local', 'ns.dns.cluster.local', 'dns-version.cluster.local', 'dns.cluster.local');
  list.push('hostmaster.cluster.local', 'x.ns.dns.cluster.local', 'a.hostmaster.cluster.local', 'CLUSTER.LOCAL', 'Ns.Dns.Cluster.Local');
  list.push('10-96-0-16.ns-0.pod.cluster.local', '16.0.96.10.in-addr.arpa', '1.0.96.10.in-addr.arpa', 'in-addr.arpa', '10.in-addr.arpa', 'ip6.arpa');
  list.push('example.com', 'no.such.svc.cluster.local', `${names.hits[0]}.svc.cluster.local.cluster.local`, 'a.b.c.d.e.f.svc.cluster.local');
  while (list.length < 60) list.push(`missing-${list.length}.${names.namespaces[0]}.svc.cluster.local`);
  const out = [];
  for (const name of list.slice(0, 60)) {
    for (const type of ['A', 'AAAA', 'SRV', 'TXT', 'PTR', 'NS', 'SOA', 'MX', 'CNAME', 255]) {
      const q = encodeQuery(name, type);
      out.push({ line: `${name} ${type}`, q });
      out.push({ line: `${name} ${type} +edns`, q: withOpt(q, 1232, false) });
      out.push({ line: `${name} ${type} +edns4096+do`, q: withOpt(q, 4096, true) });
    }
  }
  return out;
}

async function compare(files, servers) {
  const varied = variedQueries(files.names);
  const lines = [...new Set(files.lines)];
  const queries = lines.map((l) => {
    const [name, type] = l.split(' ');
    return encodeQuery(name, type);
  });
  for (const v of varied) {
    lines.push(v.line);
    queries.push(v.q);
  }
  const all = [];
  for (const s of servers) all.push(await askAll(s.port, queries));
  let differ = 0;
  let missing = 0;
  for (let i = 0; i < queries.length; i++) {
    const first = all[0][i];
    for (const other of all.slice(1)) {
      const r = other[i];
      if (!first || !r) {
        missing++;
        continue;
      }
      if (first.length !== r.length || first.compare(r, 2, r.length, 2, first.length) !== 0) {
        if (differ++ < 5) console.log(`differ: ${lines[i]}\n  ${first.toString('hex')}\n  ${r.toString('hex')}`);
      }
    }
  }
  console.log(
    `compared ${queries.length} queries (${queries.length - varied.length} names, ${varied.length} varied) over ${servers.length} servers: ${differ} differ, ${missing} without a reply`,
  );
  return differ === 0 && missing === 0;
}

async function main() {
  if (!COMPARE) checkDnsperf();
  const files = prepare();
  const clkTck = clockTicks();
  const base = COMPARE
    ? null
    : await startNode('bare', [path.join(BENCH, 'bare-responder.js'), '--address', HOST, '--port', '0', ...(BARE_HOLD ? ['--hold'] : [])], bareReady);
  const servers = [];
  for (let i = 0; i < SERVERS.length; i++) servers.push(await startServer(SERVERS[i], i, files));
  try {
    if (COMPARE) {
      process.exitCode = (await compare(files, servers)) ? 0 : 1;
      return;
    }
    const queries = HOT ? files.hot : files.miss;
    // One pass first, so every server has its code warm before it is measured.
    for (const s of servers) await measure(s, 2, queries, clkTck);
    const ratios = servers.map(() => []);
    const cpu = servers.map(() => []);
    for (let round = 1; round <= ROUNDS; round++) {
      const b = await measure(base, SECONDS, queries, clkTck);
      const line = [`round ${round}: bare ${fmt(b.qps, 0)} qps ${fmt(b.cpuUsPerQuery, 1)} us`];
      for (let i = 0; i < servers.length; i++) {
        const s = await measure(servers[i], SECONDS, queries, clkTck);
        ratios[i].push(s.qps / b.qps);
        cpu[i].push(s.cpuUsPerQuery);
        line.push(`[${i}] ${fmt(s.qps, 0)} qps ${fmt(s.cpuUsPerQuery, 1)} us ratio ${fmt(s.qps / b.qps, 3)} lost ${s.lost} ${s.rcodes}`);
      }
      console.log(line.join(' | '));
    }
    for (let i = 0; i < servers.length; i++) {
      console.log(
        `[${i}] ${SERVERS[i]}: median ratio ${fmt(median(ratios[i]), 3)}, median ${fmt(median(cpu[i]), 1)} us CPU/query (${HOT ? 'hot' : 'miss, answer cache off'})`,
      );
    }
  } finally {
    for (const c of children) await stop(c);
  }
}

stopChildrenOnSignals();
main().catch((err) => {
  console.error(`bench: ${err instanceof Error ? err.stack : String(err)}`);
  process.exitCode = 1;
});
