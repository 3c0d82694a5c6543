// The feed (src/cluster/feed.ts) against full loads: random edit sequences over a small tree of
// manifest files, and after each edit the feed's reload must give the model and findings a full
// load of the same tree gives (with an admission history: the full load given the previous full
// load's history, as the kubernetes plugin's loads are). A seeded PRNG makes every sequence
// replayable: a failure names its seed and edits.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { loadManifests, type LoadResult } from '../../src/cluster/load.js';
import { ManifestError } from '../../src/cluster/model/finding.js';
import type { AdmissionHistory } from '../../src/cluster/admit/history.js';
import { ManifestFeed } from '../../src/cluster/feed.js';
import { prng } from '../helpers/prng.js';
import { generatedName } from '../../src/cluster/emulate/workloads.js';

const root = mkdtempSync(path.join(tmpdir(), 'clusterdns-feed-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Obj = Record<string, unknown>;

const service = (name: string, ns: string, app: string, port = 80): Obj => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: ns },
  spec: { selector: { app }, ports: [{ name: 'http', port, targetPort: 8080 }] },
});
const deployment = (name: string, ns: string, app: string, replicas: number): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: ns },
  spec: { replicas, selector: { matchLabels: { app } }, template: { metadata: { labels: { app } }, spec: { containers: [{ name: 'c', image: 'x' }] } } },
});
const crd = (): Obj => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } },
      },
    ],
  },
});
const widget = (name: string, ns: string, size: unknown): Obj => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name, namespace: ns },
  spec: { size },
});
const ingress = (name: string, ns: string, host: string, svc: string): Obj => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { name, namespace: ns },
  spec: { rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: svc, port: { number: 80 } } } }] } }] },
});
const namespace = (name: string): Obj => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const template = (app: string, extra: Obj = {}): Obj => ({
  metadata: { labels: { app, ...extra } },
  spec: { containers: [{ name: 'c', image: 'x', ports: [{ name: 'http', containerPort: 8080 }] }] },
});
const statefulSet = (name: string, ns: string, app: string, replicas: number): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name, namespace: ns },
  spec: { serviceName: name, replicas, selector: { matchLabels: { app } }, template: template(app) },
});
const headless = (name: string, ns: string, app: string): Obj => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: ns },
  spec: { clusterIP: 'None', selector: { app }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
});
const daemonSet = (name: string, ns: string, app: string, hostNetwork: boolean): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: { name, namespace: ns },
  spec: { selector: { matchLabels: { app } }, template: { metadata: { labels: { app } }, spec: { hostNetwork, containers: [{ name: 'c', image: 'x' }] } } },
});
const job = (name: string, ns: string, app: string, completions: number): Obj => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name, namespace: ns },
  spec: {
    completions,
    parallelism: completions,
    completionMode: 'Indexed',
    template: { metadata: { labels: { app } }, spec: { restartPolicy: 'Never', subdomain: app, containers: [{ name: 'c', image: 'x' }] } },
  },
});
const node = (name: string, ip: string, zone: string): Obj => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels: { 'topology.kubernetes.io/zone': zone } },
  status: { addresses: [{ type: 'InternalIP', address: ip }] },
});
/** A pod that declares its address (from the small pod CIDR: the probing must step past it). */
const declaredPod = (name: string, ns: string, app: string, ip: string): Obj => ({
  ...pod(name, ns, app),
  status: { phase: 'Running', podIP: ip, podIPs: [{ ip }] },
});
/**
 * An EndpointSlice of another Service, named as the endpoints controller names the first slice
 * of Service "web" in "a": that slice must take the next name (and the kept one not stand).
 */
const clashingSlice = (): Obj => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: {
    name: generatedName('web-', `a/web/IPv4/${JSON.stringify([{ name: 'http', protocol: 'TCP', port: 8080 }])}/0`),
    namespace: 'a',
    labels: { 'kubernetes.io/service-name': 'elsewhere' },
  },
  addressType: 'IPv4',
  endpoints: [{ addresses: ['10.9.9.9'] }],
});
/** A running pod without an address: the load gives it one. */
const pod = (name: string, ns: string, app: string): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: ns, labels: { app } },
  spec: { containers: [{ name: 'c', image: 'x' }] },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
});

/**
 * Modification times in whole seconds, the last one: the files' times can then be written back
 * exactly, and several writes in one second give one time (what a coarse file system does).
 */
function stamp(p: string): void {
  const s = Math.floor(Date.now() / 1000);
  utimesSync(p, s, s);
}

/** The tree: file name -> its objects, plus files whose text is broken on purpose. */
interface Tree {
  files: Map<string, Obj[]>;
  broken: Set<string>;
}

function fileText(name: string, objs: readonly Obj[], broken: boolean): string {
  if (name.endsWith('.json')) {
    const text = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objs }, null, name.startsWith('c') ? undefined : 2);
    return broken ? `${text.slice(0, -1)},` : text;
  }
  const text = objs.map((o) => stringify(o)).join('---\n');
  return broken ? `${text}---\nkind: [\n` : text;
}

function write(dir: string, t: Tree, name: string): void {
  writeFileSync(path.join(dir, name), fileText(name, t.files.get(name)!, t.broken.has(name)));
  stamp(path.join(dir, name));
}

/** Stable text of a load: the model (Maps and Sets as sorted entries) and the findings, or the error. */
function serialise(load: () => LoadResult): string {
  let r: LoadResult;
  try {
    r = load();
  } catch (e) {
    if (e instanceof ManifestError) return `ManifestError ${JSON.stringify(e.findings)}`;
    throw e;
  }
  const history = r.history && {
    files: r.history.files.map((f) => [f.path, Buffer.from(f.deflated).toString('base64')]),
    carried: r.history.carried,
    skipped: r.history.skipped,
  };
  return JSON.stringify({ history, model: r.model, findings: r.findings }, (_k, v: unknown) => {
    if (v instanceof Map) return { map: [...v.entries()] };
    if (v instanceof Set) return { set: [...v].sort() };
    return v;
  });
}

/** `a` around where it first differs from `b`. */
function around(a: string, b: string): string {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return a.slice(Math.max(0, i - 400), i + 400);
}

const pick = <T>(rnd: () => number, xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;

/** One random edit of the tree on disk; returns what it did, for the failure message. */
function edit(dir: string, t: Tree, rnd: () => number, n: number): string {
  const names = [...t.files.keys()].sort();
  const objectsOf = (kind: string): [string, number][] => {
    const out: [string, number][] = [];
    for (const [f, objs] of t.files) for (let i = 0; i < objs.length; i++) if (objs[i]!['kind'] === kind) out.push([f, i]);
    return out;
  };
  const kinds = [
    'clusterIP',
    'pod',
    'addService',
    'selector',
    'delete',
    'move',
    'crd',
    'widget',
    'error',
    'fix',
    'rename',
    'touch',
    'sameSize',
    'duplicate',
    'break',
    'replicas',
    'ingress',
    'json',
    // The workloads the control plane derives pods from, and what their pods depend on.
    'addWorkload',
    'removeWorkload',
    'templateLabel',
    'node',
    'declaredPod',
    'ordinalClash',
    'sliceClash',
  ];
  const k = pick(rnd, kinds);
  // Namespace c comes and goes: the addresses its pods held go back to the others' probing.
  const nsName = pick(rnd, ['a', 'b', 'a', 'b', 'c']);
  switch (k) {
    case 'clusterIP': {
      // Two Services asking for one address: the later one is refused, through its draft's checker.
      const all = objectsOf('Service');
      if (all.length === 0) return 'clusterIP: none';
      const [f, i] = pick(rnd, all);
      (t.files.get(f)![i]!['spec'] as Obj)['clusterIP'] = pick(rnd, ['10.96.0.5', '10.96.0.6', '192.0.2.1']);
      write(dir, t, f);
      return `clusterIP in ${f}`;
    }
    case 'pod': {
      const f = pick(rnd, names);
      t.files.get(f)!.push(pod(`p${n}`, nsName, pick(rnd, ['web', 'api'])));
      write(dir, t, f);
      return `pod in ${f}`;
    }
    case 'addService': {
      const f = `svc-${n}.yaml`;
      t.files.set(f, [service(`s${n}`, nsName, pick(rnd, ['web', 'api', 'db']))]);
      write(dir, t, f);
      return `add ${f}`;
    }
    case 'selector': {
      const all = objectsOf('Service');
      if (all.length === 0) return 'selector: none';
      const [f, i] = pick(rnd, all);
      ((t.files.get(f)![i]!['spec'] as Obj)['selector'] as Obj)['app'] = pick(rnd, ['web', 'api', 'db', 'none']);
      write(dir, t, f);
      return `selector in ${f}`;
    }
    case 'delete': {
      if (names.length <= 1) return 'delete: none';
      const f = pick(rnd, names);
      t.files.delete(f);
      t.broken.delete(f);
      rmSync(path.join(dir, f));
      return `delete ${f}`;
    }
    case 'move': {
      const from = pick(rnd, names);
      const objs = t.files.get(from)!;
      if (objs.length <= 1) return 'move: none';
      const to = rnd() < 0.3 ? `moved-${n}.yaml` : pick(rnd, names);
      if (to === from) return 'move: same';
      const [o] = objs.splice(Math.floor(rnd() * objs.length), 1);
      if (!t.files.has(to)) t.files.set(to, []);
      t.files.get(to)!.push(o!);
      write(dir, t, from);
      write(dir, t, to);
      return `move ${from} -> ${to}`;
    }
    case 'crd': {
      const had = objectsOf('CustomResourceDefinition');
      if (had.length > 0) {
        const [f, i] = had[0]!;
        t.files.get(f)!.splice(i, 1);
        write(dir, t, f);
        return `remove CRD from ${f}`;
      }
      const f = pick(rnd, ['0-crd.yaml', 'm-crd.yaml', 'z-crd.yaml']);
      t.files.set(f, [...(t.files.get(f) ?? []), crd()]);
      write(dir, t, f);
      return `CRD in ${f}`;
    }
    case 'widget': {
      const f = pick(rnd, names);
      t.files.get(f)!.push(widget(`w${n}`, nsName, rnd() < 0.3 ? 'big' : n));
      write(dir, t, f);
      return `widget in ${f}`;
    }
    case 'error':
    case 'fix': {
      const all = objectsOf('Service');
      if (all.length === 0) return `${k}: none`;
      const [f, i] = pick(rnd, all);
      const ports = (t.files.get(f)![i]!['spec'] as Obj)['ports'] as Obj[];
      ports[0]!['port'] = k === 'error' ? 0 : 80;
      write(dir, t, f);
      return `${k} port in ${f}`;
    }
    case 'rename': {
      const f = pick(rnd, names);
      const to = `r${n}-${f.replace(/^c/, 'x')}`;
      t.files.set(to, t.files.get(f)!);
      t.files.delete(f);
      if (t.broken.delete(f)) t.broken.add(to);
      renameSync(path.join(dir, f), path.join(dir, to));
      write(dir, t, to); // a compact JSON name changes its form
      return `rename ${f} -> ${to}`;
    }
    case 'touch': {
      const f = pick(rnd, names);
      const when = Math.floor(Date.now() / 1000) + 1 + Math.floor(rnd() * 5);
      utimesSync(path.join(dir, f), when, when);
      return `touch ${f}`;
    }
    case 'sameSize': {
      // Same size, same modification time, other text: only the hash tells.
      const all = objectsOf('Deployment');
      if (all.length === 0) return 'sameSize: none';
      const [f, i] = pick(rnd, all);
      const spec = t.files.get(f)![i]!['spec'] as Obj;
      const r = spec['replicas'] as number;
      spec['replicas'] = r >= 5 ? r - 1 : r + 1;
      const p = path.join(dir, f);
      const st = statSync(p, { bigint: true });
      const before = readFileSync(p, 'utf8');
      write(dir, t, f);
      if (readFileSync(p, 'utf8').length !== before.length) return `sameSize ${f} (size changed)`;
      const s = Number(st.mtimeNs / 1_000_000_000n);
      utimesSync(p, s, s);
      return `sameSize ${f}`;
    }
    case 'duplicate': {
      const all = objectsOf('Service');
      if (all.length === 0) return 'duplicate: none';
      const [f, i] = pick(rnd, all);
      const to = pick(rnd, names);
      t.files.get(to)!.push(structuredClone(t.files.get(f)![i]!));
      write(dir, t, to);
      return `duplicate from ${f} into ${to}`;
    }
    case 'break': {
      const f = pick(rnd, names);
      if (t.broken.has(f)) t.broken.delete(f);
      else t.broken.add(f);
      write(dir, t, f);
      return `${t.broken.has(f) ? 'break' : 'mend'} ${f}`;
    }
    case 'replicas': {
      const all = objectsOf('Deployment');
      if (all.length === 0) return 'replicas: none';
      const [f, i] = pick(rnd, all);
      (t.files.get(f)![i]!['spec'] as Obj)['replicas'] = Math.floor(rnd() * 4);
      write(dir, t, f);
      return `replicas in ${f}`;
    }
    case 'ingress': {
      const f = pick(rnd, names);
      t.files.get(f)!.push(ingress(`i${n}`, nsName, `h${n % 3}.example.com`, 'web'));
      write(dir, t, f);
      return `ingress in ${f}`;
    }
    case 'addWorkload': {
      const f = pick(rnd, [...names, `wl-${n}.yaml`]);
      const app = pick(rnd, ['web', 'api', 'db', `x${n}`]);
      const which = Math.floor(rnd() * 5);
      const objs =
        which === 0
          ? [deployment(`d${n}`, nsName, app, Math.floor(rnd() * 4))]
          : which === 1
            ? [statefulSet(`st${n}`, nsName, app, 1 + Math.floor(rnd() * 3)), headless(`st${n}`, nsName, app)]
            : which === 2
              ? [daemonSet(`ds${n}`, nsName, app, rnd() < 0.5)]
              : which === 3
                ? [job(`j${n}`, nsName, app, 1 + Math.floor(rnd() * 2))]
                : [service(`sel${n}`, nsName, app)]; // a Service selecting pods that exist already
      t.files.set(f, [...(t.files.get(f) ?? []), ...objs]);
      write(dir, t, f);
      return `workload ${which} in ${f}`;
    }
    case 'removeWorkload': {
      const all = [...objectsOf('Deployment'), ...objectsOf('StatefulSet'), ...objectsOf('DaemonSet'), ...objectsOf('Job')];
      if (all.length === 0) return 'removeWorkload: none';
      const [f, i] = pick(rnd, all);
      t.files.get(f)!.splice(i, 1);
      write(dir, t, f);
      return `remove workload from ${f}`;
    }
    case 'templateLabel': {
      // A new pod-template-hash, so new pod names and addresses; or an app label no Service selects.
      const all = objectsOf('Deployment');
      if (all.length === 0) return 'templateLabel: none';
      const [f, i] = pick(rnd, all);
      const spec = t.files.get(f)![i]!['spec'] as Obj;
      const app = ((spec['selector'] as Obj)['matchLabels'] as Obj)['app'] as string;
      spec['template'] = template(app, { tier: pick(rnd, ['front', 'back', `t${n}`]) });
      write(dir, t, f);
      return `template label in ${f}`;
    }
    case 'node': {
      // Nodes decide DaemonSet pods, placements, host-network addresses and endpoint zones.
      const had = objectsOf('Node');
      if (had.length > 0 && rnd() < 0.4) {
        const [f, i] = pick(rnd, had);
        t.files.get(f)!.splice(i, 1);
        write(dir, t, f);
        return `remove node from ${f}`;
      }
      const f = pick(rnd, [...names, 'nodes.yaml']);
      t.files.set(f, [...(t.files.get(f) ?? []), node(`n${n}`, `192.168.0.${n + 1}`, pick(rnd, ['z1', 'z2']))]);
      write(dir, t, f);
      return `node in ${f}`;
    }
    case 'declaredPod': {
      const f = pick(rnd, names);
      t.files.get(f)!.push(declaredPod(`dp${n}`, nsName, pick(rnd, ['web', 'api']), `10.244.0.${1 + Math.floor(rnd() * 30)}`));
      write(dir, t, f);
      return `declared pod in ${f}`;
    }
    case 'ordinalClash': {
      // A manifest pod named as a StatefulSet's ordinal: that ordinal is not created (a warning).
      const all = objectsOf('StatefulSet');
      if (all.length === 0) return 'ordinalClash: none';
      const [sf, si] = pick(rnd, all);
      const sts = t.files.get(sf)![si]!;
      const md = sts['metadata'] as Obj;
      const f = pick(rnd, names);
      t.files.get(f)!.push(pod(`${md['name'] as string}-0`, md['namespace'] as string, 'other'));
      write(dir, t, f);
      return `ordinal clash in ${f}`;
    }
    case 'sliceClash': {
      const had = objectsOf('EndpointSlice');
      if (had.length > 0) {
        const [f, i] = had[0]!;
        t.files.get(f)!.splice(i, 1);
        write(dir, t, f);
        return `remove clashing slice from ${f}`;
      }
      const f = pick(rnd, names);
      t.files.get(f)!.push(clashingSlice());
      write(dir, t, f);
      return `clashing slice in ${f}`;
    }
    default: {
      const f = rnd() < 0.5 ? `c-list-${n}.json` : `list-${n}.json`;
      t.files.set(f, [service(`j${n}`, nsName, 'api'), deployment(`dj${n}`, nsName, 'api', 1)]);
      write(dir, t, f);
      return `json ${f}`;
    }
  }
}

function initialTree(dir: string): Tree {
  const t: Tree = {
    files: new Map([
      ['ns.yaml', [namespace('a'), namespace('b')]],
      ['web.yaml', [service('web', 'a', 'web'), deployment('web', 'a', 'web', 2), pod('solo', 'a', 'web')]],
      ['api.yaml', [service('api', 'b', 'api'), deployment('api', 'b', 'api', 1), service('db', 'b', 'db')]],
      ['c-list.json', [service('lst', 'a', 'web'), deployment('db', 'b', 'db', 1)]],
    ]),
    broken: new Set(),
  };
  mkdirSync(dir, { recursive: true });
  for (const f of t.files.keys()) write(dir, t, f);
  return t;
}

const SEQUENCES = 40;
const EDITS = 8;

describe('ManifestFeed reload equals a full load', () => {
  for (const variant of ['plain', 'history', 'dual-stack'] as const) {
    const withHistory = variant === 'history';
    it(`over ${SEQUENCES} random edit sequences${withHistory ? ', with an admission history' : variant === 'dual-stack' ? ', dual-stack with not-ready patterns' : ''}`, () => {
      for (let seq = 0; seq < SEQUENCES; seq++) {
        const seed = 1000 * (variant === 'plain' ? 1 : variant === 'history' ? 2 : 3) + seq;
        const rnd = prng(seed);
        const dir = path.join(root, `${variant}${seq}`);
        const t = initialTree(dir);
        // A budget that keeps some of the files' texts and skips others, as edits change sizes.
        const budgetBytes = 1500;
        // Without a history, a small pod CIDR: pods then contend for addresses, and a pod kept
        // from an earlier load must get its address afresh, as in a full load (or the CIDR is
        // full, and both say so); a small service CIDR likewise for cluster IPs (the clusterIP
        // edits' addresses are in it).
        const cluster =
          variant === 'plain'
            ? { podCIDRs: ['10.244.0.0/27'], serviceCIDRs: ['10.96.0.0/28'] }
            : variant === 'dual-stack'
              ? { podCIDRs: ['10.244.0.0/26', 'fd00:10:244::/122'], notReady: ['a/web-*', 'st*'] }
              : undefined;
        const feed = new ManifestFeed([dir], withHistory ? { history: { budgetBytes } } : { cluster });
        let previous: AdmissionHistory | undefined;
        const full = (): LoadResult => {
          const r = loadManifests([dir], cluster, undefined, withHistory ? { previous, budgetBytes } : undefined);
          previous = r.history;
          return r;
        };
        expect(serialise(() => feed.load())).toBe(serialise(full));
        const done: string[] = [];
        for (let n = 0; n < EDITS; n++) {
          done.push(edit(dir, t, rnd, n));
          const got = serialise(() => feed.reload());
          const want = serialise(full);
          if (got !== want) expect({ seed, edits: done, got: around(got, want) }).toEqual({ seed, edits: done, got: around(want, got) });
        }
      }
    });
  }
});

describe('ManifestFeed reads only what changed', () => {
  it('reads again the one file edited, and every file when a CRD changes', () => {
    const dir = path.join(root, 'only');
    const t = initialTree(dir);
    const feed = new ManifestFeed([dir]);
    expect(feed.load().full).toBe(true);
    (t.files.get('web.yaml')![0]!['spec'] as Obj)['selector'] = { app: 'api' };
    write(dir, t, 'web.yaml');
    const r = feed.reload();
    expect({ reread: r.reread.map((f) => path.basename(f)), full: r.full }).toEqual({ reread: ['web.yaml'], full: false });
    expect(feed.reload().reread).toEqual([]);
    t.files.set('svc-new.yaml', [service('new', 'a', 'web')]);
    write(dir, t, 'svc-new.yaml');
    const added = feed.reload();
    expect(added.reread.map((f) => path.basename(f))).toEqual(['svc-new.yaml']);
    expect(added.model.services.some((s) => s.name === 'new')).toBe(true);
    t.files.set('m-crd.yaml', [crd()]);
    write(dir, t, 'm-crd.yaml');
    const withCrd = feed.reload();
    expect(withCrd.full).toBe(true);
    expect(withCrd.reread.length).toBe(readdirSync(dir).length);
  });

  it('keeps the model pods, workloads and slices of what a change does not reach', () => {
    const dir = path.join(root, 'kept');
    const t = initialTree(dir);
    t.files.set('sts.yaml', [statefulSet('st', 'b', 'st', 3), headless('st', 'b', 'st')]);
    write(dir, t, 'sts.yaml');
    const feed = new ManifestFeed([dir]);
    const first = feed.load().model;
    t.files.set('svc-new.yaml', [service('new', 'a', 'none')]);
    write(dir, t, 'svc-new.yaml');
    const second = feed.reload().model;
    const kept = <T>(xs: readonly T[], ys: readonly T[]): number => ys.filter((y) => xs.includes(y)).length;
    expect(second.pods.length).toBeGreaterThan(5);
    expect(kept(first.pods, second.pods)).toBe(second.pods.length);
    expect(kept(first.workloads ?? [], second.workloads ?? [])).toBe(second.workloads?.length);
    expect(kept(first.endpointSlices, second.endpointSlices)).toBe(second.endpointSlices.length);
    // Scaling the StatefulSet in b derives b's pods again; a's stay, and so do a's slices.
    (t.files.get('sts.yaml')![0]!['spec'] as Obj)['replicas'] = 4;
    write(dir, t, 'sts.yaml');
    const third = feed.reload().model;
    const inA = (m: typeof third) => m.pods.filter((p) => p.namespace === 'a');
    expect(kept(inA(second), inA(third))).toBe(inA(third).length);
    expect(third.pods.filter((p) => p.namespace === 'b' && p.name.startsWith('st-')).map((p) => p.name)).toEqual(['st-0', 'st-1', 'st-2', 'st-3']);
    const sliceOf = (m: typeof third, svc: string) => m.endpointSlices.find((s) => s.serviceName === svc);
    expect(sliceOf(third, 'web')).toBe(sliceOf(second, 'web'));
    expect(sliceOf(third, 'st')).not.toBe(sliceOf(second, 'st'));
    expect(sliceOf(third, 'st')?.endpoints.length).toBe(4);
  });

  it('gives the addresses of a namespace gone back to the pods of the others, as a full load does', () => {
    // Pods of b probe past addresses a0's pods hold in a small pod CIDR ("a0/" sorts first);
    // with a0 gone, b's unchanged pods get other addresses, though nothing of b was read again.
    const dir = path.join(root, 'gone');
    const t: Tree = {
      files: new Map([
        ['a0.yaml', [deployment('x', 'a0', 'x', 3)]],
        ['b.yaml', [deployment('web', 'b', 'web', 3)]],
      ]),
      broken: new Set(),
    };
    mkdirSync(dir, { recursive: true });
    for (const f of t.files.keys()) write(dir, t, f);
    const cluster = { podCIDRs: ['10.244.0.0/29'] };
    const feed = new ManifestFeed([dir], { cluster });
    const ipsOfB = (r: LoadResult): string[] => r.model.pods.filter((p) => p.namespace === 'b').map((p) => `${p.name} ${p.podIP}`);
    const before = ipsOfB(feed.load());
    rmSync(path.join(dir, 'a0.yaml'));
    const r = feed.reload();
    expect(r.reread).toEqual([]);
    expect(ipsOfB(r)).not.toEqual(before);
    expect(serialise(() => r)).toBe(serialise(() => loadManifests([dir], cluster)));
  });

  it('notices a change of the same size within the same modification time', () => {
    const dir = path.join(root, 'racy');
    const t = initialTree(dir);
    const feed = new ManifestFeed([dir]);
    const p = path.join(dir, 'web.yaml');
    const s = Math.floor(Date.now() / 1000);
    utimesSync(p, s, s);
    feed.load();
    const st = statSync(p, { bigint: true });
    (t.files.get('web.yaml')![1]!['spec'] as Obj)['replicas'] = 3;
    write(dir, t, 'web.yaml');
    utimesSync(p, s, s);
    const now = statSync(p, { bigint: true });
    expect([now.size, now.mtimeNs, now.ino]).toEqual([st.size, st.mtimeNs, st.ino]);
    const r = feed.reload();
    expect(r.reread.map((f) => path.basename(f))).toEqual(['web.yaml']);
    expect(r.model.workloads?.find((w) => w.name === 'web')?.derivedPods.length).toBe(3);
  });
});
