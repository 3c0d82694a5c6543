// Big record sets: a zone too large for an argument list must not
// stop the start (a spread of its records into push() threw "Maximum call stack size exceeded"
// in the `try:` hint), and a name with more records than a section count can hold (65,535) is
// answered truncated, not SERVFAIL, and that answer is cached. Zones are generated into a temp
// dir; each server is stopped by PID.
import { describe, it, expect, beforeAll, afterAll, afterEach } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, startServer, type RunningServer } from '../helpers/server.js';
import { buildQuery, parseHeader, Rcode, T, tcpQuery, udpQuery } from '../server/raw.js';

let dir: string;
const servers: RunningServer[] = [];

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-big-'));
});
afterEach(async () => {
  for (const s of servers.splice(0)) {
    const alive = s.proc.exitCode === null && s.proc.signalCode === null;
    await s.stop();
    expect(alive, `server died: ${s.stderr.join('')}`).toBe(true);
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A zone file `origin` with SOA, NS, ns1's address and `count` A records from `owner(i)`. */
function writeZone(file: string, origin: string, count: number, owner: (i: number) => string): void {
  const lines = [`$ORIGIN ${origin}.`, '$TTL 60', '@ IN SOA ns1 host 1 2h 30m 2w 300', '@ IN NS ns1', 'ns1 IN A 10.0.0.1'];
  for (let i = 0; i < count; i++) lines.push(`${owner(i)} IN A 10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
  writeFileSync(file, `${lines.join('\n')}\n`);
}

async function metric(port: number, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

describe('big record sets (#21.7, #21.13)', () => {
  it('serve starts on a file zone of 130k records and answers', async () => {
    const zone = path.join(dir, 'big.zone');
    writeZone(zone, 'big.test', 130_000, (i) => `h${i}`);
    const conf = path.join(dir, 'Corefile.big');
    writeFileSync(conf, `big.test {\n    bind 127.0.0.1\n    file ${zone}\n}\n`);
    const s = await startServer(['--conf', conf], { timeoutMs: 15_000 });
    servers.push(s);
    expect(s.logs.some((l) => l.includes('"clusterdns ready"') && l.includes('h0.big.test'))).toBe(true);
    const reply = await udpQuery(buildQuery({ name: 'h129999.big.test', type: T.A }), { port: s.port });
    const h = parseHeader(reply);
    expect([h.rcode, h.ancount]).toEqual([Rcode.NOERROR, 1]);
  }, 20_000);

  it('a name with 70k A records: UDP gets TC, TCP a truncated answer, both cached, other names answered', async () => {
    const zone = path.join(dir, 'wide.zone');
    writeZone(zone, 'wide.test', 70_000, () => 'many');
    const metricsPort = await freePort();
    const conf = path.join(dir, 'Corefile.wide');
    writeFileSync(conf, `wide.test {\n    bind 127.0.0.1\n    prometheus 127.0.0.1:${metricsPort}\n    file ${zone}\n}\n`);
    const s = await startServer(['--conf', conf], { timeoutMs: 15_000 });
    servers.push(s);
    const target = { port: s.port };

    const udp = parseHeader(await udpQuery(buildQuery({ name: 'many.wide.test', type: T.A, edns: { udpSize: 1232 } }), target));
    expect([udp.rcode, udp.tc]).toEqual([Rcode.NOERROR, true]);
    expect(udp.ancount).toBeGreaterThan(0);

    const tcpReply = await tcpQuery(buildQuery({ name: 'many.wide.test', type: T.A }), target, 5000);
    const tcp = parseHeader(tcpReply);
    expect([tcp.rcode, tcp.tc]).toEqual([Rcode.NOERROR, true]);
    // Default --max-answer-records 4096; 16 octets an A record: what fits one TCP message.
    expect(tcp.ancount).toBeGreaterThan(4000);
    expect(tcp.ancount).toBeLessThanOrEqual(4096);
    expect(tcpReply.length).toBeLessThanOrEqual(65535);

    // Asked again, both come from the answer cache instead of building 70k records each time.
    const hitsBefore = await metric(metricsPort, 'clusterdns_answer_cache_hits_total');
    for (let i = 0; i < 10; i++) {
      expect(parseHeader(await udpQuery(buildQuery({ name: 'many.wide.test', type: T.A, edns: { udpSize: 1232 } }), target)).tc).toBe(true);
      expect(parseHeader(await tcpQuery(buildQuery({ name: 'many.wide.test', type: T.A }), target, 5000)).ancount).toBe(tcp.ancount);
    }
    expect((await metric(metricsPort, 'clusterdns_answer_cache_hits_total')) - hitsBefore).toBeGreaterThanOrEqual(20);

    const other = parseHeader(await udpQuery(buildQuery({ name: 'ns1.wide.test', type: T.A }), target));
    expect([other.rcode, other.ancount]).toEqual([Rcode.NOERROR, 1]);
    expect(s.logs.filter((l) => l.includes('"level":50')).length, 'error lines logged').toBe(0);
  }, 20_000);

  it('--max-answer-records caps a smaller answer too', async () => {
    const zone = path.join(dir, 'mid.zone');
    writeZone(zone, 'mid.test', 50, () => 'many');
    const conf = path.join(dir, 'Corefile.mid');
    writeFileSync(conf, `mid.test {\n    bind 127.0.0.1\n    file ${zone}\n}\n`);
    const s = await startServer(['--conf', conf, '--max-answer-records', '10']);
    servers.push(s);
    const tcp = parseHeader(await tcpQuery(buildQuery({ name: 'many.mid.test', type: T.A }), { port: s.port }));
    expect([tcp.rcode, tcp.tc, tcp.ancount]).toEqual([Rcode.NOERROR, true, 10]);
  });
});
