// What a load found: a problem located at a file and line, the error a load throws when it cannot
// go on, and how a message quotes a manifest value. Every stage of the pipeline (read, admit,
// emulate) reports through these, so they sit below all of them.

/** A problem in the input, located so a user can fix it. */
export interface Finding {
  readonly file: string;
  /** 1-based; 0 when the finding is about the whole path (a missing file, a directory). */
  readonly line: number;
  /** 1-based column, when the finding is about one place in the line (a YAML syntax error). */
  readonly column?: number;
  /**
   * error: the object is rejected, as the API server rejects it (not served); warning: served, but
   * something about it breaks or degrades DNS; info: worth knowing, never a failure (a kind DNS
   * does not use, a status clusterdns filled in).
   */
  readonly severity: 'error' | 'warning' | 'info';
  readonly message: string;
  /** A stable identifier of the kind of finding (e.g. 'selector-no-pods'), for model checks. */
  readonly code?: string;
}

/** "file:line", or just "file" for a finding about a whole path (line 0). */
export function findingPlace(f: Pick<Finding, 'file' | 'line'>): string {
  return f.line > 0 ? `${f.file}:${f.line}` : f.file;
}

/** Thrown when manifests cannot be loaded; carries every error found, not just the first. */
export class ManifestError extends Error {
  constructor(readonly findings: readonly Finding[]) {
    super(
      findings
        .filter((f) => f.severity === 'error')
        .map((f) => `${findingPlace(f)}: ${f.message}`)
        .join('\n'),
    );
    this.name = 'ManifestError';
  }
}

/**
 * An input value as JSON (strings quoted, objects and arrays walked), cut after `max` characters
 * (then "..."): what a message echoes of a manifest value, never the whole input. The Corefile's
 * `excerpt` (chain) instead cuts a plain token and escapes what is not printable ASCII.
 */
export function jsonExcerpt(v: unknown, max = 60): string {
  let out = '';
  const add = (s: string): boolean => {
    out += s;
    return out.length <= max;
  };
  const walk = (x: unknown): boolean => {
    if (Array.isArray(x)) {
      if (!add('[')) return false;
      for (let i = 0; i < x.length; i++) if ((i > 0 && !add(',')) || !walk(x[i])) return false;
      return add(']');
    }
    if (typeof x === 'object' && x !== null) {
      if (!add('{')) return false;
      let first = true;
      for (const [k, val] of Object.entries(x)) {
        if ((!first && !add(',')) || !add(`${JSON.stringify(k.length > max ? k.slice(0, max) : k)}:`) || !walk(val)) return false;
        first = false;
      }
      return add('}');
    }
    if (typeof x === 'string') return add(JSON.stringify(x.length > max ? x.slice(0, max + 1) : x));
    return add(x === undefined ? 'undefined' : (JSON.stringify(x) ?? String(x)));
  };
  return walk(v) ? out : `${out.slice(0, max)}...`;
}
