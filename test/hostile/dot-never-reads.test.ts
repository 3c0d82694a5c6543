// A DNS over TLS client that pipelines queries with large answers and never reads its replies:
// the connection stops being read at its unsent cap and is closed at the write deadline, the
// server's memory stays bounded, and another DoT client is answered all along. The server runs in
// its own process with small limits set by flags so the test stays short; the flood is bounded in
// queries and time.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type tls from 'node:tls';
import { freePort, startServer, type RunningServer } from '../helpers/server.js';
import { describeNeeding } from '../helpers/tools.js';
import { holdsWithin, settleWithin } from '../helpers/wait.js';
import { dotConnect, dotExchange } from '../server/dot-client.js';
import { dotHostname, makeCerts, type TestCerts } from '../server/dot-certs.js';
import { buildQuery, fixture, frame, manifests, T } from '../server/raw.js';

/** Resident memory of a process in MiB, from /proc. */
function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

describeNeeding(['openssl'], 'a DoT client that pipelines queries and never reads the replies', () => {
  let c: TestCerts;
  let server: RunningServer;
  let port: number;
  beforeAll(async () => {
    c = makeCerts();
    port = await freePort();
    const conf = path.join(c.dir, 'Corefile');
    writeFileSync(conf, `tls://cluster.local:${port} {\n  bind 127.0.0.1\n  tls ${c.serverCert} ${c.serverKey}\n  kubernetes {\n    ttl 5\n  }\n}\n`);
    server = await startServer(['--conf', conf, '--manifests', manifests, '--tcp-write-timeout', '1s', '--tcp-max-unsent', '256KiB']);
  }, 30_000);
  afterAll(async () => {
    await server?.stop();
    c?.remove();
  });

  it('is closed at the write deadline with memory bounded, while another DoT client is answered', async () => {
    const pid = server.proc.pid!;
    const trust = { ca: c.read(c.ca), servername: dotHostname };
    const before = rssMiB(pid);
    const hostile = await dotConnect(port, trust);
    hostile.pause(); // never read: the TLS records pile up in the kernel, then in the server
    let closedAt = 0;
    hostile.on('close', () => (closedAt ||= Date.now()));
    hostile.on('error', () => undefined);
    const other = await dotConnect(port, trust);
    // ~2 KB of answer per 50-byte query: 100k queries would queue ~200 MB of replies unbounded.
    const batch = Buffer.concat(Array.from({ length: 500 }, () => frame(buildQuery({ name: fixture.big, type: T.A }))));
    let sent = 0;
    let peak = before;
    let worst = 0;
    const floodStart = Date.now();
    const deadline = floodStart + 6000;
    const writer = (async (s: tls.TLSSocket) => {
      // As fast as the server takes them, never more than one batch ahead of the kernel.
      while (sent < 100_000 && Date.now() < deadline && !closedAt) {
        if (!s.write(batch)) {
          let wake = (): void => undefined;
          await settleWithin(new Promise<void>((r) => s.once('drain', (wake = r))), 200);
          s.off('drain', wake);
        }
        sent += 500;
      }
    })(hostile);
    try {
      // Until the server closes the hostile connection (or the flood's end): memory, and a query
      // of the other client, every 100 ms.
      await holdsWithin(
        async () => {
          peak = Math.max(peak, rssMiB(pid));
          const t0 = Date.now();
          const reply = await dotExchange(other, fixture.nginx, T.A, 1000);
          expect(reply.answers?.map((a) => a.data)).toEqual(['10.96.0.10']);
          worst = Math.max(worst, Date.now() - t0);
          return closedAt !== 0;
        },
        Math.max(0, deadline - Date.now()),
        100,
      );
      await writer;
      peak = Math.max(peak, rssMiB(pid));
      const closed = await holdsWithin(() => closedAt !== 0, 5000, 20);
      console.log(
        `never-reading DoT client: ${sent} queries written, RSS ${before.toFixed(0)} -> peak ${peak.toFixed(0)} MiB, other client's worst ${worst} ms`,
      );
      expect(closed, 'a DoT client that never reads stays connected').toBe(true);
      // The 1 s write deadline closed it, not the 5 s default nor the end of the flood.
      expect(closedAt - floodStart).toBeLessThan(4000);
      expect(worst).toBeLessThan(1000);
      expect(peak - before, `RSS grew from ${before.toFixed(0)} to ${peak.toFixed(0)} MiB`).toBeLessThan(60);
      // The other client's connection was never touched.
      expect((await dotExchange(other, fixture.big, T.A)).answers).toHaveLength(fixture.bigCount);
    } finally {
      hostile.destroy();
      other.destroy();
    }
  }, 30_000);
});
