// Small typed readers for untyped manifest values that record findings instead of throwing.

import type { Finding, SourceRef } from './model.js';
import { canonicalIp } from '../pkg/ip.js';
import { excerpt, type Positions } from './yaml-docs.js';

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
    this.push('error', message, path, code);
  }

  warn(message: string, path?: string, code?: string): void {
    this.push('warning', message, path, code);
  }

  info(message: string, path?: string, code?: string): void {
    this.push('info', message, path, code);
  }

  private push(severity: Finding['severity'], message: string, path: string | undefined, code: string | undefined): void {
    this.findings.push({ file: this.source.file, line: this.lineOf(path), severity, message: `${this.what}: ${message}`, ...(code !== undefined ? { code } : {}) });
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
      this.error(`${path} must be a string, got ${excerpt(v)}; quote the value`, path);
      return undefined;
    }
    return v;
  }

  bool(parent: Obj, key: string, path: string): boolean | undefined {
    const v = parent[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'boolean') {
      this.error(`${path} must be true or false, got ${excerpt(v)}`, path);
      return undefined;
    }
    return v;
  }

  /** A port number 1..65535; absent gives undefined (the caller decides whether it is required). */
  port(parent: Obj, key: string, path: string): number | undefined {
    const v = parent[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 65535) {
      this.error(`${path} ${excerpt(v)} is not a valid port number; use an integer between 1 and 65535`, path);
      return undefined;
    }
    return v;
  }

  /** A string-to-string map (labels, annotations, selector); other scalar values are stringified with a warning. */
  stringMap(parent: Obj, key: string, path: string): Record<string, string> {
    const m = this.obj(parent, key, path);
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(m)) {
      if (typeof v === 'string') out[k] = v;
      else if (v === null || v === undefined) out[k] = '';
      else if (typeof v === 'number' || typeof v === 'boolean') {
        this.warn(`${path}.${k} must be a string, got ${excerpt(v)}; quote it (kubectl would reject it), read as "${String(v)}"`, `${path}.${k}`);
        out[k] = String(v);
      } else this.error(`${path}.${k} must be a string, got ${excerpt(v)}`, `${path}.${k}`);
    }
    return out;
  }

  /** Validates an IP literal; returns its canonical text or undefined (after an error). */
  ip(value: unknown, path: string, fix = 'write a plain IPv4 or IPv6 address'): string | undefined {
    if (typeof value !== 'string') {
      this.error(`${path} must be an IP address string, got ${excerpt(value)}`, path);
      return undefined;
    }
    const c = canonicalIp(value);
    if (c === undefined) this.error(`${path} ${excerpt(value)} is not a valid IP address; ${fix}`, path);
    return c;
  }

  protocol(parent: Obj, key: string, path: string): string {
    const p = this.str(parent, key, path);
    if (p === undefined || p === '') return 'TCP';
    if (p !== 'TCP' && p !== 'UDP' && p !== 'SCTP') {
      this.error(`${path} ${excerpt(p)} is not supported; use TCP, UDP or SCTP (upper case)`, path);
    }
    return p;
  }
}
