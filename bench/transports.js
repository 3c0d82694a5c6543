#!/usr/bin/env node
// Transports benchmark: dnsperf against one real clusterdns process on loopback over UDP, TCP,
// DNS over TLS and (when the server accepts https:// and grpc:// keys) DNS over HTTPS and gRPC
// (Node load clients: bench/doh-load.js, bench/grpc-load.js), same query file, same
// length, rounds alternating the transports so the UDP baseline is measured in the same run. The
// CPU time of the server process per completed query comes from /proc/PID/stat (utime+stime).
// Writes its section of bench/RESULTS.md (between the transports markers).
//
// dnsperf keeps its connections: -c CLIENTS is the number of TCP/TLS/HTTP connections, each kept
// open for the whole run (no num-queries-per-conn), with the queries pipelined on them.
//
// A throwaway certificate is made with openssl in a temporary directory (dnsperf does not verify
// it); everything stays on 127.0.0.1; every run is bounded by dnsperf's -l and a hard kill; the
// server is stopped by PID (SIGTERM, then SIGKILL) whatever happens.
//
// Options: --seconds N (each measured run, default 10), --rounds N (default 3), --no-pin.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import {
  BENCH,
  ROOT,
  HOST,
  PIN,
  DNSPERF,
  SERVER_CPU,
  LOAD_CPU,
  option,
  checkDnsperf,
  startNode,
  stop,
  children,
  cpuTicks,
  dnsperfArgs,
  runLoad,
  parseDnsperf,
  median,
  fmt,
  clockTicks,
  freePort,
  machine as machineFacts,
  stopChildrenOnSignals,
} from './lib.js';

const SECONDS = option('--seconds', 10, 1, 120);
const ROUNDS = option('--rounds', 3, 1, 10);
const WARMUP_SECONDS = 2;
const QUERIES = path.join(BENCH, 'queries.txt');
const MANIFESTS = path.join(ROOT, 'examples', 'manifests');
const ZONES = ['cluster.local', 'in-addr.arpa', 'ip6.arpa'];

/** A self-signed certificate for 127.0.0.1 (EC P-256), in a directory removed at the end. */
function makeCert(dir) {
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      'key.pem',
      '-out',
      'cert.pem',
      '-days',
      '2',
      '-subj',
      '/CN=bench.test',
      '-addext',
      'subjectAltName=DNS:bench.test,IP:127.0.0.1',
    ],
    { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return { cert: path.join(dir, 'cert.pem'), key: path.join(dir, 'key.pem') };
}

/** One server block per transport, each with the same kubernetes plugin as bench/Corefile. */
function corefile(ports, cert, withDoh) {
  const block = (scheme, port, tlsLine) =>
    `${ZONES.map((z) => `${scheme}${z}:${port}`).join(' ')} {\n    bind ${HOST}\n${tlsLine ? `    tls ${cert.cert} ${cert.key}\n` : ''}    kubernetes ${ZONES.join(' ')} {\n        pods insecure\n        ttl 30\n    }\n}\n`;
  return [
    block('', ports.dns, false),
    block('tls://', ports.dot, true),
    ...(withDoh ? [block('https://', ports.doh, true), block('grpc://', ports.grpc, true)] : []),
  ].join('\n');
}

/** The TLS version and ALPN the DoT listener negotiates with a client that offers what it has. */
function negotiated(port) {
  return new Promise((resolve) => {
    const s = tls.connect({ host: HOST, port, rejectUnauthorized: false, ALPNProtocols: ['dot'] });
    const timer = setTimeout(() => {
      s.destroy();
      resolve('unknown (no handshake within 5 s)');
    }, 5000);
    s.once('secureConnect', () => {
      clearTimeout(timer);
      resolve(`${s.getProtocol()}, ALPN ${s.alpnProtocol || 'none'}`);
      s.destroy();
    });
    s.once('error', (err) => {
      clearTimeout(timer);
      resolve(`unknown (${err.message})`);
    });
  });
}

function ready(line) {
  return line.includes('"clusterdns ready"') ? 1 : null;
}

/** Starts the server; resolves with it, or rejects with its last output. */
function serve(conf) {
  return startNode('clusterdns', [path.join(ROOT, 'bin', 'clusterdns.js'), 'serve', '--conf', conf, '--manifests', MANIFESTS], ready);
}

/** A Node load client of bench/ (load-client.js) with dnsperf's connections and queries outstanding. */
function nodeLoad(script, port, seconds, extra = []) {
  return [
    process.execPath,
    [
      path.join(BENCH, script),
      '--port',
      String(port),
      ...extra,
      '--seconds',
      String(seconds),
      '--connections',
      String(DNSPERF.clients),
      '--outstanding',
      String(DNSPERF.outstanding),
      '--queries',
      QUERIES,
    ],
  ];
}

const MODES = {
  udp: { label: 'UDP', port: (p) => p.dns, extra: () => [] },
  tcp: { label: 'TCP', port: (p) => p.dns, extra: () => ['-m', 'tcp'] },
  dot: { label: 'DoT', port: (p) => p.dot, extra: () => ['-m', 'dot'] },
  // dnsperf 2.10's DoH keeps one query in flight per connection and loses the rest (see
  // doh-load.js): a Node HTTP/2 client with dnsperf's connections and queries outstanding instead.
  doh: {
    label: 'DoH (GET, HTTP/2)',
    port: (p) => p.doh,
    load: (p, seconds) => nodeLoad('doh-load.js', p.doh, seconds),
  },
  // dnsperf has no gRPC mode: a grpc-js client, CoreDNS's DnsService/Query, the same connections and calls outstanding.
  grpc: {
    label: 'gRPC',
    port: (p) => p.grpc,
    load: (p, seconds, cert) => nodeLoad('grpc-load.js', p.grpc, seconds, ['--ca', cert.cert]),
  },
};

async function measure(server, mode, ports, seconds, clkTck, cert) {
  const m = MODES[mode];
  const [cmd, args] = m.load ? m.load(ports, seconds, cert) : ['dnsperf', [...dnsperfArgs(m.port(ports), seconds, QUERIES), ...m.extra(ports)]];
  const before = cpuTicks(server.child.pid);
  // dnsperf stops itself after -l seconds plus its query timeout (5 s); +20 s is the backstop.
  const output = await runLoad(cmd, args, seconds + 20);
  const after = cpuTicks(server.child.pid);
  const r = parseDnsperf(output);
  r.cpuUsPerQuery = (((after - before) / clkTck) * 1e6) / r.completed;
  return r;
}

function section({ date, machine, modes, runs, dohNote, command, tlsFacts }) {
  const rows = modes.map((mode) => {
    const rs = runs[mode];
    // Each round's ratio to the UDP run of the same round: the machine's drift cancels out.
    const qpsRatio = median(rs.map((r, i) => r.qps / runs.udp[i].qps));
    const cpuRatio = median(rs.map((r, i) => r.cpuUsPerQuery / runs.udp[i].cpuUsPerQuery));
    return `| ${MODES[mode].label} | ${fmt(median(rs.map((r) => r.qps)), 0)} | ${fmt(median(rs.map((r) => r.latencyMs)), 3)} | ${rs.reduce((n, r) => n + r.lost, 0)} | ${fmt(median(rs.map((r) => r.cpuUsPerQuery)), 2)} | ${fmt(qpsRatio, 3)} | ${fmt(cpuRatio, 3)} |`;
  });
  const all = [];
  for (let i = 0; i < ROUNDS; i++)
    for (const mode of modes) {
      const r = runs[mode][i];
      all.push(`| ${i + 1} | ${MODES[mode].label} | ${fmt(r.qps, 0)} | ${fmt(r.latencyMs, 3)} | ${r.lost} | ${fmt(r.cpuUsPerQuery, 2)} | ${r.rcodes} |`);
    }
  return `<!-- transports:start -->
## Transports: UDP, TCP, DNS over TLS${modes.includes('doh') ? ', DNS over HTTPS' : ''}${modes.includes('grpc') ? ', gRPC' : ''} (bench/transports.js, ${date.slice(0, 10)})

One clusterdns process (bench/Corefile's kubernetes block, once per transport, examples/manifests),
loaded by dnsperf over each transport in turn, ${ROUNDS} rounds of ${SECONDS} s each after a ${WARMUP_SECONDS} s warm-up per
transport; the rounds alternate the transports so UDP, the baseline, is measured in the same run.

- machine: ${machine.nproc} CPUs (${machine.cpu}), Node ${machine.node}, dnsperf ${machine.dnsperf}, ${machine.os}; ${PIN ? `server pinned to CPU ${SERVER_CPU}, dnsperf to CPU ${LOAD_CPU}` : 'not pinned'}
- command: \`${command}\` plus \`-m tcp\`, \`-m dot\`${modes.includes('doh') ? ', and for DoH `node bench/doh-load.js` (HTTP/2 GET, the same connections and queries outstanding: dnsperf 2.10 in DoH mode keeps one query in flight per connection, DNS-OARC/dnsperf#272)' : ''}${modes.includes('grpc') ? ", and for gRPC `node bench/grpc-load.js` (@grpc/grpc-js unary calls of CoreDNS's DnsService/Query, the same connections and calls outstanding; dnsperf has no gRPC mode)" : ''}
- connections: dnsperf's ${DNSPERF.clients} clients (\`-c ${DNSPERF.clients}\`) are ${DNSPERF.clients} connections per run for TCP${modes.includes('doh') ? `, DoT, DoH${modes.includes('grpc') ? ' and gRPC' : ''}` : ' and DoT'}, opened at its start and kept to its end, with up to ${DNSPERF.outstanding} queries outstanding over them (pipelined): the handshakes are ${DNSPERF.clients} per run, the figures are the steady state of reused connections
- TLS: ${tlsFacts}, as the DoT listener negotiates with a client offering TLS 1.3 (an EC P-256 certificate made for the run)${dohNote ? `\n- ${dohNote}` : ''}

| transport | qps (median) | avg latency ms (median) | lost (all rounds) | server CPU us/query (median) | qps / UDP | CPU / UDP |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |
${rows.join('\n')}

"qps / UDP" and "CPU / UDP" are medians over rounds of each run against the UDP run of its round.
The server's CPU per query is what the transport costs the server; qps is also bounded by dnsperf
on the other CPU (its TLS work included). Over UDP each query costs the server a receive and a send
system call; over pipelined TCP and TLS connections one read brings many queries and one write
carries many replies (TLS records batch the replies written while the previous write was in
progress), so with connection reuse a stream transport can cost the server less per query than UDP.${
    modes.includes('grpc')
      ? `

gRPC is served through @grpc/grpc-js (src/server/grpc.ts), over the same HTTP/2 and TLS as DoH;
its qps is bounded by the grpc-js load client on its one CPU, and its server CPU per query is what
grpc-js's call handling adds to DoH's (not profiled yet).`
      : ''
  }

| round | transport | qps | avg latency ms | lost | CPU us/query | response codes |
| ---: | --- | ---: | ---: | ---: | ---: | --- |
${all.join('\n')}
<!-- transports:end -->
`;
}

async function main() {
  checkDnsperf();
  if (!existsSync(path.join(ROOT, 'dist', 'cli', 'main.js'))) {
    console.error('bench: dist/ is missing; run `npm run build` first (npm run bench does it).');
    process.exit(1);
  }
  const clkTck = clockTicks();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'clusterdns-transports-'));
  let server;
  try {
    const cert = makeCert(dir);
    const ports = { dns: await freePort(), dot: await freePort(), doh: await freePort(), grpc: await freePort() };
    const conf = path.join(dir, 'Corefile');
    let dohNote = null;
    writeFileSync(conf, corefile(ports, cert, true));
    try {
      server = await serve(conf);
    } catch (err) {
      // A server without DNS over HTTPS refuses the https:// block: measure the others.
      const line = (err instanceof Error ? err.message : String(err)).split('\n').find((l) => l.includes('https')) ?? '';
      // The reason without the temporary Corefile's path.
      const why = line.replace(/^.*?Corefile:\d+: /, '');
      dohNote = `DoH not measured: this build refuses https:// server blocks${why ? ` (${why.trim().slice(0, 200)})` : ''}`;
      console.log(dohNote);
      for (const c of children) await stop(c);
      writeFileSync(conf, corefile(ports, cert, false));
      server = await serve(conf);
    }
    const tlsFacts = await negotiated(ports.dot);
    let modes = dohNote ? ['udp', 'tcp', 'dot'] : ['udp', 'tcp', 'dot', 'doh', 'grpc'];
    console.log(`clusterdns pid ${server.child.pid}: UDP/TCP ${ports.dns}, DoT ${ports.dot}${dohNote ? '' : `, DoH ${ports.doh}`}`);
    console.log(PIN ? `pinning: server on CPU ${SERVER_CPU}, dnsperf on CPU ${LOAD_CPU}` : 'pinning: off');

    let version = null;
    for (const mode of [...modes]) {
      process.stdout.write(`warm-up ${MODES[mode].label} (${WARMUP_SECONDS} s)... `);
      let r;
      try {
        r = await measure(server, mode, ports, WARMUP_SECONDS, clkTck, cert);
      } catch (err) {
        // The server takes https:// blocks but dnsperf's DoH gets no answer from it: say so, measure the rest.
        if (mode !== 'doh' && mode !== 'grpc') throw err;
        dohNote = `${MODES[mode].label} not measured: its load client got no answer (${(err instanceof Error ? err.message : String(err)).split('\n')[0].slice(0, 200)})`;
        console.log(dohNote);
        modes = modes.filter((m) => m !== mode);
        continue;
      }
      version ??= r.version;
      console.log(`${fmt(r.qps, 0)} qps`);
    }
    const runs = Object.fromEntries(modes.map((m) => [m, []]));
    for (let round = 1; round <= ROUNDS; round++) {
      for (const mode of modes) {
        process.stdout.write(`round ${round}/${ROUNDS} ${MODES[mode].label} (${SECONDS} s)... `);
        const r = await measure(server, mode, ports, SECONDS, clkTck, cert);
        runs[mode].push(r);
        console.log(`${fmt(r.qps, 0)} qps, ${fmt(r.latencyMs, 3)} ms, lost ${r.lost}, ${fmt(r.cpuUsPerQuery, 2)} us CPU/query`);
      }
    }
    const command = `${PIN ? `taskset -c ${LOAD_CPU} ` : ''}dnsperf ${dnsperfArgs('PORT', SECONDS, QUERIES).join(' ').replace(QUERIES, 'bench/queries.txt')}`;
    const text = section({
      date: new Date().toISOString(),
      machine: { ...machineFacts(), dnsperf: version ?? 'unknown' },
      modes,
      runs,
      dohNote,
      command,
      tlsFacts,
    });
    const resultsFile = path.join(BENCH, 'RESULTS.md');
    const previous = existsSync(resultsFile) ? readFileSync(resultsFile, 'utf8') : '';
    const kept = previous.replace(/<!-- transports:start -->[\s\S]*?<!-- transports:end -->\n?/, '').trimEnd();
    writeFileSync(resultsFile, `${kept}\n\n${text}`);
    console.log(`\n${text}\nwritten to bench/RESULTS.md`);
  } finally {
    if (server) await stop(server.child);
    for (const c of children) await stop(c);
    rmSync(dir, { recursive: true, force: true });
  }
}

stopChildrenOnSignals();

main().catch((err) => {
  console.error(`bench: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
