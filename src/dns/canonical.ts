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
