// `clusterdns resolve --audit`: per-name query counts per libc, failures and fixes.
import { describe, it, expect } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { auditCommand } from '../../src/cli/resolver-commands.js';
import { repoRoot } from '../helpers/server.js';

const sink = (): Writable & { text: string } => {
  const w = new Writable({
    write(chunk: Buffer, _enc, cb) {
      w.text += chunk.toString();
      cb();
    },
  }) as Writable & { text: string };
  w.text = '';
  return w;
};

describe('resolve --audit', () => {
  it('counts the queries of each libc from a pod and proposes fixes that cut them', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-audit-'));
    const file = path.join(dir, 'names.txt');
    fs.writeFileSync(file, '# what the app looks up\ndb\nkube-dns.kube-system.svc.cluster.local\nnope.example.\n');
    const out = sink();
    try {
      const rows = await auditCommand(file, { pod: 'apps/web-0', manifests: [path.join(repoRoot, 'examples/manifests')] }, out);
      expect(rows.map((r) => r.name)).toEqual(['db', 'kube-dns.kube-system.svc.cluster.local', 'nope.example.']);
      const [db, kubeDns, nope] = rows as [(typeof rows)[0], (typeof rows)[0], (typeof rows)[0]];
      // db is found at the first search suffix: one A+AAAA pair, nothing to fix.
      expect(db.traces.glibc.queries).toHaveLength(2);
      expect(db.fixes).toEqual([]);
      // A 4-dot name under ndots:5 walks the whole search list before the name itself.
      expect(kubeDns.traces.glibc.queries).toHaveLength(8);
      expect(kubeDns.answeredAs).toBe('kube-dns.kube-system.svc.cluster.local.');
      expect(kubeDns.fixes.join('\n')).toMatch(/fully qualified name kube-dns\.kube-system\.svc\.cluster\.local\. .*: 2 queries/);
      expect(kubeDns.fixes.join('\n')).toMatch(/ndots: "1".*: 2 queries with glibc, same answer/);
      expect(kubeDns.fixes.join('\n')).toMatch(/autopath @kubernetes/);
      // A trailing dot sends the name alone; outside every zone it is REFUSED everywhere.
      expect(nope.traces.glibc.queries.every((q) => q.name === 'nope.example.')).toBe(true);
      expect(nope.fixes.join('\n')).toMatch(/fails with every resolver/);
      expect(out.text).toMatch(/3 names, \d+ queries with glibc/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
