// `clusterdns records` prints what the server answers, the same way every time.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFileSync } from 'node:child_process';
import { launcher, repoRoot, startServer, type RunningServer } from '../helpers/server.js';
import { dnsQuery } from './udp-query.js';

const args = ['records', '--conf', 'examples/Corefile', '--manifests', 'examples/manifests'];
const runRecords = (extra: string[] = []): string => execFileSync(process.execPath, [launcher, ...args, ...extra], { cwd: repoRoot, encoding: 'utf8' });

describe('clusterdns records', () => {
  let server: RunningServer;
  let output: string;
  beforeAll(async () => {
    output = runRecords();
    server = await startServer(['--conf', 'examples/Corefile', '--manifests', 'examples/manifests']);
  }, 30000);
  afterAll(async () => server?.stop());

  it('prints byte-identical output for the same input', () => {
    expect(runRecords()).toBe(output);
  });

  it('lists the example services, SOA first in each zone', () => {
    const lines = output.split('\n');
    expect(lines[0]).toMatch(/^; zone cluster\.local\./);
    expect(lines[2]).toMatch(/^cluster\.local\.\t30\tIN\tSOA\tns\.dns\.cluster\.local\. hostmaster\.cluster\.local\. \d+ 7200 1800 86400 30$/);
    expect(lines).toContain('kubernetes.default.svc.cluster.local.\t30\tIN\tA\t10.96.0.1');
    expect(lines).toContain('kube-dns.kube-system.svc.cluster.local.\t30\tIN\tA\t10.96.0.10');
    expect(lines).toContain('search.apps.svc.cluster.local.\t30\tIN\tCNAME\twww.example.com.');
    expect(lines).toContain('10.0.96.10.in-addr.arpa.\t30\tIN\tPTR\tkube-dns.kube-system.svc.cluster.local.');
  });

  it('--zone limits the output to one zone', () => {
    const only = runRecords(['--zone', 'ip6.arpa']);
    expect(only).toMatch(/^; zone ip6\.arpa\./);
    expect(only).not.toContain('cluster.local.\t30\tIN\tSOA');
  });

  it('--output json lists the same records, in the same order, as objects', () => {
    const json = runRecords(['--output', 'json']);
    const records = JSON.parse(json) as { name: string; ttl: number; class: string; type: string; data: string }[];
    const lines = output.split('\n').filter((l) => l !== '' && !l.startsWith(';') && !l.startsWith('$ORIGIN'));
    expect(records.map((r) => [r.name, String(r.ttl), r.class, r.type, r.data].join('\t'))).toEqual(lines);
    expect(Object.keys(records[0]!)).toEqual(['name', 'ttl', 'class', 'type', 'data']);
    expect(records).toContainEqual({ name: 'kubernetes.default.svc.cluster.local.', ttl: 30, class: 'IN', type: 'A', data: '10.96.0.1' });
    expect(runRecords(['--output', 'json'])).toBe(json);
    expect(JSON.parse(runRecords(['--output', 'json', '--zone', 'ip6.arpa'])).every((r: { name: string }) => r.name.endsWith('ip6.arpa.'))).toBe(true);
  });

  it('every A, AAAA, CNAME, SRV and PTR record listed is what the running server answers', async () => {
    const groups = new Map<string, Set<string>>();
    for (const line of output.split('\n')) {
      const m = /^(\S+)\t\d+\tIN\t(A|AAAA|CNAME|SRV|PTR)\t(.+)$/.exec(line);
      if (!m) continue;
      const key = `${m[1]} ${m[2]}`;
      const set = groups.get(key) ?? new Set<string>();
      set.add(m[3]!);
      groups.set(key, set);
    }
    expect(groups.size).toBeGreaterThan(20);
    for (const [key, want] of groups) {
      const [name, type] = key.split(' ') as [string, string];
      const reply = await dnsQuery(server.port, name, type);
      const got = new Set(
        reply.answers
          .filter((a) => a.type === type)
          .map((a) => {
            const d = (a as { data: unknown }).data;
            if (type === 'SRV') {
              const s = d as { priority: number; weight: number; port: number; target: string };
              return `${s.priority} ${s.weight} ${s.port} ${s.target}.`;
            }
            return type === 'A' || type === 'AAAA' ? String(d) : `${String(d)}.`;
          }),
      );
      expect([...got].sort(), key).toEqual([...want].sort());
    }
  });
});
