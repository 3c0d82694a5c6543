// `clusterdns diff`: a table of edits, each diffed by the real CLI into every format and checked
// against the exact output; --exit-code both ways; usage errors.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launcher } from '../helpers/server.js';
import { BASE, BILLING, CART, COREFILE, SHOP, SHOP_HOST, edit, type Tree } from './diff-fixtures.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'clusterdns-diff-'));
// Each diff loads both trees twice; on a shared machine a run takes seconds.
const SLOW = 120000;

function writeTree(dir: string, tree: Tree): void {
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(tree)) writeFileSync(path.join(dir, name), text);
}

/** Runs `clusterdns diff ...args` in `cwd`, NO_COLOR unset so that only the terminal test decides colour. */
function run(cwd: string, ...args: string[]): { code: number | null; out: string; err: string } {
  const env = { ...process.env };
  delete env.NO_COLOR;
  const r = spawnSync(process.execPath, [launcher, 'diff', ...args], { cwd, encoding: 'utf8', timeout: 110000, env });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

type Data = readonly [ttl: number, data: readonly string[]];
interface Where {
  object: { kind: string; namespace: string; name: string };
  source: { file: string; line: number };
}
const at = (kind: string, namespace: string, name: string, file: string, line: number): Where => ({
  object: { kind, namespace, name },
  source: { file, line },
});
/** One change as the JSON output has it. */
function change(kind: 'added' | 'removed' | 'changed', zone: string, name: string, type: string, old: Data | undefined, now: Data | undefined, where: Where) {
  return {
    change: kind,
    zone,
    name,
    type,
    ...(old ? { old: { ttl: old[0], data: old[1] } } : {}),
    ...(now ? { new: { ttl: now[0], data: now[1] } } : {}),
    ...where,
  };
}

const API_1 = at('Pod', 'shop', 'api-1', 'shop.yaml', 18);
const CART_SVC = at('Service', 'shop', 'cart', 'shop.yaml', 88);
const DB_A = at('Pod', 'shop', 'db-a', 'shop.yaml', 38);
const DB_B = at('Pod', 'shop', 'db-b', 'shop.yaml', 49);
const INVOICES = at('Service', 'billing', 'invoices', 'billing.yaml', 6);
const INVOICES_SRV = '0 100 443 invoices.billing.svc.cluster.local.';
const NO_PODS =
  'Service "billing/invoices": selector app=invoices matches no pods in namespace "billing", so it has no endpoints: its cluster IP resolves but connections to it fail, and SRV lookups find no endpoints; make the selector match the labels of the pod template (spec.template.metadata.labels) or add the workload';

interface Case {
  name: string;
  tree: Tree;
  text: string;
  markdown: string;
  /** The JSON document's summary, namespaces and findings. */
  json: { summary: Record<string, number>; namespaces: unknown[]; findings: { appeared: unknown[]; disappeared: unknown[] } };
}

const summary = (added: number, removed: number, changed: number, findingsAppeared = 0, findingsDisappeared = 0) => ({
  added,
  removed,
  changed,
  findingsAppeared,
  findingsDisappeared,
});
const TABLE_HEAD = '| | name | type | old | new | TTL | object | source |\n|---|---|---|---|---|---|---|---|';

const cases: Case[] = [
  {
    name: 'Service added',
    tree: { ...BASE, 'shop.yaml': SHOP + CART },
    text: `diff old new: record sets: 5 added, 0 removed, 1 changed; findings: 0 appeared, 0 disappeared

namespace shop
  + cart.shop.svc.cluster.local. A 10.96.0.40 (TTL 30)
      Service shop/cart (shop.yaml:88)
  + cart.shop.svc.cluster.local. SRV 0 100 8080 cart.shop.svc.cluster.local. (TTL 30)
      Service shop/cart (shop.yaml:88)
  + 10-244-0-10.cart.shop.svc.cluster.local. A 10.244.0.10 (TTL 30)
      Pod shop/api-1 (shop.yaml:18)
  + _http._tcp.cart.shop.svc.cluster.local. SRV 0 100 8080 cart.shop.svc.cluster.local. (TTL 30)
      Service shop/cart (shop.yaml:88)
  ~ 10.0.244.10.in-addr.arpa. PTR 10-244-0-10.api.shop.svc.cluster.local. -> 10-244-0-10.api.shop.svc.cluster.local., 10-244-0-10.cart.shop.svc.cluster.local. (TTL 30)
      Pod shop/api-1 (shop.yaml:18)
  + 40.0.96.10.in-addr.arpa. PTR cart.shop.svc.cluster.local. (TTL 30)
      Service shop/cart (shop.yaml:88)
`,
    markdown: `**clusterdns diff** \`old\` → \`new\`: record sets: 5 added, 0 removed, 1 changed; findings: 0 appeared, 0 disappeared

#### namespace shop

${TABLE_HEAD}
| + | \`cart.shop.svc.cluster.local.\` | A |  | \`10.96.0.40\` | 30 | Service shop/cart | \`shop.yaml:88\` |
| + | \`cart.shop.svc.cluster.local.\` | SRV |  | \`0 100 8080 cart.shop.svc.cluster.local.\` | 30 | Service shop/cart | \`shop.yaml:88\` |
| + | \`10-244-0-10.cart.shop.svc.cluster.local.\` | A |  | \`10.244.0.10\` | 30 | Pod shop/api-1 | \`shop.yaml:18\` |
| + | \`_http._tcp.cart.shop.svc.cluster.local.\` | SRV |  | \`0 100 8080 cart.shop.svc.cluster.local.\` | 30 | Service shop/cart | \`shop.yaml:88\` |
| ~ | \`10.0.244.10.in-addr.arpa.\` | PTR | \`10-244-0-10.api.shop.svc.cluster.local.\` | \`10-244-0-10.api.shop.svc.cluster.local.\`<br>\`10-244-0-10.cart.shop.svc.cluster.local.\` | 30 | Pod shop/api-1 | \`shop.yaml:18\` |
| + | \`40.0.96.10.in-addr.arpa.\` | PTR |  | \`cart.shop.svc.cluster.local.\` | 30 | Service shop/cart | \`shop.yaml:88\` |
`,
    json: {
      summary: summary(5, 0, 1),
      namespaces: [
        {
          namespace: 'shop',
          changes: [
            change('added', 'cluster.local.', 'cart.shop.svc.cluster.local.', 'A', undefined, [30, ['10.96.0.40']], CART_SVC),
            change('added', 'cluster.local.', 'cart.shop.svc.cluster.local.', 'SRV', undefined, [30, ['0 100 8080 cart.shop.svc.cluster.local.']], CART_SVC),
            change('added', 'cluster.local.', '10-244-0-10.cart.shop.svc.cluster.local.', 'A', undefined, [30, ['10.244.0.10']], API_1),
            change(
              'added',
              'cluster.local.',
              '_http._tcp.cart.shop.svc.cluster.local.',
              'SRV',
              undefined,
              [30, ['0 100 8080 cart.shop.svc.cluster.local.']],
              CART_SVC,
            ),
            change(
              'changed',
              'in-addr.arpa.',
              '10.0.244.10.in-addr.arpa.',
              'PTR',
              [30, ['10-244-0-10.api.shop.svc.cluster.local.']],
              [30, ['10-244-0-10.api.shop.svc.cluster.local.', '10-244-0-10.cart.shop.svc.cluster.local.']],
              API_1,
            ),
            change('added', 'in-addr.arpa.', '40.0.96.10.in-addr.arpa.', 'PTR', undefined, [30, ['cart.shop.svc.cluster.local.']], CART_SVC),
          ],
        },
      ],
      findings: { appeared: [], disappeared: [] },
    },
  },
  {
    name: 'port renamed',
    tree: { ...BASE, 'billing.yaml': edit(BILLING, 'name: https', 'name: tls') },
    text: `diff old new: record sets: 1 added, 1 removed, 0 changed; findings: 0 appeared, 0 disappeared

namespace billing
  - _https._tcp.invoices.billing.svc.cluster.local. SRV 0 100 443 invoices.billing.svc.cluster.local. (TTL 30)
      Service billing/invoices (billing.yaml:6)
  + _tls._tcp.invoices.billing.svc.cluster.local. SRV 0 100 443 invoices.billing.svc.cluster.local. (TTL 30)
      Service billing/invoices (billing.yaml:6)
`,
    markdown: `**clusterdns diff** \`old\` → \`new\`: record sets: 1 added, 1 removed, 0 changed; findings: 0 appeared, 0 disappeared

#### namespace billing

${TABLE_HEAD}
| − | \`_https._tcp.invoices.billing.svc.cluster.local.\` | SRV | \`0 100 443 invoices.billing.svc.cluster.local.\` |  | 30 | Service billing/invoices | \`billing.yaml:6\` |
| + | \`_tls._tcp.invoices.billing.svc.cluster.local.\` | SRV |  | \`0 100 443 invoices.billing.svc.cluster.local.\` | 30 | Service billing/invoices | \`billing.yaml:6\` |
`,
    json: {
      summary: summary(1, 1, 0),
      namespaces: [
        {
          namespace: 'billing',
          changes: [
            change('removed', 'cluster.local.', '_https._tcp.invoices.billing.svc.cluster.local.', 'SRV', [30, [INVOICES_SRV]], undefined, INVOICES),
            change('added', 'cluster.local.', '_tls._tcp.invoices.billing.svc.cluster.local.', 'SRV', undefined, [30, [INVOICES_SRV]], INVOICES),
          ],
        },
      ],
      findings: { appeared: [], disappeared: [] },
    },
  },
  {
    name: 'selector changed, endpoints move',
    tree: { ...BASE, 'shop.yaml': edit(SHOP, 'selector: {app: db-v1}', 'selector: {app: db-v2}') },
    text: `diff old new: record sets: 2 added, 2 removed, 1 changed; findings: 0 appeared, 0 disappeared

namespace shop
  ~ db.shop.svc.cluster.local. A 10.244.0.21 -> 10.244.0.22 (TTL 30)
      Service shop/db (shop.yaml:29)
  - 10-244-0-21.db.shop.svc.cluster.local. A 10.244.0.21 (TTL 30)
      Pod shop/db-a (shop.yaml:38)
  + 10-244-0-22.db.shop.svc.cluster.local. A 10.244.0.22 (TTL 30)
      Pod shop/db-b (shop.yaml:49)
  - 21.0.244.10.in-addr.arpa. PTR 10-244-0-21.db.shop.svc.cluster.local. (TTL 30)
      Pod shop/db-a (shop.yaml:38)
  + 22.0.244.10.in-addr.arpa. PTR 10-244-0-22.db.shop.svc.cluster.local. (TTL 30)
      Pod shop/db-b (shop.yaml:49)
`,
    markdown: `**clusterdns diff** \`old\` → \`new\`: record sets: 2 added, 2 removed, 1 changed; findings: 0 appeared, 0 disappeared

#### namespace shop

${TABLE_HEAD}
| ~ | \`db.shop.svc.cluster.local.\` | A | \`10.244.0.21\` | \`10.244.0.22\` | 30 | Service shop/db | \`shop.yaml:29\` |
| − | \`10-244-0-21.db.shop.svc.cluster.local.\` | A | \`10.244.0.21\` |  | 30 | Pod shop/db-a | \`shop.yaml:38\` |
| + | \`10-244-0-22.db.shop.svc.cluster.local.\` | A |  | \`10.244.0.22\` | 30 | Pod shop/db-b | \`shop.yaml:49\` |
| − | \`21.0.244.10.in-addr.arpa.\` | PTR | \`10-244-0-21.db.shop.svc.cluster.local.\` |  | 30 | Pod shop/db-a | \`shop.yaml:38\` |
| + | \`22.0.244.10.in-addr.arpa.\` | PTR |  | \`10-244-0-22.db.shop.svc.cluster.local.\` | 30 | Pod shop/db-b | \`shop.yaml:49\` |
`,
    json: {
      summary: summary(2, 2, 1),
      namespaces: [
        {
          namespace: 'shop',
          changes: [
            change(
              'changed',
              'cluster.local.',
              'db.shop.svc.cluster.local.',
              'A',
              [30, ['10.244.0.21']],
              [30, ['10.244.0.22']],
              at('Service', 'shop', 'db', 'shop.yaml', 29),
            ),
            change('removed', 'cluster.local.', '10-244-0-21.db.shop.svc.cluster.local.', 'A', [30, ['10.244.0.21']], undefined, DB_A),
            change('added', 'cluster.local.', '10-244-0-22.db.shop.svc.cluster.local.', 'A', undefined, [30, ['10.244.0.22']], DB_B),
            change('removed', 'in-addr.arpa.', '21.0.244.10.in-addr.arpa.', 'PTR', [30, ['10-244-0-21.db.shop.svc.cluster.local.']], undefined, DB_A),
            change('added', 'in-addr.arpa.', '22.0.244.10.in-addr.arpa.', 'PTR', undefined, [30, ['10-244-0-22.db.shop.svc.cluster.local.']], DB_B),
          ],
        },
      ],
      findings: { appeared: [], disappeared: [] },
    },
  },
  {
    name: 'ExternalName target changed',
    tree: { ...BASE, 'shop.yaml': edit(SHOP, 'old.example.net', 'new.example.net') },
    text: `diff old new: record sets: 0 added, 0 removed, 1 changed; findings: 0 appeared, 0 disappeared

namespace shop
  ~ legacy.shop.svc.cluster.local. CNAME old.example.net. -> new.example.net. (TTL 30)
      Service shop/legacy (shop.yaml:60)
`,
    markdown: `**clusterdns diff** \`old\` → \`new\`: record sets: 0 added, 0 removed, 1 changed; findings: 0 appeared, 0 disappeared

#### namespace shop

${TABLE_HEAD}
| ~ | \`legacy.shop.svc.cluster.local.\` | CNAME | \`old.example.net.\` | \`new.example.net.\` | 30 | Service shop/legacy | \`shop.yaml:60\` |
`,
    json: {
      summary: summary(0, 0, 1),
      namespaces: [
        {
          namespace: 'shop',
          changes: [
            change(
              'changed',
              'cluster.local.',
              'legacy.shop.svc.cluster.local.',
              'CNAME',
              [30, ['old.example.net.']],
              [30, ['new.example.net.']],
              at('Service', 'shop', 'legacy', 'shop.yaml', 60),
            ),
          ],
        },
      ],
      findings: { appeared: [], disappeared: [] },
    },
  },
  {
    name: 'Ingress host added (k8s_gateway)',
    tree: { ...BASE, 'shop.yaml': edit(SHOP, '  - host: www.example.com', SHOP_HOST) },
    text: `diff old new: record sets: 1 added, 0 removed, 0 changed; findings: 0 appeared, 0 disappeared

namespace shop
  + shop.example.com. A 203.0.113.10 (TTL 60)
      Ingress shop/www (shop.yaml:69)
`,
    markdown: `**clusterdns diff** \`old\` → \`new\`: record sets: 1 added, 0 removed, 0 changed; findings: 0 appeared, 0 disappeared

#### namespace shop

${TABLE_HEAD}
| + | \`shop.example.com.\` | A |  | \`203.0.113.10\` | 60 | Ingress shop/www | \`shop.yaml:69\` |
`,
    json: {
      summary: summary(1, 0, 0),
      namespaces: [
        {
          namespace: 'shop',
          changes: [
            change('added', 'example.com.', 'shop.example.com.', 'A', undefined, [60, ['203.0.113.10']], at('Ingress', 'shop', 'www', 'shop.yaml', 69)),
          ],
        },
      ],
      findings: { appeared: [], disappeared: [] },
    },
  },
  {
    name: 'namespace deleted',
    tree: { 'shop.yaml': SHOP },
    text: `diff old new: record sets: 0 added, 4 removed, 0 changed; findings: 0 appeared, 1 disappeared

namespace billing
  - invoices.billing.svc.cluster.local. A 10.96.0.30 (TTL 30)
      Service billing/invoices (billing.yaml:6)
  - invoices.billing.svc.cluster.local. SRV 0 100 443 invoices.billing.svc.cluster.local. (TTL 30)
      Service billing/invoices (billing.yaml:6)
  - _https._tcp.invoices.billing.svc.cluster.local. SRV 0 100 443 invoices.billing.svc.cluster.local. (TTL 30)
      Service billing/invoices (billing.yaml:6)
  - 30.0.96.10.in-addr.arpa. PTR invoices.billing.svc.cluster.local. (TTL 30)
      Service billing/invoices (billing.yaml:6)

findings disappeared
  - billing.yaml:13: warning: ${NO_PODS} [selector-no-pods]
`,
    markdown: `**clusterdns diff** \`old\` → \`new\`: record sets: 0 added, 4 removed, 0 changed; findings: 0 appeared, 1 disappeared

#### namespace billing

${TABLE_HEAD}
| − | \`invoices.billing.svc.cluster.local.\` | A | \`10.96.0.30\` |  | 30 | Service billing/invoices | \`billing.yaml:6\` |
| − | \`invoices.billing.svc.cluster.local.\` | SRV | \`${INVOICES_SRV}\` |  | 30 | Service billing/invoices | \`billing.yaml:6\` |
| − | \`_https._tcp.invoices.billing.svc.cluster.local.\` | SRV | \`${INVOICES_SRV}\` |  | 30 | Service billing/invoices | \`billing.yaml:6\` |
| − | \`30.0.96.10.in-addr.arpa.\` | PTR | \`invoices.billing.svc.cluster.local.\` |  | 30 | Service billing/invoices | \`billing.yaml:6\` |

#### findings

| | severity | code | message | source |
|---|---|---|---|---|
| − | warning | selector-no-pods | ${NO_PODS} | \`billing.yaml:13\` |
`,
    json: {
      summary: summary(0, 4, 0, 0, 1),
      namespaces: [
        {
          namespace: 'billing',
          changes: [
            change('removed', 'cluster.local.', 'invoices.billing.svc.cluster.local.', 'A', [30, ['10.96.0.30']], undefined, INVOICES),
            change('removed', 'cluster.local.', 'invoices.billing.svc.cluster.local.', 'SRV', [30, [INVOICES_SRV]], undefined, INVOICES),
            change('removed', 'cluster.local.', '_https._tcp.invoices.billing.svc.cluster.local.', 'SRV', [30, [INVOICES_SRV]], undefined, INVOICES),
            change('removed', 'in-addr.arpa.', '30.0.96.10.in-addr.arpa.', 'PTR', [30, ['invoices.billing.svc.cluster.local.']], undefined, INVOICES),
          ],
        },
      ],
      findings: {
        appeared: [],
        disappeared: [
          {
            file: 'billing.yaml',
            line: 13,
            severity: 'warning',
            code: 'selector-no-pods',
            message: NO_PODS,
            object: { kind: 'Service', namespace: 'billing', name: 'invoices' },
          },
        ],
      },
    },
  },
];

/** The directory of a case: `old` (the base tree) and `new` (the edited one) side by side. */
const caseDir = (c: Case): string => path.join(root, c.name.replace(/[^a-z0-9]+/gi, '-'));

describe('clusterdns diff OLD NEW', { timeout: SLOW }, () => {
  beforeAll(() => {
    writeFileSync(path.join(root, 'Corefile'), COREFILE);
    for (const c of cases) {
      writeTree(path.join(caseDir(c), 'old'), BASE);
      writeTree(path.join(caseDir(c), 'new'), c.tree);
    }
    writeTree(path.join(root, 'same', 'old'), BASE);
    writeTree(path.join(root, 'same', 'new'), BASE);
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  describe.each(cases)('$name', (c) => {
    it('text (no colour when not on a terminal)', () => {
      const r = run(caseDir(c), '--conf', '../Corefile', 'old', 'new');
      expect(r.err).toBe('');
      expect(r.out).toBe(c.text);
      expect(r.code).toBe(0);
    });

    it('markdown', () => {
      expect(run(caseDir(c), '--conf', '../Corefile', 'old', 'new', '--output', 'markdown').out).toBe(c.markdown);
    });

    it('json', () => {
      const r = run(caseDir(c), '--conf', '../Corefile', 'old', 'new', '--output', 'json');
      expect(JSON.parse(r.out)).toEqual({ version: 1, old: 'old', new: 'new', ...c.json });
    });
  });

  it('--exit-code: 1 when something changed, 0 when nothing did', () => {
    const changed = run(caseDir(cases[3]!), '--conf', '../Corefile', 'old', 'new', '--exit-code');
    expect(changed.code).toBe(1);
    expect(changed.out).toBe(cases[3]!.text);
    const same = run(path.join(root, 'same'), '--conf', '../Corefile', 'old', 'new', '--exit-code');
    expect(same.out).toBe('diff old new: record sets: 0 added, 0 removed, 0 changed; findings: 0 appeared, 0 disappeared\n');
    expect(same.code).toBe(0);
  });

  it('--max-rows: a Markdown comment keeps that many rows and counts the rest; the summary counts all', () => {
    const c = cases[2]!;
    const r = run(caseDir(c), '--conf', '../Corefile', 'old', 'new', '--output', 'markdown', '--max-rows', '2');
    expect(r.out).toBe(`**clusterdns diff** \`old\` → \`new\`: record sets: 2 added, 2 removed, 1 changed; findings: 0 appeared, 0 disappeared

#### namespace shop

${TABLE_HEAD}
| ~ | \`db.shop.svc.cluster.local.\` | A | \`10.244.0.21\` | \`10.244.0.22\` | 30 | Service shop/db | \`shop.yaml:29\` |
| − | \`10-244-0-21.db.shop.svc.cluster.local.\` | A | \`10.244.0.21\` |  | 30 | Pod shop/db-a | \`shop.yaml:38\` |

_3 more record sets not shown (--max-rows 2): \`clusterdns diff\` lists them all._
`);
    expect(run(caseDir(c), '--conf', '../Corefile', 'old', 'new', '--output', 'markdown', '--max-rows', '0').out).toBe(c.markdown);
  });

  it('swapping the sides swaps added and removed', () => {
    const r = run(caseDir(cases[1]!), '--conf', '../Corefile', 'new', 'old', '--output', 'json');
    const doc = JSON.parse(r.out) as { summary: Record<string, number>; namespaces: { changes: { change: string; name: string }[] }[] };
    expect(doc.summary).toEqual(summary(1, 1, 0));
    expect(doc.namespaces[0]!.changes.map((x) => `${x.change} ${x.name}`)).toEqual([
      'added _https._tcp.invoices.billing.svc.cluster.local.',
      'removed _tls._tcp.invoices.billing.svc.cluster.local.',
    ]);
  });

  it('--color always colours the marks; the text is otherwise the same', () => {
    const c = cases[1]!;
    const r = run(caseDir(c), '--conf', '../Corefile', 'old', 'new', '--color', 'always');
    expect(r.out).toContain('\x1b[31m  - _https._tcp.invoices.billing.svc.cluster.local. SRV');
    expect(r.out).toContain('\x1b[32m  + _tls._tcp.invoices.billing.svc.cluster.local. SRV');
    expect(r.out.replace(/\x1b\[[0-9;]*m/g, '')).toBe(c.text);
  });

  it('exits 2 with a message on a command that cannot run', () => {
    const one = run(root, 'old');
    expect(one.code).toBe(2);
    expect(one.err).toMatch(/give two manifest paths, OLD and NEW/);
    const missing = run(root, '--conf', 'Corefile', 'same/old', 'nowhere');
    expect(missing.code).toBe(2);
    expect(missing.err).toBe('clusterdns diff: nowhere: no such file or directory\n');
    const flag = run(root, 'same/old', 'same/new', '--output', 'yaml');
    expect(flag.code).toBe(2);
    const lone = run(root, 'same/old', 'same/new', '--from', 'shop/api-1');
    expect(lone.code).toBe(2);
    expect(lone.err).toMatch(/--from POD and --name NAME go together/);
    const libc = run(root, 'same/old', 'same/new', '--from', 'shop/api-1', '--name', 'db', '--libc', 'bionic');
    expect(libc.code).toBe(2);
    expect(libc.err).toBe('clusterdns diff: --libc "bionic" is not one of glibc, musl, go\n');
  });

  it('pods derived from a workload are traced to the workload, at its line', () => {
    const deployment = (replicas: number) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: cache
  namespace: shop
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: cache}
  template:
    metadata:
      labels: {app: cache}
    spec:
      containers: [{name: cache, image: redis}]
`;
    const service = `---
apiVersion: v1
kind: Service
metadata:
  name: cache
  namespace: shop
spec:
  clusterIP: None
  selector: {app: cache}
  ports:
  - {name: redis, port: 6379}
`;
    const dir = path.join(root, 'derived');
    writeTree(path.join(dir, 'old'), { 'cache.yaml': deployment(1) + service });
    writeTree(path.join(dir, 'new'), { 'cache.yaml': deployment(2) + service });
    const doc = JSON.parse(run(dir, '--conf', '../Corefile', 'old', 'new', '--output', 'json').out) as {
      namespaces: { namespace: string; changes: { change: string; name: string; type: string; object?: unknown; source?: unknown }[] }[];
    };
    const changes = doc.namespaces.flatMap((n) => n.changes);
    const endpoint = changes.find((c) => c.change === 'added' && /^10-244-\d+-\d+\.cache\.shop\.svc\.cluster\.local\.$/.test(c.name) && c.type === 'A');
    expect(endpoint).toMatchObject({ object: { kind: 'Deployment', namespace: 'shop', name: 'cache' }, source: { file: 'cache.yaml', line: 1 } });
    const headless = changes.find((c) => c.name === 'cache.shop.svc.cluster.local.' && c.type === 'A');
    expect(headless).toMatchObject({
      change: 'changed',
      object: { kind: 'Service', namespace: 'shop', name: 'cache' },
      source: { file: 'cache.yaml', line: 16 },
    });
  });

  it('--from POD --name NAME: the walk before and after, marked when it changed', () => {
    const c = cases[2]!;
    const r = run(caseDir(c), '--conf', '../Corefile', 'old', 'new', '--from', 'shop/api-1', '--name', 'db', '--name', 'api.shop');
    expect(r.out.slice(c.text.length)).toBe(`
resolve from shop/api-1 (glibc)
  ~ db: ok 10.244.0.21 (2 queries) -> ok 10.244.0.22 (2 queries)
      before:
        1. db.shop.svc.cluster.local. A NOERROR A 10.244.0.21
        2. db.shop.svc.cluster.local. AAAA NOERROR
      after:
        1. db.shop.svc.cluster.local. A NOERROR A 10.244.0.22
        2. db.shop.svc.cluster.local. AAAA NOERROR
  = api.shop: ok 10.96.0.20 (4 queries)
`);
    const md = run(caseDir(c), '--conf', '../Corefile', 'old', 'new', '--from', 'shop/api-1', '--name', 'db', '--name', 'api.shop', '--output', 'markdown');
    expect(md.out.slice(c.markdown.length)).toBe(`
#### resolve from shop/api-1 (glibc)

| | name | before | after |
|---|---|---|---|
| ~ | \`db\` | ok 10.244.0.21 (2 queries) | ok 10.244.0.22 (2 queries) |
| = | \`api.shop\` | ok 10.96.0.20 (4 queries) | ok 10.96.0.20 (4 queries) |
`);
    // Walks that did not change add nothing for --exit-code.
    const same = run(path.join(root, 'same'), '--conf', '../Corefile', 'old', 'new', '--from', 'shop/api-1', '--name', 'db', '--exit-code');
    expect(same.code).toBe(0);
  });
});
