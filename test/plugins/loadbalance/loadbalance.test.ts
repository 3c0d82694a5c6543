// loadbalance: address records come back in varying order; CNAMEs stay in front.
import { describe, it, expect } from 'vitest';
import { ask } from '../../helpers/decode.js';
import path from 'node:path';
import { buildApp } from '../../../src/app.js';
import { shuffleAddresses } from '../../../src/plugins/loadbalance/plugin.js';
import type { Rr } from '../../../src/dns/records.js';
import { repoRoot } from '../../helpers/server.js';

const rr = (name: string, type: string, data: string): Rr => ({ name, type, class: 'IN', ttl: 5, data }) as Rr;
const dataOf = (r: Rr): unknown => (r.type === 'OPT' ? undefined : r.data);

describe('loadbalance', () => {
  it('shuffles only the address records and keeps the CNAME first', () => {
    const answer = [rr('a.', 'CNAME', 'b.'), rr('b.', 'A', '10.0.0.1'), rr('b.', 'A', '10.0.0.2'), rr('b.', 'A', '10.0.0.3')];
    const out = shuffleAddresses(answer, () => 0);
    expect(out[0]).toBe(answer[0]);
    expect(out.slice(1).map(dataOf).sort()).toEqual(['10.0.0.1', '10.0.0.2', '10.0.0.3']);
    expect(out.map(dataOf)).not.toEqual(answer.map(dataOf));
  });

  it('serves every order of a headless service over repeated queries, through the answer cache', async () => {
    const app = await buildApp({
      corefileText: `cluster.local {\n  loadbalance\n  kubernetes {\n    manifests ${path.join(repoRoot, 'examples/manifests')}\n  }\n}\n`,
    });
    try {
      const orders = new Set<string>();
      for (let i = 0; i < 60 && orders.size < 2; i++) {
        const r = await ask(app, 'nginx.apps.svc.cluster.local', 'A');
        orders.add(r.answers!.map((a) => String(a.data)).join(','));
      }
      expect([...orders].sort()).toEqual(['10.244.1.10,10.244.2.11', '10.244.2.11,10.244.1.10']);
    } finally {
      await app.close();
    }
  });

  it('rejects unknown policies with the line', async () => {
    await expect(
      buildApp({ corefileText: 'cluster.local {\n  loadbalance weighted /x\n  kubernetes {\n    manifests examples/manifests\n  }\n}\n' }),
    ).rejects.toThrow(/Corefile:2: loadbalance/);
  });
});
