// DNSSEC canonical name order (RFC 4034 section 6.1), the order CoreDNS's file plugin walks its
// zone tree in: labels compared right to left as lowercase octet strings, escapes decoded.

/** The labels of a presentation-form name as byte arrays, escapes (`\.`, `\DDD`) decoded. */
function labels(name: string): number[][] {
  const out: number[][] = [];
  let cur: number[] = [];
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c === 92 /* \ */ && i + 1 < name.length) {
      const d = name.slice(i + 1, i + 4);
      if (/^\d{3}$/.test(d)) {
        cur.push(Number(d));
        i += 3;
      } else {
        cur.push(name.charCodeAt(i + 1));
        i += 1;
      }
      continue;
    }
    if (c === 46 /* . */) {
      out.push(cur);
      cur = [];
      continue;
    }
    cur.push(c);
  }
  if (cur.length > 0) out.push(cur);
  return out.map((l) => l.map((b) => (b >= 65 && b <= 90 ? b + 32 : b)));
}

export function canonicalCompare(a: string, b: string): number {
  const la = labels(a).reverse();
  const lb = labels(b).reverse();
  for (let i = 0; i < Math.min(la.length, lb.length); i++) {
    const x = la[i]!;
    const y = lb[i]!;
    for (let j = 0; j < Math.min(x.length, y.length); j++) if (x[j] !== y[j]) return x[j]! - y[j]!;
    if (x.length !== y.length) return x.length - y.length;
  }
  return la.length - lb.length;
}

/**
 * A string whose plain (code unit) order is the canonical order of names, for sorting many
 * names with one key each instead of decoding both names on every comparison: labels right to
 * left, each byte b as the code unit b + 1, each label closed by code unit 0 (so a label sorts
 * before every longer label it is a prefix of, as RFC 4034 6.1 orders them).
 */
export function canonicalKey(name: string): string {
  const ls = labels(name);
  let out = '';
  for (let i = ls.length - 1; i >= 0; i--) {
    // A code unit at a time, not fromCharCode(...label): no argument list as long as the label.
    for (const b of ls[i]!) out += String.fromCharCode(b + 1);
    out += '\u0000';
  }
  return out;
}

// Plain names: ASCII without escapes or NUL. For these, labels right to left joined by NUL sort
// exactly as their canonicalKey does (every code unit stays above the NUL that closes a label),
// and cost a split and a join instead of a pass a code unit at a time.
const PLAIN_NAME = /^[\x01-\x5b\x5d-\x7f]*$/;

function plainKey(name: string): string {
  const labels = name.toLowerCase().split('.');
  if (labels[labels.length - 1] === '') labels.pop();
  if (labels.length === 0) return '';
  return `${labels.reverse().join('\u0000')}\u0000`;
}

/**
 * Sort keys for `names` (same index): plain code unit order of the keys is the canonical order of
 * the names, as with canonicalKey, whose keys are used for all of them unless every name is plain.
 * The two kinds of key are never mixed in one result.
 */
export function canonicalKeys(names: readonly string[]): string[] {
  const plain = names.every((n) => PLAIN_NAME.test(n));
  return names.map(plain ? plainKey : canonicalKey);
}
