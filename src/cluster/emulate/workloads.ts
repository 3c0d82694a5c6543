// Workloads -> pods, playing the controllers a real cluster runs, deterministically:
// - Deployment: one ReplicaSet `<deploy>-<pod-template-hash>` (the hash is ComputeHash of
//   pkg/controller/controller_utils.go: FNV-32a over the pod template, its decimal value encoded
//   with rand.SafeEncodeString), whose pods carry the `pod-template-hash` label;
// - ReplicaSet: `spec.replicas` pods named `<rs>-<5 chars>`;
// - StatefulSet: pods `<sts>-<ordinal>` (from spec.ordinals.start), hostname = pod name,
//   subdomain = spec.serviceName, labels statefulset.kubernetes.io/pod-name and apps.kubernetes.io/pod-index;
// - DaemonSet: one pod per node whose labels match the template's nodeSelector (taints and
//   tolerations are not modelled);
// - Job: min(parallelism (default 1), completions) pods, none when suspended or finished;
//   Indexed Jobs name pods `<job>-<index>-<5 chars>` with hostname `<job>-<index>`;
// - CronJob: no pods (its Jobs are not created ahead of time).
//
// Kubernetes hashes the Go object as printed by its deep-hash printer, which cannot be reproduced
// from YAML; here the template is hashed as canonical JSON (sorted keys), so the hash has the real
// form (up to 10 characters of "bcdfghjklmnpqrstvwxz2456789", only the digits' images) and changes
// when the template changes, but is NOT byte-equal to what a real cluster would compute.
// Random name suffixes (generateName) are replaced by 5 characters of the same alphabet derived
// from a SHA-256 of namespace, prefix and index, bumped on a name collision.
//
// A workload whose pods are already in the manifests (pods whose controller ownerReference names
// it and whose labels match its selector, as in a `kubectl get -o yaml` dump; for a Deployment,
// a ReplicaSet it owns, or pods owned by a ReplicaSet `<deploy>-<hash>` that is not in the
// manifests) gets no derived pods.

import { hash } from 'node:crypto';
import type { ClusterNode, Pod, WorkloadInfo } from '../model/model.js';
import { READY_ANNOTATION } from '../admit/pods.js';
import type { Labels } from '../model/selector.js';
import { matchesMap, matchesSelector } from '../model/selector.js';
import { isObj } from '../admit/validate.js';
import type { PodTemplate, WorkloadDraft, WorkloadKind } from '../admit/workloads.js';

/** k8s.io/apimachinery/pkg/util/rand alphabet: no vowels, no 0/1/3 (no words, no look-alikes). */
export const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const SAFE_CODES = Array.from(SAFE_ALPHABET, (c) => c.charCodeAt(0));

/** rand.SafeEncodeString: each character replaced by alphabet[code % 27]. */
export function safeEncodeString(s: string): string {
  let out = '';
  for (const ch of s) out += SAFE_ALPHABET[ch.codePointAt(0)! % SAFE_ALPHABET.length];
  return out;
}

/** FNV-1a, 32 bits (Go's hash/fnv New32a). */
export function fnv32a(bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  for (const b of bytes) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** JSON with object keys sorted, so equal objects give equal text whatever the key order. */
function canonicalJson(v: unknown): string {
  // Written out in one pass, no arrays per object (a template per Deployment, 10k of them); the
  // same text as the map/filter/join form (workload-hashing.test.ts).
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) {
      if (i > 0) out += ',';
      if (i in v) out += canonicalJson(v[i]); // a hole: map skips it and join writes nothing
    }
    return `${out}]`;
  }
  if (isObj(v)) {
    let out = '{';
    const keys = Object.keys(v);
    for (const k of keys.length > 1 ? keys.sort() : keys) {
      const x = v[k];
      if (x === undefined) continue;
      if (out.length > 1) out += ',';
      out += `${JSON.stringify(k)}:${canonicalJson(x)}`;
    }
    return `${out}}`;
  }
  if (v instanceof Date) return JSON.stringify(v.toISOString());
  return JSON.stringify(v) ?? 'null';
}

/**
 * The pod-template-hash of a Deployment's ReplicaSet, shaped like controller.ComputeHash: FNV-32a
 * of the template (here: canonical JSON), plus the collision count as 8 little-endian bytes when
 * given, encoded as SafeEncodeString of the decimal value.
 */
export function computeTemplateHash(template: unknown, collisionCount?: number): string {
  const text = Buffer.from(canonicalJson(template), 'utf8');
  let bytes: Uint8Array = text;
  if (collisionCount !== undefined) {
    const extra = Buffer.alloc(8);
    extra.writeUInt32LE(collisionCount >>> 0, 0);
    bytes = Buffer.concat([text, extra]);
  }
  return safeEncodeString(String(fnv32a(bytes)));
}

/**
 * SHA-256 of the UTF-8 of `key` as a latin1 ('binary') string: one character per digest byte
 * (its code is the byte), read with charCodeAt. A hash or two per pod at 100k pods: the string
 * costs a third of the time of a Buffer digest and leaves no Buffer behind for the collector.
 */
export function sha256Bytes(key: string): string {
  return hash('sha256', key, 'binary');
}

/** The big-endian 16-bit word at byte i of a sha256Bytes digest. */
export const digestWord16 = (d: string, i: number): number => (d.charCodeAt(i) << 8) | d.charCodeAt(i + 1);

/** 5 characters of the safe alphabet derived from a seed (stands in for utilrand.String(5)). */
function hashSuffix(seed: string): string {
  const d = sha256Bytes(seed);
  const c = (i: number): number => SAFE_CODES[digestWord16(d, i * 2) % SAFE_CODES.length]!;
  // One string of five characters, not five strings grown one character at a time.
  return String.fromCharCode(c(0), c(1), c(2), c(3), c(4));
}

/** names.SimpleNameGenerator: the prefix cut to 58 characters, then 5 characters. */
export function generatedName(prefix: string, seed: string): string {
  return (prefix.length > 58 ? prefix.slice(0, 58) : prefix) + hashSuffix(seed);
}

/** Stable hash of a key, for node choice. */
function hash32(key: string): number {
  const d = sha256Bytes(key);
  return digestWord16(d, 0) * 65536 + digestWord16(d, 2);
}

/** Node labels as the kubelet sets them, plus the configured ones. */
function nodeLabels(n: ClusterNode): Record<string, string> {
  return {
    'kubernetes.io/hostname': n.name,
    'kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    ...(n.zone !== undefined ? { 'topology.kubernetes.io/zone': n.zone } : {}),
    ...n.labels,
  };
}

const KIND_ORDER: Record<WorkloadKind, number> = { Deployment: 0, ReplicaSet: 1, StatefulSet: 2, DaemonSet: 3, Job: 4, CronJob: 5 };
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The manifests' pods and ReplicaSets by owner, for telling which workloads already have pods. */
interface OwnerIndex {
  /** "ns/kind/name" of the owner -> the manifest pods it owns. */
  podsByOwner: Map<string, Pod[]>;
  /** "ns/name" of every ReplicaSet in the manifests. */
  rsNames: Set<string>;
  /** "ns/deploy" -> ReplicaSets it owns. */
  rsByDeployment: Map<string, WorkloadDraft[]>;
  /** Pods owned by a ReplicaSet `<deploy>-<hash>` that is not in the manifests: "ns/deploy" -> [rs, pods]. */
  orphanRS: Map<string, { rs: string; pods: Pod[] }[]>;
}

function pushTo<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const l = m.get(k);
  if (l) l.push(v);
  else m.set(k, [v]);
}

function indexOwners(workloads: readonly WorkloadDraft[], manifestPods: readonly Pod[]): OwnerIndex {
  const podsByOwner = new Map<string, Pod[]>();
  for (const p of manifestPods) if (p.owner) pushTo(podsByOwner, `${p.namespace}/${p.owner.kind}/${p.owner.name}`, p);
  const rsNames = new Set<string>();
  const rsByDeployment = new Map<string, WorkloadDraft[]>();
  for (const w of workloads) {
    if (w.kind !== 'ReplicaSet') continue;
    rsNames.add(`${w.meta.namespace}/${w.meta.name}`);
    if (w.owner?.kind === 'Deployment') pushTo(rsByDeployment, `${w.meta.namespace}/${w.owner.name}`, w);
  }
  const hashRe = new RegExp(`-[${SAFE_ALPHABET}]{1,10}$`);
  const orphanRS = new Map<string, { rs: string; pods: Pod[] }[]>();
  for (const [k, pods] of podsByOwner) {
    const [ns, kind, ...rest] = k.split('/');
    const rs = rest.join('/');
    if (kind !== 'ReplicaSet' || rsNames.has(`${ns}/${rs}`) || !hashRe.test(rs)) continue;
    pushTo(orphanRS, `${ns}/${rs.replace(hashRe, '')}`, { rs, pods });
  }
  return { podsByOwner, rsNames, rsByDeployment, orphanRS };
}

/** Whether the manifests already hold the workload's pods, and a Deployment's ReplicaSet. */
function manifestOwnership(w: WorkloadDraft, idx: OwnerIndex): { hasManifestPods: boolean; replicaSet?: string } {
  const selects = (labels: Record<string, string>): boolean => !w.selector || matchesSelector(w.selector, labels);
  if (w.kind === 'CronJob') return { hasManifestPods: false };
  if (w.kind !== 'Deployment') {
    return { hasManifestPods: (idx.podsByOwner.get(`${w.meta.namespace}/${w.kind}/${w.meta.name}`) ?? []).some((p) => selects(p.labels)) };
  }
  const key = `${w.meta.namespace}/${w.meta.name}`;
  const rs = (idx.rsByDeployment.get(key) ?? []).filter((r) => !r.template || selects(r.template.labels)).sort((a, b) => cmp(a.meta.name, b.meta.name));
  const active = rs.find((r) => r.replicas > 0) ?? rs[0];
  if (active) return { hasManifestPods: true, replicaSet: active.meta.name };
  const owner = (idx.orphanRS.get(key) ?? []).filter((x) => x.pods.some((p) => selects(p.labels))).sort((a, b) => cmp(a.rs, b.rs))[0];
  return owner ? { hasManifestPods: true, replicaSet: owner.rs } : { hasManifestPods: false };
}

/** What every controller needs to create a workload's pods. */
interface PodFactory {
  readonly w: WorkloadDraft;
  readonly tpl: PodTemplate;
  /** Nodes the template's nodeSelector allows. */
  readonly candidates: readonly ClusterNode[];
  /** Every pod name in use in the workload's namespace. */
  readonly taken: Set<string>;
  /**
   * A pod; `labels` is the pod's whole label set (see labelsWith), shared by every pod that has
   * the same set, and `owner` likewise.
   */
  make(name: string, labels: Labels, owner: PodOwner, node: string | undefined, identity?: { hostname: string; subdomain?: string | undefined }): Pod;
  /** The template's labels plus `extra`, frozen so the pods of a workload can share one object. */
  labelsWith(extra: Labels): Labels;
  /** A generateName-style pod name that is free in the namespace. */
  freeName(prefix: string, seed: string): string;
}

type PodOwner = { readonly kind: string; readonly name: string };
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * The podIPs of a pod before assignPodIPs: one frozen empty array for every derived pod, as
 * assignPodIPs replaces the array of the pods it gives an address and leaves the others empty.
 */
const NO_IPS: readonly string[] = Object.freeze([]);

function podFactory(w: WorkloadDraft, tpl: PodTemplate, candidates: readonly ClusterNode[], taken: Set<string>): PodFactory {
  const ns = w.meta.namespace;
  const notReady = tpl.annotations[READY_ANNOTATION] === 'false' || w.meta.annotations[READY_ANNOTATION] === 'false';
  const dns = Object.entries(tpl.dns) as [keyof typeof tpl.dns, never][];
  return {
    w,
    tpl,
    candidates,
    taken,
    labelsWith(extra) {
      return Object.freeze({ ...tpl.labels, ...extra });
    },
    make(name, labels, owner, node, identity) {
      const nodeName = node ?? tpl.nodeName ?? (candidates.length > 0 ? candidates[hash32(`${ns}/${name}`) % candidates.length]!.name : undefined);
      const hostname = identity ? identity.hostname : tpl.hostname;
      const subdomain = identity ? identity.subdomain : tpl.subdomain;
      // One literal and then the optional keys, in the order the model's pods have always had
      // (JSON and tests see the same object): no spread per pod at 100k pods.
      const pod: Partial<Mutable<Pod>> = {
        name,
        namespace: ns,
        labels,
        annotations: tpl.annotations,
        source: w.meta.source,
        podIPs: NO_IPS,
        // Unschedulable (no node matches its nodeSelector): Pending, without an IP.
        phase: nodeName === undefined ? 'Pending' : 'Running',
        deleting: false,
      };
      if (hostname) pod.hostname = hostname;
      if (subdomain) pod.subdomain = subdomain;
      if (nodeName !== undefined) pod.nodeName = nodeName;
      pod.hostNetwork = tpl.hostNetwork;
      pod.ready = !notReady && nodeName !== undefined;
      pod.containerPorts = tpl.containerPorts;
      pod.owner = owner;
      pod.derived = true;
      for (const [k, v] of dns) pod[k] = v;
      return pod as Pod;
    },
    freeName(prefix, seed) {
      for (let attempt = 0; ; attempt++) {
        const name = generatedName(prefix, attempt === 0 ? seed : `${seed}#${attempt}`);
        if (!taken.has(name)) {
          taken.add(name);
          return name;
        }
      }
    },
  };
}

/** The Deployment controller: a ReplicaSet `<name>-<template hash>` and its pods. */
function deploymentPods(f: PodFactory, rsNames: ReadonlySet<string>): { pods: Pod[]; replicaSet: string } {
  const { w, tpl } = f;
  const ns = w.meta.namespace;
  // A ReplicaSet of the same name that this Deployment does not own: bump the collision count.
  let hash = computeTemplateHash(tpl.raw);
  for (let c = 1; rsNames.has(`${ns}/${w.meta.name}-${hash}`) && c < 100; c++) hash = computeTemplateHash(tpl.raw, c);
  const replicaSet = `${w.meta.name}-${hash}`;
  const labels = f.labelsWith({ 'pod-template-hash': hash });
  const owner = { kind: 'ReplicaSet', name: replicaSet };
  const prefix = `${replicaSet}-`;
  const seed = `${ns}/${replicaSet}/`;
  const pods: Pod[] = [];
  for (let i = 0; i < w.replicas; i++) pods.push(f.make(f.freeName(prefix, seed + i), labels, owner, undefined));
  return { pods, replicaSet };
}

/** The ReplicaSet controller: `replicas` pods named `<name>-<random>`. */
function replicaSetPods(f: PodFactory): Pod[] {
  const { w } = f;
  const labels = f.labelsWith({});
  const owner = { kind: 'ReplicaSet', name: w.meta.name };
  const prefix = `${w.meta.name}-`;
  const seed = `${w.meta.namespace}/${w.meta.name}/`;
  const pods: Pod[] = [];
  for (let i = 0; i < w.replicas; i++) pods.push(f.make(f.freeName(prefix, seed + i), labels, owner, undefined));
  return pods;
}

/** The StatefulSet controller: ordinal pods with a stable hostname under the governing Service. */
function statefulSetPods(f: PodFactory): Pod[] {
  const { w, taken } = f;
  const ns = w.meta.namespace;
  const owner = { kind: 'StatefulSet', name: w.meta.name };
  const pods: Pod[] = [];
  for (let i = 0; i < w.replicas; i++) {
    const ordinal = w.ordinalStart + i;
    const name = `${w.meta.name}-${ordinal}`;
    if (taken.has(name)) {
      w.check.warn(
        `pod "${ns}/${name}" already exists in the manifests without belonging to this StatefulSet, so that ordinal is not created; rename one of them`,
      );
      continue;
    }
    taken.add(name);
    const labels = f.labelsWith({ 'statefulset.kubernetes.io/pod-name': name, 'apps.kubernetes.io/pod-index': String(ordinal) });
    pods.push(f.make(name, labels, owner, undefined, { hostname: name, subdomain: w.serviceName }));
  }
  return pods;
}

/** The DaemonSet controller: one pod per matching node (or on the template's nodeName). */
function daemonSetPods(f: PodFactory): Pod[] {
  const { w, tpl, candidates } = f;
  const ns = w.meta.namespace;
  const owner = { kind: 'DaemonSet', name: w.meta.name };
  const labels = f.labelsWith({ 'pod-template-generation': '1' });
  if (tpl.nodeName !== undefined) {
    return [f.make(f.freeName(`${w.meta.name}-`, `${ns}/${w.meta.name}/${tpl.nodeName}`), labels, owner, tpl.nodeName)];
  }
  if (candidates.length === 0) {
    w.check.warn('no node matches spec.template.spec.nodeSelector, so the DaemonSet runs no pods; fix the nodeSelector or the configured nodes');
  }
  return candidates.map((n) => f.make(f.freeName(`${w.meta.name}-`, `${ns}/${w.meta.name}/${n.name}`), labels, owner, n.name));
}

/** The Job controller: `completions` pods; Indexed Jobs get an index label and hostname. */
function jobPods(f: PodFactory): Pod[] {
  const { w, tpl } = f;
  const ns = w.meta.namespace;
  const owner = { kind: 'Job', name: w.meta.name };
  const jobLabels = { 'batch.kubernetes.io/job-name': w.meta.name, 'job-name': w.meta.name };
  const labels = w.indexed ? undefined : f.labelsWith(jobLabels);
  const pods: Pod[] = [];
  for (let i = 0; i < w.replicas; i++) {
    if (w.indexed) {
      const name = f.freeName(`${w.meta.name}-${i}-`, `${ns}/${w.meta.name}/${i}`);
      const identity = { hostname: `${w.meta.name}-${i}`, subdomain: tpl.subdomain };
      pods.push(f.make(name, f.labelsWith({ ...jobLabels, 'batch.kubernetes.io/job-completion-index': String(i) }), owner, undefined, identity));
    } else {
      pods.push(f.make(f.freeName(`${w.meta.name}-`, `${ns}/${w.meta.name}/${i}`), labels!, owner, undefined));
    }
  }
  return pods;
}

/**
 * Derives the pods of the workloads. `manifestPods` are the pods written in the manifests (their
 * names are taken first); `nodes` are sorted by name by the caller.
 */
export function deriveWorkloadPods(
  workloads: readonly WorkloadDraft[],
  manifestPods: readonly Pod[],
  nodes: readonly ClusterNode[],
): { pods: Pod[]; infos: WorkloadInfo[] } {
  // Pod names in use by namespace: no "ns/name" string per pod, 100k of them live through here.
  const takenByNs = new Map<string, Set<string>>();
  const takenIn = (ns: string): Set<string> => {
    let t = takenByNs.get(ns);
    if (!t) takenByNs.set(ns, (t = new Set()));
    return t;
  };
  for (const p of manifestPods) takenIn(p.namespace).add(p.name);
  const idx = indexOwners(workloads, manifestPods);
  const labelledNodes = nodes.map((n) => ({ node: n, labels: nodeLabels(n) }));
  const sorted = [...workloads].sort(
    (a, b) => cmp(a.meta.namespace, b.meta.namespace) || cmp(a.meta.name, b.meta.name) || KIND_ORDER[a.kind] - KIND_ORDER[b.kind],
  );
  const out: Pod[] = [];
  const infos: WorkloadInfo[] = [];
  for (const w of sorted) {
    const { hasManifestPods, replicaSet: manifestReplicaSet } = manifestOwnership(w, idx);
    let replicaSet = manifestReplicaSet;
    let derived: Pod[] = [];
    const tpl = w.template;
    if (!hasManifestPods && w.runnable && tpl) {
      const candidates = labelledNodes.filter((n) => matchesMap(tpl.nodeSelector, n.labels)).map((n) => n.node);
      const f = podFactory(w, tpl, candidates, takenIn(w.meta.namespace));
      switch (w.kind) {
        case 'Deployment':
          ({ pods: derived, replicaSet } = deploymentPods(f, idx.rsNames));
          break;
        case 'ReplicaSet':
          derived = replicaSetPods(f);
          break;
        case 'StatefulSet':
          derived = statefulSetPods(f);
          break;
        case 'DaemonSet':
          derived = daemonSetPods(f);
          break;
        case 'Job':
          derived = jobPods(f);
          break;
        case 'CronJob':
          break;
      }
      if (w.kind !== 'DaemonSet' && candidates.length === 0 && tpl.nodeName === undefined && derived.length > 0) {
        w.check.warn(
          'no node matches spec.template.spec.nodeSelector, so its pods stay Pending without an IP and get no endpoints; fix the nodeSelector or the configured nodes',
        );
      }
    }
    for (const p of derived) out.push(p); // not push(...derived): a 100k-replica workload overflows the stack
    infos.push({
      kind: w.kind,
      name: w.meta.name,
      namespace: w.meta.namespace,
      source: w.meta.source,
      derivedPods: derived.map((p) => p.name),
      ...(replicaSet !== undefined ? { replicaSet } : {}),
      hasManifestPods,
    });
  }
  return { pods: out, infos };
}
