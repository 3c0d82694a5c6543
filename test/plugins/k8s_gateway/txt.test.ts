// TXT answers of k8s_gateway: a DNSEndpoint's text is cut into 255-octet strings as the plugin's
// split255 cuts it, counting UTF-8 octets (a Go string's length), and a text of exactly 255·k
// octets ends with an empty string, as there.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { digQuery } from '../../helpers/clients.js';
import { startServer, which, type RunningServer } from '../../helpers/server.js';
import { describeNeeding } from '../../helpers/tools.js';

const dig = which('dig');
const A255 = 'a'.repeat(255);
// 150 × 'é' is 300 octets: the cut falls inside the 128th character, as Go's byte slicing does.
const E150 = 'é'.repeat(150);

const manifest = `apiVersion: externaldns.k8s.io/v1alpha1
kind: DNSEndpoint
metadata:
  name: texts
  namespace: apps
spec:
  endpoints:
    - dnsName: short.example.com
      recordType: TXT
      targets: ["hello"]
    - dnsName: exact.example.com
      recordType: TXT
      targets: ["${A255}"]
    - dnsName: utf8.example.com
      recordType: TXT
      targets: ["${E150}"]
`;

/** dig's presentation of octets: printable ASCII as is, others as \\DDD. */
function present(octets: Buffer): string {
  let out = '';
  for (const b of octets) out += b >= 0x20 && b < 0x7f && b !== 0x22 && b !== 0x5c ? String.fromCharCode(b) : `\\${String(b).padStart(3, '0')}`;
  return `"${out}"`;
}

describeNeeding(['dig'], 'k8s_gateway TXT strings (dig)', () => {
  let server: RunningServer;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-gw-txt-'));
    writeFileSync(path.join(dir, 'Corefile'), 'example.com {\n    bind 127.0.0.1\n    k8s_gateway {\n        resources DNSEndpoint\n    }\n}\n');
    writeFileSync(path.join(dir, 'endpoints.yaml'), manifest);
    server = await startServer(['--conf', path.join(dir, 'Corefile'), '--manifests', dir]);
  });
  afterAll(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const utf8 = Buffer.from(E150, 'utf8');
  it.each([
    ['short.example.com', ['"hello"']],
    ['exact.example.com', [`"${A255}"`, '""']],
    ['utf8.example.com', [present(utf8.subarray(0, 255)), present(utf8.subarray(255))]],
  ])('%s', async (name, strings) => {
    for (const tcp of [false, true]) {
      const obs = await digQuery(dig!, server.port, name, 'TXT', tcp);
      expect(obs.rcode).toBe('NOERROR');
      expect(obs.answer.map((l) => l.split(/\s+/).join(' '))).toEqual([`${name}. 60 IN TXT ${strings.join(' ')}`]);
    }
  });
});
