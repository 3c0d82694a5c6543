// Small typed readers for untyped manifest values that record findings instead of throwing.

import type { SourceRef } from '../model/model.js';
import { canonicalIp } from '../../pkg/ip.js';
import { type Finding, jsonExcerpt } from '../model/finding.js';
import type { Positions } from '../read/positions.js';

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function isDns1035Label(s: string): boolean {
  return s.length <= 63 && DNS1035_LABEL.test(s);
}
export function isDns1123Label(s: string): boolean {
  return s.length <= 63 && DNS1123_LABEL.test(s);
}
export function isDns1123Subdomain(s: string): boolean {
  return s.length <= 253 && DNS1123_SUBDOMAIN.test(s);
}

// apimachinery pkg/util/validation IsValidPortName (IANA_SVC_NAME, RFC 6335): at most 15 of
// [-a-z0-9], at least one letter, no "--", no '-' at either end.
const PORT_NAME_CHARS = /^[-a-z0-9]+$/;
const HAS_LETTER = /[a-z]/;

/** Why `s` is not an IANA service name (IsValidPortName), or undefined when it is one. */
export function portNameProblem(s: string): string | undefined {
  if (s.length > 15) return 'is longer than 15 characters';
  if (!PORT_NAME_CHARS.test(s)) return "may hold only lower-case letters, digits and '-'";
  if (!HAS_LETTER.test(s)) return 'must hold at least one letter';
  if (s.includes('--')) return "must not hold '--'";
  if (s.startsWith('-') || s.endsWith('-')) return "must not begin or end with '-'";
  return undefined;
}

// apimachinery IsQualifiedName's name part and IsValidLabelValue: alphanumeric at both ends,
// '-', '_' and '.' inside, at most 63 characters (a label value may also be empty).
const QUALIFIED_NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

/** Why `s` is not a qualified name ([prefix/]name, IsQualifiedName), or undefined when it is one. */
export function qualifiedNameProblem(s: string): string | undefined {
  const slash = s.indexOf('/');
  let name = s;
  if (slash >= 0) {
    if (s.indexOf('/', slash + 1) >= 0) return "may hold at most one '/'";
    const prefix = s.slice(0, slash);
    if (prefix === '') return "has an empty prefix before '/'";
    if (!isDns1123Subdomain(prefix)) return "has a prefix (before '/') that is not a DNS-1123 subdomain (lower-case letters, digits, '-' and '.')";
    name = s.slice(slash + 1);
  }
  if (name === '') return 'has an empty name part';
  if (name.length > 63) return 'has a name part longer than 63 characters';
  if (!QUALIFIED_NAME_PART.test(name)) return "has a name part that must be letters and digits at both ends with only '-', '_' and '.' inside";
  return undefined;
}

/** Why `s` is not a label value (IsValidLabelValue), or undefined when it is one. */
export function labelValueProblem(s: string): string | undefined {
  if (s === '') return undefined;
  if (s.length > 63) return 'is longer than 63 characters';
  if (!QUALIFIED_NAME_PART.test(s)) return "must be letters and digits at both ends with only '-', '_' and '.' inside";
  return undefined;
}

/**
 * Why an IP may not be an endpoint or external IP, or undefined: ValidateEndpointIP (once
 * ValidateNonSpecialIP, pkg/apis/core/validation) rejects the unspecified address, loopback,
 * link-local and link-local multicast, which no pod or node can serve from. Reads the bytes,
 * allocates nothing.
 */
export function specialIpProblem(b: Uint8Array): string | undefined {
  if (b.length === 4) {
    if (b[0] === 0 && b[1] === 0 && b[2] === 0 && b[3] === 0) return 'is the unspecified address';
    if (b[0] === 127) return 'is in the loopback range 127.0.0.0/8';
    if (b[0] === 169 && b[1] === 254) return 'is in the link-local range 169.254.0.0/16';
    if (b[0] === 224 && b[1] === 0 && b[2] === 0) return 'is in the link-local multicast range 224.0.0.0/24';
    return undefined;
  }
  if (b[0] === 0xfe && (b[1]! & 0xc0) === 0x80) return 'is in the link-local range fe80::/10';
  if (b[0] === 0xff && (b[1]! & 0x0f) === 0x02) return 'is in the link-local multicast range ff02::/16';
  let zeros = 0;
  for (let i = 0; i < 15; i++) if (b[i] === 0) zeros++;
  if (zeros === 15 && b[15] === 0) return 'is the unspecified address';
  if (zeros === 15 && b[15] === 1) return 'is the loopback address ::1';
  // An IPv4-mapped address is checked as its IPv4 address, as Go's net.IP methods do.
  if (zeros === 10 && b[10] === 0xff && b[11] === 0xff) return specialIpProblem(b.subarray(12));
  return undefined;
}

/** metadata.annotations: keys and values together at most 256 KiB (ValidateAnnotations, TotalAnnotationSizeLimitB). */
export const ANNOTATIONS_MAX_BYTES = 256 * 1024;

/** The metadata fields only an API server sets: an object carrying them was read from a cluster. */
const SERVER_SET_META = ['uid', 'resourceVersion', 'creationTimestamp'] as const;

/** How many of SERVER_SET_META the object carries (set, not empty). */
function serverSetMetaCount(o: Obj): number {
  const md = o['metadata'];
  if (!isObj(md)) return 0;
  return SERVER_SET_META.filter((k) => md[k] !== undefined && md[k] !== null && md[k] !== '').length;
}

/**
 * Whether the object carries metadata only an API server sets (uid, resourceVersion,
 * creationTimestamp): a dump of a cluster, whose allocated fields a real API server admitted.
 */
export function hasServerSetMeta(o: Obj): boolean {
  return serverSetMetaCount(o) > 0;
}

/**
 * Whether the object carries all of it, the uid a string: what `kubectl get -o yaml` prints,
 * an object its API server admitted schema and all (load.ts skips the schema check for it).
 */
export function isApiServerOutput(o: Obj): boolean {
  const md = o['metadata'];
  return isObj(md) && typeof md['uid'] === 'string' && serverSetMetaCount(o) === SERVER_SET_META.length;
}

/**
 * Reports findings located at one object. `what` names the object, e.g. 'Service "apps/web"'.
 * A finding about a field names the field's line (from `positions`), else the object's.
 */
export class Checker {
  /** Errors this checker recorded: an object with any is rejected, as the API server rejects it. */
  errors = 0;

  constructor(
    readonly findings: Finding[],
    readonly source: SourceRef,
    public what: string,
    readonly positions?: Positions,
  ) {}

  /** Line of a field path such as "spec.ports[0].port" (its nearest written ancestor's when absent). */
  lineOf(path?: string): number {
    return path !== undefined && this.positions ? this.positions.lineOf(path) : this.source.line;
  }

  /** The first of `paths` written in the object (the last one when none is). */
  written(...paths: string[]): string {
    return paths.find((p) => this.positions?.has(p)) ?? paths[paths.length - 1]!;
  }

  error(message: string, path?: string, code?: string): void {
    this.errors++;
    // The schema has spoken on this line already (a type, an enum, a required field): the
    // readers' own word on the same field would say it twice.
    if (this.schemaLines?.has(this.lineOf(path))) return;
    this.push('error', message, path, code);
  }

  /** An error the kind's schema found (admission); the readers' errors on its line are not repeated. */
  schemaError(message: string, path: string | undefined, code: string): void {
    this.errors++;
    (this.schemaLines ??= new Set()).add(this.lineOf(path));
    this.push('error', message, path, code);
  }

  private schemaLines: Set<number> | undefined;

  warn(message: string, path?: string, code?: string): void {
    this.push('warning', message, path, code);
  }

  info(message: string, path?: string, code?: string): void {
    this.push('info', message, path, code);
  }

  /** Error findings this checker added (fewer than `errors` when one repeated the schema's). */
  reported = 0;

  private push(severity: Finding['severity'], message: string, path: string | undefined, code: string | undefined): void {
    if (severity === 'error') this.reported++;
    this.findings.push({
      file: this.source.file,
      line: this.lineOf(path),
      severity,
      message: `${this.what}: ${message}`,
      ...(code !== undefined ? { code } : {}),
    });
  }

  /** A mapping field; absent/null gives {}. */
  obj(parent: Obj, key: string, path: string): Obj {
    const v = parent[key];
    if (v === undefined || v === null) return {};
    if (!isObj(v)) {
      this.error(`${path} must be a mapping`, path);
      return {};
    }
    return v;
  }

  /** A sequence field; absent/null gives []. */
  arr(parent: Obj, key: string, path: string): unknown[] {
    const v = parent[key];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) {
      this.error(`${path} must be a list`, path);
      return [];
    }
    return v;
  }

  /** A string field; absent/null gives undefined. Numbers and booleans are an error (quote them). */
  str(parent: Obj, key: string, path: string): string | undefined {
    const v = parent[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') {
      this.error(`${path} must be a string, got ${jsonExcerpt(v)}; quote the value`, path);
      return undefined;
    }
    return v;
  }

  bool(parent: Obj, key: string, path: string): boolean | undefined {
    const v = parent[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'boolean') {
      this.error(`${path} must be true or false, got ${jsonExcerpt(v)}`, path);
      return undefined;
    }
    return v;
  }

  /** A port number 1..65535; absent gives undefined (the caller decides whether it is required). */
  port(parent: Obj, key: string, path: string): number | undefined {
    const v = parent[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 65535) {
      this.error(`${path} ${jsonExcerpt(v)} is not a valid port number; use an integer between 1 and 65535`, path, 'invalid-port');
      return undefined;
    }
    return v;
  }

  /**
   * A string-to-string map (labels, annotations, selector, nodeSelector). A number or boolean is
   * an error, as the API server's decoder rejects a non-string in a map[string]string: quote it.
   */
  stringMap(parent: Obj, key: string, path: string): Record<string, string> {
    const m = this.obj(parent, key, path);
    const out: Record<string, string> = {};
    for (const k in m) {
      const v = m[k];
      if (typeof v === 'string') out[k] = v;
      else if (v === null || v === undefined) out[k] = '';
      else if (typeof v === 'number' || typeof v === 'boolean') {
        this.error(`${path}.${k} must be a string, got ${jsonExcerpt(v)}; quote it ("${String(v)}")`, `${path}.${k}`, 'non-string-value');
        out[k] = String(v);
      } else this.error(`${path}.${k} must be a string, got ${jsonExcerpt(v)}`, `${path}.${k}`, 'non-string-value');
    }
    return out;
  }

  /**
   * Labels, or a Service selector: keys are qualified names and values label values
   * (metav1validation ValidateLabels: IsQualifiedName, IsValidLabelValue).
   */
  labels(parent: Obj, key: string, path: string): Record<string, string> {
    const out = this.stringMap(parent, key, path);
    for (const k in out) {
      const kp = qualifiedNameProblem(k);
      if (kp !== undefined) {
        this.error(`${path} key ${jsonExcerpt(k)} ${kp}; use [prefix/]name such as app.kubernetes.io/name`, `${path}.${k}`, 'invalid-label-key');
      }
      const vp = labelValueProblem(out[k]!);
      if (vp !== undefined) {
        this.error(`${path}.${k} value ${jsonExcerpt(out[k])} ${vp}; use at most 63 letters, digits, '-', '_' and '.'`, `${path}.${k}`, 'invalid-label-value');
      }
    }
    return out;
  }

  /**
   * Annotations: keys are qualified names (compared in lower case) and keys and values together
   * hold at most 256 KiB (ValidateAnnotations in apimachinery pkg/api/validation/objectmeta.go).
   */
  annotations(parent: Obj, key: string, path: string): Record<string, string> {
    const out = this.stringMap(parent, key, path);
    // UTF-16 units first: a UTF-8 byte count is needed only when 3 bytes a unit could pass the limit.
    let units = 0;
    for (const k in out) {
      const kp = qualifiedNameProblem(k.toLowerCase());
      if (kp !== undefined) {
        this.error(`${path} key ${jsonExcerpt(k)} ${kp}; use [prefix/]name such as example.com/owner`, `${path}.${k}`, 'invalid-annotation-key');
      }
      units += k.length + out[k]!.length;
    }
    let bytes = units;
    if (units * 3 > ANNOTATIONS_MAX_BYTES) {
      bytes = 0;
      for (const k in out) bytes += Buffer.byteLength(k) + Buffer.byteLength(out[k]!);
    }
    if (bytes > ANNOTATIONS_MAX_BYTES) {
      this.error(
        `${path} hold ${bytes} bytes, more than the 262144 (256 KiB) the API server admits; move large data to a ConfigMap`,
        path,
        'annotations-too-large',
      );
    }
    return out;
  }

  /** Validates an IP literal; returns its canonical text or undefined (after an error). */
  ip(value: unknown, path: string, fix = 'write a plain IPv4 or IPv6 address'): string | undefined {
    if (typeof value !== 'string') {
      this.error(`${path} must be an IP address string, got ${jsonExcerpt(value)}`, path, 'invalid-ip');
      return undefined;
    }
    const c = canonicalIp(value);
    if (c === undefined) this.error(`${path} ${jsonExcerpt(value)} is not a valid IP address; ${fix}`, path, 'invalid-ip');
    return c;
  }

  protocol(parent: Obj, key: string, path: string): string {
    const p = this.str(parent, key, path);
    if (p === undefined || p === '') return 'TCP';
    if (p !== 'TCP' && p !== 'UDP' && p !== 'SCTP') {
      this.error(`${path} ${jsonExcerpt(p)} is not supported; use TCP, UDP or SCTP (upper case)`, path, 'invalid-protocol');
    }
    return p;
  }
}
