// coredns_forward_responses_total labels an upstream's rcode with CoreDNS's name (YXDOMAIN, not
// RCODE6; RCODE12 for a code without a name), as dashboards built for CoreDNS expect.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestDns } from '../fixtures/forward/upstreams.js';
import { freePort, startServer, type RunningServer } from '../helpers/server.js';
import { dnsQuery } from '../cli/udp-query.js';

const RCODES: Record<string, number> = { 'yx.example.': 6, 'nxrrset.example.': 8, 'twelve.example.': 12 };

describe('forward rcode labels', () => {
  let upstream: TestDns;
  let server: RunningServer;
  let metricsPort: number;
  let dir: string;
  beforeAll(async () => {
    upstream = await new TestDns((q) => ({ rcode: RCODES[`${q.name.toLowerCase()}.`] ?? 0 })).start();
    metricsPort = await freePort();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-rcode-'));
    const conf = path.join(dir, 'Corefile');
    fs.writeFileSync(conf, `. {\n  bind 127.0.0.1\n  prometheus 127.0.0.1:${metricsPort}\n  forward . 127.0.0.1:${upstream.port}\n}\n`);
    server = await startServer(['--conf', conf]);
  }, 30000);
  afterAll(async () => {
    await server?.stop();
    await upstream?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('names YXDOMAIN, NXRRSET and RCODE12 as CoreDNS does', async () => {
    for (const name of Object.keys(RCODES)) await dnsQuery(server.port, name.slice(0, -1), 'A');
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const labels = text
      .split('\n')
      .filter((l) => l.startsWith('coredns_forward_responses_total{'))
      .map((l) => /rcode="([^"]*)"/.exec(l)?.[1])
      .sort();
    expect(labels).toEqual(['NXRRSET', 'RCODE12', 'YXDOMAIN']);
  });
});
