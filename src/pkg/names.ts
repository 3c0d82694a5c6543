// Name helpers. Inside clusterdns names are fully qualified with a trailing dot ('.' is the root),
// written in presentation form (escapes as miekg/dns prints them).

export function fqdn(name: string): string {
  if (name === '' || name === '.') return '.';
  return name.endsWith('.') ? name : name + '.';
}

/** True when `name` equals `zone` or lies below it. Both lowercased and fully qualified. */
export function isSubdomain(name: string, zone: string): boolean {
  if (zone === '.') return true;
  if (name.length < zone.length) return false;
  if (!name.endsWith(zone)) return false;
  return name.length === zone.length || name.charCodeAt(name.length - zone.length - 1) === 46;
}

/** The longest zone in `zones` that contains `name`, or undefined. */
export function matchZone(name: string, zones: readonly string[]): string | undefined {
  let best: string | undefined;
  for (const zone of zones) {
    if (isSubdomain(name, zone) && (best === undefined || zone.length > best.length)) best = zone;
  }
  return best;
}

/** Labels of a name left of `zone` ('a.b.zone.' -> ['a', 'b']); [] for the apex. */
export function labelsBelow(name: string, zone: string): string[] {
  if (name.length <= zone.length) return [];
  const rest = zone === '.' ? name.slice(0, -1) : name.slice(0, name.length - zone.length - 1);
  return rest === '' ? [] : rest.split('.');
}

/** True for names under in-addr.arpa. or ip6.arpa. (lowercased, fully qualified). */
export function isReverse(name: string): boolean {
  return isSubdomain(name, 'in-addr.arpa.') || isSubdomain(name, 'ip6.arpa.');
}

/**
 * Presentation form of one label (octets `start` to `end`): `.` and `\` escaped with a backslash,
 * bytes outside 0x21-0x7e as `\DDD`, as miekg/dns prints names (RFC 4343).
 */
export function escapeLabel(bytes: Uint8Array | readonly number[], start = 0, end = bytes.length): string {
  let plain = true;
  for (let i = start; i < end; i++) {
    const c = bytes[i]!;
    if (c <= 0x20 || c >= 0x7f || c === 0x2e || c === 0x5c) {
      plain = false;
      break;
    }
  }
  // The common case, a question name off the wire, without building a string per byte.
  if (plain && Buffer.isBuffer(bytes)) return bytes.toString('latin1', start, end);
  let out = '';
  for (let i = start; i < end; i++) {
    const c = bytes[i]!;
    if (c === 0x2e || c === 0x5c) out += '\\' + String.fromCharCode(c);
    else if (c <= 0x20 || c >= 0x7f) out += '\\' + String(c).padStart(3, '0');
    else out += String.fromCharCode(c);
  }
  return out;
}
