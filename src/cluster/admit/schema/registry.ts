// Which kinds a cluster admits and how each is validated: the built-in kinds and Gateway API
// (kubernetes-models' packages), well-known CRDs by name, and the CRDs found in the manifests.
// Unknown kinds get the API server's "no matches for kind" (apimachinery meta.NoKindMatchError)
// with the nearest known kind.

import { issuesOf } from './ajv-issues.js';
import { readCrd, type CrdKind } from './crd.js';
import { droppedField } from './dropped-fields.js';
import { CrdSchema, type CrdSchemaLimits } from './crd-schema.js';
import { learnByProxy, Shape, unknownFields } from './field-shapes.js';
import { KNOWN_CRDS, type KnownCrd } from './known-crds.js';
import { packageKind, packageKinds } from './package-kinds.js';
import { hasPrecompiled, precompiledValidator } from './precompiled.js';
import { removedIn } from './removed.js';
import { builtinNamespaced, clusterScopedName } from './scope.js';
import { compareVersions, editDistance } from './suggest.js';
import { type AjvValidate, apiVersionOf, type FieldIssue, type KindLookup, type KindSource } from './types.js';

type Check = (obj: unknown) => FieldIssue[];

const NOT_A_MAPPING: FieldIssue = { path: '', code: 'schema-type', message: 'the object must be a mapping (apiVersion, kind, metadata, ...)' };
const isRec = (v: unknown): v is object => typeof v === 'object' && v !== null && !Array.isArray(v);

// One check per validator for the process: what it learned of the fields serves every registry.
const builtinChecks = new Map<string, Check>();

const lastField = (path: string): string => path.slice(path.lastIndexOf('.') + 1);

function builtinCheck(schemaFile: string, kind: string): Check | undefined {
  if (!hasPrecompiled(schemaFile)) return undefined;
  let check = builtinChecks.get(schemaFile);
  if (check === undefined) {
    const root = new Shape();
    check = (obj) => {
      if (!isRec(obj)) return [NOT_A_MAPPING];
      const v = precompiledValidator(schemaFile);
      if (v === undefined) return [];
      const issues = runWithoutManagedFields(v, obj) ? [] : issuesOf(obj, v.errors);
      for (const u of unknownFields(obj, root, (o, r) => learnByProxy(v, o, r))) if (!droppedField(kind, lastField(u.path))) issues.push(u);
      return issues;
    };
    builtinChecks.set(schemaFile, check);
  }
  return check;
}

/**
 * Runs `v` on `obj` as if it had no metadata.managedFields: the API server replaces managed fields
 * of a request that do not decode instead of rejecting the object (apimachinery
 * pkg/util/managedfields/internal/fieldmanager.go: Update falls back to the live object's,
 * UpdateNoErrors clears them), and they are the most costly part of ObjectMeta to check (a
 * `kubectl get -o yaml` object carries one entry per manager, each with a date-time). Their
 * fields are still walked for unknown ones, which strict decoding does reject. The field is set
 * to undefined for the call and put back (no copy of every object: measured ~8 us each while the
 * validators warm up); a frozen metadata is copied instead.
 */
function runWithoutManagedFields(v: AjvValidate, obj: object): boolean {
  const md = (obj as { metadata?: unknown }).metadata;
  if (!isRec(md)) return v(obj);
  const meta = md as { managedFields?: unknown };
  const mf = meta.managedFields;
  if (mf === undefined) return v(obj);
  if (Object.isFrozen(meta)) return v({ ...obj, metadata: { ...meta, managedFields: undefined } });
  meta.managedFields = undefined;
  try {
    return v(obj);
  } finally {
    meta.managedFields = mf;
  }
}

function schemaCheck(schema: CrdSchema): Check {
  return (obj) => {
    if (!isRec(obj)) return [NOT_A_MAPPING];
    const issues = issuesOf(obj, schema.validate(obj));
    for (const u of unknownFields(obj, schema.shape)) issues.push(u);
    return issues;
  };
}

// Known CRDs' schemas are data of this module: prepared once for the process.
const knownChecks = new Map<KnownCrd, Check | null>();
function knownCheck(k: KnownCrd): Check | undefined {
  let c = knownChecks.get(k);
  if (c === undefined) {
    const s = k.schema !== undefined ? CrdSchema.prepare(k.schema, '').schema : undefined;
    c = s !== undefined ? schemaCheck(s) : null;
    knownChecks.set(k, c);
  }
  return c ?? undefined;
}

const KNOWN_BY_GROUP_KIND = new Map(KNOWN_CRDS.map((k) => [`${k.group}/${k.kind}`, k]));

/** A kind a "did you mean" may name, at its preferred apiVersion. */
interface Candidate {
  readonly group: string;
  readonly kind: string;
  readonly apiVersion: string;
}

const MAX_CACHED = 10_000;

export class KindRegistry {
  private readonly crds = new Map<string, { crd: CrdKind; checks: Map<string, Check | null> }>();
  private readonly cache = new Map<string, KindLookup>();
  private candidates: Candidate[] | undefined;

  private constructor(private readonly crdLimits?: CrdSchemaLimits) {}

  /** Built-in Kubernetes kinds + well-known CRDs. Cheap to create; one per load. */
  static create(crdLimits?: CrdSchemaLimits): KindRegistry {
    return new KindRegistry(crdLimits);
  }

  lookup(apiVersion: string, kind: string): KindLookup {
    const key = `${apiVersion}\n${kind}`;
    let hit = this.cache.get(key);
    if (hit === undefined) {
      hit = this.find(apiVersion, kind);
      if (this.cache.size < MAX_CACHED) this.cache.set(key, hit);
    }
    return hit;
  }

  /**
   * Registers a CustomResourceDefinition object (apiextensions.k8s.io/v1) found in the manifests:
   * its group, names.kind, scope, served versions and each version's schema.openAPIV3Schema.
   * Returns issues with the CRD itself (bad shape).
   */
  addCrd(obj: unknown): FieldIssue[] {
    const { crd, issues } = readCrd(obj, this.crdLimits);
    if (crd !== undefined) {
      this.crds.set(`${crd.group}/${crd.kind}`, { crd, checks: new Map() });
      this.cache.clear();
      this.candidates = undefined;
    }
    return issues;
  }

  private find(apiVersion: string, kind: string): KindLookup {
    const slash = apiVersion.indexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const version = apiVersion.slice(slash + 1);
    if (version === '' || version.includes('/') || (slash >= 0 && group === '')) return this.unknown(apiVersion, kind, group);
    const removed = removedIn(apiVersion, kind);
    const pk = removed === undefined ? packageKind(group, version, kind) : undefined;
    // Built-in kinds come first: the API server serves them whatever CRDs say.
    if (pk?.pkg === 'kubernetes-models') return known(group, version, kind, builtinNamespaced(group, kind), 'builtin', builtinCheck(pk.schemaFile, kind));
    const manifest = this.crds.get(`${group}/${kind}`);
    if (manifest !== undefined) {
      const v = manifest.crd.versions.find((x) => x.name === version);
      if (v === undefined) return this.unknown(apiVersion, kind, group);
      let check = manifest.checks.get(version);
      if (check === undefined) {
        check = v.schema !== undefined ? schemaCheck(v.schema) : null;
        manifest.checks.set(version, check);
      }
      return known(group, version, kind, manifest.crd.namespaced, 'manifest-crd', check ?? undefined);
    }
    const k = KNOWN_BY_GROUP_KIND.get(`${group}/${kind}`);
    if (k !== undefined) {
      if (!k.versions.includes(version)) return this.unknown(apiVersion, kind, group);
      return known(group, version, kind, k.namespaced, 'known-crd', knownCheck(k));
    }
    if (removed !== undefined) return this.unknown(apiVersion, kind, group, ` (${apiVersion} ${kind} was removed in Kubernetes ${removed})`);
    // Gateway API is installed as CRDs in a real cluster; its schemas ship in a package here.
    if (pk !== undefined) return known(group, version, kind, builtinNamespaced(group, kind), 'known-crd', builtinCheck(pk.schemaFile, kind));
    return this.unknown(apiVersion, kind, group);
  }

  private unknown(apiVersion: string, kind: string, group: string, why = ''): KindLookup {
    const base = `no matches for kind ${JSON.stringify(kind)} in version ${JSON.stringify(apiVersion)}`;
    const near = this.nearest(group, kind);
    const advice =
      near !== undefined
        ? `; did you mean ${near.kind} in ${near.apiVersion}?${why}`
        : `${why}; add its CustomResourceDefinition to the manifests, or fix the kind (kubectl: ensure CRDs are installed first)`;
    return { known: false, message: base + advice };
  }

  /**
   * The kind most likely meant: the same name in another group or version, then the same name in
   * another letter case, then the fewest edits (at most 2); each preferring the same group.
   */
  private nearest(group: string, kind: string): Candidate | undefined {
    const cands = this.allCandidates();
    const pick = (match: (c: Candidate) => boolean): Candidate | undefined => {
      let first: Candidate | undefined;
      for (const c of cands) {
        if (!match(c)) continue;
        if (c.group === group) return c;
        first ??= c;
      }
      return first;
    };
    const lower = kind.toLowerCase();
    const found = pick((c) => c.kind === kind) ?? pick((c) => c.kind.toLowerCase() === lower);
    if (found !== undefined) return found;
    const max = kind.length >= 5 ? 2 : kind.length >= 3 ? 1 : 0;
    let best: Candidate | undefined;
    let bestScore = Number.POSITIVE_INFINITY;
    for (const c of cands) {
      const d = editDistance(lower, c.kind.toLowerCase(), max);
      if (d > max) continue;
      const score = d * 2 + (c.group === group ? 0 : 1);
      if (score < bestScore) {
        best = c;
        bestScore = score;
      }
    }
    return best;
  }

  /** Every kind known, each at its preferred served version: built-ins first, then CRDs. */
  private allCandidates(): Candidate[] {
    if (this.candidates === undefined) {
      const byKind = new Map<string, { group: string; kind: string; versions: string[] }>();
      const add = (group: string, kind: string, version: string): void => {
        const key = `${group}/${kind}`;
        const e = byKind.get(key) ?? { group, kind, versions: [] };
        e.versions.push(version);
        byKind.set(key, e);
      };
      for (const pk of packageKinds()) {
        if (removedIn(pk.apiVersion, pk.kind) !== undefined) continue;
        const slash = pk.apiVersion.indexOf('/');
        add(slash < 0 ? '' : pk.apiVersion.slice(0, slash), pk.kind, pk.apiVersion.slice(slash + 1));
      }
      for (const { crd } of this.crds.values()) for (const v of crd.versions) add(crd.group, crd.kind, v.name);
      for (const k of KNOWN_CRDS) if (!this.crds.has(`${k.group}/${k.kind}`)) for (const v of k.versions) add(k.group, k.kind, v);
      this.candidates = [...byKind.values()].map((e) => {
        const best = e.versions.sort(compareVersions)[0]!;
        return { group: e.group, kind: e.kind, apiVersion: apiVersionOf(e.group, best) };
      });
    }
    return this.candidates;
  }
}

function known(group: string, version: string, kind: string, namespaced: boolean, source: KindSource, validate: Check | undefined): KindLookup {
  return { known: true, group, version, kind, namespaced, source, ...(validate !== undefined ? { validate } : {}) };
}

/**
 * The scope of a kind by its name alone, for an object whose apiVersion no API serves (it is
 * rejected, and named in messages as the kind of that name would be): cluster-scoped when a
 * built-in group or a well-known CRD makes a kind of that name so.
 */
export function namespacedByName(kind: string): boolean {
  return !clusterScopedName(kind) && !KNOWN_CRDS.some((k) => k.kind === kind && !k.namespaced);
}
