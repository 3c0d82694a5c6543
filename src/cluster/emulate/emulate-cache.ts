// The control plane's pod work kept across a feed's loads (feed.ts), so that a reload plays the
// controllers again only where their inputs changed, and gives what a full load gives:
// - Workload pods, per namespace: a namespace's derived pods depend only on its workloads, its
//   manifest pods and the nodes (workloads.ts takes pod names per namespace). A namespace whose
//   workload drafts and manifest pods are the very objects of the last load (a kept file's) keeps
//   its pods, its workload infos and the warnings deriving gave.
// - Pod addresses: assigned again over every pod, in the order assignPodIPs takes them (one
//   probe chain shared by every namespace, so no namespace's addresses can be kept unseen), but
//   with each pod's hashed start kept, and the pod object of the last load kept when it gets the
//   same offsets: no hash, address text or pod object per pod on a reload.
// - EndpointSlices, per managed Service: kept when the Service's fields that shape its slices
//   are the same, it selects the very pod objects it selected last time, and each slice name it
//   got is still what the name search gives (the names other slices took before it).
// Anything a kept part cannot stand for (a pod CIDR too small, a namespace with '/') makes emulate
// take the one-shot path (load.ts), and the cache starts again.

import type { ClusterNode, EndpointSlice, ObjectMeta, Pod, Service, ServicePort, SourceRef, WorkloadInfo } from '../model/model.js';
import type { Finding } from '../model/finding.js';
import type { Cidr } from '../../pkg/ip.js';
import { Checker } from '../admit/validate.js';
import { deriveWorkloadPods, sha256Bytes } from './workloads.js';
import type { WorkloadDraft } from '../admit/workloads.js';
import { addressAt, declaredOffsets, digestMod, hostAddresses, makeRange, needsAddress } from './podips.js';
import { AllocationMemo } from './allocate.js';
import { hasControllerSelector, PodIndex, serviceSlices, slicePods } from './endpoints.js';

/** One namespace's pods: what derived them, and what the last load made of them. */
interface Unit {
  /** The metadata of its workload drafts, in reading order: a draft's identity. */
  readonly metas: readonly ObjectMeta[];
  /** Its manifest pods as read (not the model's copies), in reading order. */
  readonly manifest: readonly Pod[];
  readonly infos: readonly WorkloadInfo[];
  /** The findings deriving its pods gave, replayed where a fresh derivation gives them. */
  readonly warnings: readonly Finding[];
  /** How many pods: manifest and derived, by name. */
  readonly count: number;
  /**
   * The pods as read and derived, without addresses, until the first pass has made their model
   * pods (`finals`); let go then, as later model pods are made from the last ones.
   */
  fresh: readonly Pod[] | undefined;
  /** Per pod: what its address needs (NONE, HOST, PROBE). */
  readonly need: Uint8Array;
  /** Per pod and pod range (i * ranges + r): the hashed first offset to probe; -1 until needed. */
  readonly starts: Float64Array;
  /** Per pod and pod range: the offset its address got last, -1 none. */
  readonly offsets: Float64Array;
  /** The model's pod for each pod (ready and addresses filled in) the last load gave. */
  readonly finals: Pod[];
  /** Offsets the manifest pods declare: range index and offset, pairs. */
  readonly declared: readonly number[];
  /** Pods that probe for an address (PROBE). */
  readonly demand: number;
  /** Bumped when one of `finals` is replaced: a Service's kept pods stand while it stays. */
  version: number;
}

/** A managed Service's slices, and what they were made from. */
interface SliceEntry {
  /** "namespace/name". */
  readonly key: string;
  readonly svc: Service;
  readonly unit: Unit | undefined;
  readonly version: number;
  readonly pods: readonly Pod[];
  readonly slices: readonly EndpointSlice[];
  /** Per slice: every name tried ("namespace/name"), the last the one it got. */
  readonly tried: readonly (readonly string[])[];
}

/** A pod's address: none to find (declared, not running), its node's (host network), or probed for. */
const NO_ADDRESS = 0;
const HOST = 1;
const PROBE = 2;

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function sameRefs<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Node ports filled in give new port objects each load: compared by what the slices read of them. */
function samePorts(a: readonly ServicePort[], b: readonly ServicePort[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x.name !== y.name || x.protocol !== y.protocol || x.port !== y.port || x.targetPort !== y.targetPort) return false;
  }
  return true;
}

/** The Service's fields serviceSlices reads (the drafts' own objects, the same while a file is kept). */
const sameSliceInputs = (a: Service, b: Service): boolean =>
  a.name === b.name &&
  a.namespace === b.namespace &&
  a.selector === b.selector &&
  a.labels === b.labels &&
  a.source === b.source &&
  a.headless === b.headless &&
  a.publishNotReadyAddresses === b.publishNotReadyAddresses &&
  a.ipFamilies === b.ipFamilies &&
  samePorts(a.ports, b.ports);

/** What emulate's pod steps give. */
export interface CachedPods {
  /** In namespace/name order (load.ts byNsName). */
  readonly pods: Pod[];
  readonly infos: WorkloadInfo[];
}

/** A checker bound to this load's findings, as the one the draft was read with was to its load's. */
export function rebind(check: Checker, findings: Finding[]): Checker {
  const c = new Checker(findings, check.source, check.what, check.positions);
  c.errors = check.errors;
  c.reported = check.reported;
  return c;
}

export class EmulationCache {
  /** Workload drafts whose checkers are still their read's (feed.ts merge): bound when derived from. */
  private unbound = new Set<WorkloadDraft>();

  /** Notes drafts to bind to the load's findings when their pods are derived; undefined: forget the last load's. */
  bindLater(drafts: readonly WorkloadDraft[] | undefined): void {
    if (drafts === undefined) this.unbound = new Set();
    else for (const d of drafts) this.unbound.add(d);
  }

  /** The draft with a checker bound to `findings` when it was noted by bindLater. */
  bound(w: WorkloadDraft, findings: Finding[]): WorkloadDraft {
    return this.unbound.has(w) ? { ...w, check: rebind(w.check, findings) } : w;
  }

  /** Cluster IP allocation's per-draft work (allocate.ts). */
  readonly allocation = new AllocationMemo();
  /** What every kept part depends on: nodes, pod CIDRs, not-ready patterns. */
  private inputs = '';
  private units = new Map<string, Unit>();
  /** By the Service's source: sameSliceInputs asks for the same one. */
  private sliceEntries = new Map<SourceRef, SliceEntry>();

  /** The last endpoint slices sorted, and the list they were sorted from. */
  private slicesIn: readonly EndpointSlice[] = [];
  private slicesOut: readonly EndpointSlice[] = [];

  /** `all` sorted by `compare`: the last load's order when `all` holds the same slices in the same order. */
  sortedSlices(all: EndpointSlice[], compare: (a: EndpointSlice, b: EndpointSlice) => number): EndpointSlice[] {
    if (sameRefs(all, this.slicesIn)) return this.slicesOut.slice();
    this.slicesIn = all.slice();
    const out = all.sort(compare);
    this.slicesOut = out.slice();
    return out;
  }

  /** Forgets everything (the one-shot path ran). */
  clear(): void {
    this.inputs = '';
    this.units = new Map();
    this.sliceEntries = new Map();
  }

  /**
   * Workload pods, then every pod's readiness and addresses, as deriveWorkloadPods and
   * assignPodIPs give them in load.ts; undefined when this load must take that path (nothing
   * added to `findings` then).
   */
  pods(
    workloads: readonly WorkloadDraft[],
    manifestPods: readonly Pod[],
    nodes: readonly ClusterNode[],
    nodeMap: ReadonlyMap<string, ClusterNode>,
    cidrs: readonly Cidr[],
    notReady: readonly string[],
    isNotReady: (p: Pod) => boolean,
    findings: Finding[],
  ): CachedPods | undefined {
    const inputs = JSON.stringify([nodes, cidrs.map((c) => c.text), notReady]);
    if (inputs !== this.inputs) {
      this.clear();
      this.inputs = inputs;
    }
    const workloadsByNs = new Map<string, WorkloadDraft[]>();
    const podsByNs = new Map<string, Pod[]>();
    for (const w of workloads) push(workloadsByNs, w.meta.namespace, w);
    for (let i = 0; i < manifestPods.length; i++) push(podsByNs, manifestPods[i]!.namespace, manifestPods[i]!);
    const names = new Set([...workloadsByNs.keys(), ...podsByNs.keys()]);
    for (const ns of names) if (ns.includes('/')) return this.giveUp(findings, findings.length); // inKeyOrder sorts those by the whole key
    const order = [...names].sort(cmp);
    const ranges = cidrs.map(makeRange);
    const before = findings.length;
    const units = new Map<string, Unit>();
    const infos: WorkloadInfo[] = [];
    let kept = 0;
    for (const ns of order) {
      const ws = workloadsByNs.get(ns) ?? [];
      const mp = podsByNs.get(ns) ?? [];
      let u = this.units.get(ns);
      if (u && sameRefs(u.manifest, mp) && u.metas.length === ws.length && ws.every((w, i) => w.meta === u!.metas[i])) {
        for (const f of u.warnings) findings.push(f);
        kept++;
      } else {
        const at = findings.length;
        const derived = deriveWorkloadPods(
          ws.map((w) => this.bound(w, findings)),
          mp,
          nodes,
        );
        u = newUnit(ws, mp, derived.infos, findings.slice(at), derived.pods, ranges);
      }
      units.set(ns, u);
      for (const info of u.infos) infos.push(info);
    }

    // Every namespace's pods the very ones of the last load: the addresses are a function of
    // them (and of the pod CIDRs, the same), so every model pod of the last load stands.
    if (kept === units.size && kept === this.units.size) return this.done(units, order, infos);
    // assignPodIPs: declared addresses first, the range's size against the demand, then every
    // pod that needs an address in "namespace/name" order.
    for (const u of units.values()) for (let i = 0; i < u.declared.length; i += 2) ranges[u.declared[i]!]!.used.take(u.declared[i + 1]!);
    let demand = 0;
    for (const u of units.values()) demand += u.demand;
    if (ranges.some((r) => r.size > 0 && r.used.free < demand)) return this.giveUp(findings, before);
    const families = ranges.map((r) => r.family);
    for (const r of ranges) r.used.reserve(demand);
    const nr = ranges.length;
    for (const ns of [...names].sort((a, b) => cmp(`${a}/`, `${b}/`))) {
      const u = units.get(ns)!;
      const { count, fresh, need, starts, offsets, finals } = u;
      let changed = false;
      for (let i = 0; i < count; i++) {
        if (need[i] !== PROBE) {
          // Its model pod depends on the node's addresses and the patterns, the same for a kept unit.
          if (finals[i] === undefined) {
            const p = fresh![i]!;
            const ips = need[i] === HOST ? hostAddresses(p, families, nodeMap) : undefined;
            finals[i] = ips && ips.length > 0 ? modelPod(p, isNotReady(p), ips) : isNotReady(p) ? modelPod(p, true, undefined) : p;
            changed = true;
          }
          continue;
        }
        let same = finals[i] !== undefined;
        let digest: string | undefined;
        for (let r = 0; r < nr; r++) {
          const range = ranges[r]!;
          if (range.size === 0) continue;
          const at = i * nr + r;
          let start = starts[at]!;
          if (start < 0) {
            const p = finals[i] ?? fresh![i]!;
            digest ??= sha256Bytes(`${p.namespace}/${p.name}`);
            start = starts[at] = digestMod(digest, range.size);
          }
          const off = range.used.takeFirstFreeFrom(start);
          if (off === undefined) return this.giveUp(findings, before);
          if (offsets[at] !== off) {
            offsets[at] = off;
            same = false;
          }
        }
        if (same) continue;
        let first: string | undefined;
        let second: string | undefined;
        for (let r = 0; r < nr; r++) {
          if (ranges[r]!.size === 0) continue;
          const ip = addressAt(ranges[r]!, offsets[i * nr + r]! + 1);
          if (first === undefined) first = ip;
          else second = ip;
        }
        const ips = first === undefined ? undefined : second === undefined ? [first] : [first, second];
        const last = finals[i];
        if (last !== undefined)
          finals[i] = modelPod(last, false, ips); // its readiness is the last one's
        else {
          const p = fresh![i]!;
          const notReady = isNotReady(p);
          finals[i] = ips !== undefined || notReady ? modelPod(p, notReady, ips) : p;
        }
        changed = true;
      }
      if (changed) u.version++;
    }
    for (const u of units.values()) u.fresh = undefined;
    return this.done(units, order, infos);
  }

  private done(units: Map<string, Unit>, order: readonly string[], infos: WorkloadInfo[]): CachedPods {
    this.units = units;
    let n = 0;
    for (const u of units.values()) n += u.finals.length;
    const pods = new Array<Pod>(n);
    n = 0;
    for (const ns of order) for (const p of units.get(ns)!.finals) pods[n++] = p;
    return { pods, infos };
  }

  private giveUp(findings: Finding[], before: number): undefined {
    findings.length = before;
    this.clear();
    return undefined;
  }

  /**
   * generateEndpointSlices over the pods `pods` gave in this load: the same slices, in the same
   * order, with the same names.
   */
  slices(
    services: readonly Service[],
    nodeMap: ReadonlyMap<string, ClusterNode>,
    claimed: ReadonlySet<string>,
    takenNames: Set<string>,
  ): { slices: EndpointSlice[]; managed: Set<string> } {
    const slices: EndpointSlice[] = [];
    const managed = new Set<string>();
    const next = new Map<SourceRef, SliceEntry>();
    const indexes = new Map<Unit, PodIndex>();
    for (const svc of services) {
      if (!hasControllerSelector(svc)) continue;
      const e = this.sliceEntries.get(svc.source);
      const same = e !== undefined && sameSliceInputs(e.svc, svc);
      // A kept entry's key strings: hashed once, not built and hashed again per load.
      const key = same ? e.key : `${svc.namespace}/${svc.name}`;
      if (claimed.has(key)) continue;
      managed.add(key);
      const u = this.units.get(svc.namespace);
      let pods: readonly Pod[];
      if (same && u !== undefined && e.unit === u && e.version === u.version) pods = e.pods;
      else if (u === undefined) pods = [];
      else {
        let index = indexes.get(u);
        if (!index) indexes.set(u, (index = new PodIndex(u.finals)));
        pods = slicePods(index, svc);
      }
      const version = u?.version ?? 0;
      if (same && sameRefs(e.pods, pods) && claimNames(e.tried, takenNames)) {
        for (const s of e.slices) slices.push(s);
        next.set(svc.source, e.unit === u && e.version === version ? e : { ...e, svc, unit: u, version });
        continue;
      }
      const mine: EndpointSlice[] = [];
      const tried: string[][] = [];
      serviceSlices(svc, pods, nodeMap, takenNames, mine, tried);
      for (const s of mine) slices.push(s);
      next.set(svc.source, { key, svc, unit: u, version, pods, slices: mine, tried: tried.map((names) => names.map((n) => `${svc.namespace}/${n}`)) });
    }
    this.sliceEntries = next;
    return { slices, managed };
  }
}

function push<T>(m: Map<string, T[]>, k: string, v: T): void {
  const l = m.get(k);
  if (l) l.push(v);
  else m.set(k, [v]);
}

/**
 * A model pod: `p` with ready false and the addresses given. Object.assign and then the keys, as
 * a spread with extra keys makes an object about three times the size (some 40 MiB more for
 * 100k pods); the keys end in the same order (podIPs where it was, ready and podIP added last).
 */
function modelPod(p: Pod, notReady: boolean, ips: string[] | undefined): Pod {
  const m: { -readonly [K in keyof Pod]: Pod[K] } = Object.assign({}, p);
  if (notReady) m.ready = false;
  if (ips !== undefined) {
    m.podIP = ips[0]!;
    m.podIPs = ips;
  }
  return m;
}

function newUnit(
  ws: readonly WorkloadDraft[],
  manifest: readonly Pod[],
  infos: WorkloadInfo[],
  warnings: Finding[],
  derived: readonly Pod[],
  ranges: ReturnType<typeof makeRange>[],
): Unit {
  const pods = [...manifest, ...derived].sort((a, b) => cmp(a.name, b.name));
  const declared: number[] = [];
  for (const p of manifest) declaredOffsets(p, ranges, (r, off) => declared.push(ranges.indexOf(r), off));
  const need = new Uint8Array(pods.length);
  let demand = 0;
  for (let i = 0; i < pods.length; i++) {
    const p = pods[i]!;
    need[i] = !needsAddress(p) ? NO_ADDRESS : p.hostNetwork ? HOST : PROBE;
    if (need[i] === PROBE) demand++;
  }
  const n = pods.length * ranges.length;
  return {
    metas: ws.map((w) => w.meta),
    manifest,
    infos,
    warnings,
    count: pods.length,
    fresh: pods,
    need,
    starts: new Float64Array(n).fill(-1),
    offsets: new Float64Array(n).fill(-1),
    finals: [],
    declared,
    demand,
    version: 0,
  };
}

/**
 * Takes a kept Service's slice names again when the name search would give each of them now:
 * the names tried before it still taken, its own still free. Takes none otherwise.
 */
function claimNames(tried: readonly (readonly string[])[], takenNames: Set<string>): boolean {
  const added: string[] = [];
  const undo = (): false => {
    for (const k of added) takenNames.delete(k);
    return false;
  };
  for (const names of tried) {
    for (let j = 0; j < names.length - 1; j++) if (!takenNames.has(names[j]!)) return undo();
    const k = names[names.length - 1]!;
    if (takenNames.has(k)) return undo();
    takenNames.add(k);
    added.push(k);
  }
  return true;
}
