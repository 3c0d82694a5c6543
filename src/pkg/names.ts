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

/** Why presentation text is not a domain name (NameSyntaxError.problem). */
export type NameProblem = 'empty label' | 'lone backslash' | 'short escape' | 'escape over 255' | 'label too long' | 'name too long';

/** A presentation name that does not parse; each caller words `problem` its own way. */
export class NameSyntaxError extends Error {
  constructor(
    readonly problem: NameProblem,
    /** The digits of a bad `\DDD` escape as written ('' for the other problems). */
    readonly digits = '',
  ) {
    super(digits === '' ? problem : `${problem}: \\${digits}`);
  }
}

const utf8 = new TextEncoder();
/** Octets of the label being read; grown for the (unchecked) long labels a zone file may hold. */
let labelScratch = new Uint8Array(256);

function pushOctet(n: number, v: number): void {
  if (n === labelScratch.length) {
    const next = new Uint8Array(n * 2);
    next.set(labelScratch);
    labelScratch = next;
  }
  labelScratch[n] = v;
}

/**
 * The one parser of presentation-form names (the zone file reader and the encoder's slow path
 * both call it): labels as octets, split at unescaped dots, `\X` taken as X itself, `\DDD` as
 * one octet, any other non-ASCII character as its UTF-8 octets. `absolute` when the text ends in
 * an unescaped dot; '' and '.' are the root. With `limits`, a label over 63 octets or a name
 * over 255 is refused where it ends; without, the caller checks lengths (a zone file adds its
 * origin first). Problems are thrown as NameSyntaxError, the first from the left.
 */
export function presentationLabels(text: string, limits: boolean): { labels: Uint8Array[]; absolute: boolean } {
  const labels: Uint8Array[] = [];
  if (text === '' || text === '.') return { labels, absolute: true };
  let n = 0;
  let total = 1;
  const finish = (): void => {
    if (n === 0) throw new NameSyntaxError('empty label');
    if (limits) {
      if (n > 63) throw new NameSyntaxError('label too long');
      total += n + 1;
      if (total > 255) throw new NameSyntaxError('name too long');
    }
    labels.push(labelScratch.slice(0, n));
    n = 0;
  };
  const len = text.length;
  let i = 0;
  while (i < len) {
    const c = text.charCodeAt(i);
    if (c === 46) {
      finish();
      i++;
      if (i === len) return { labels, absolute: true };
      continue;
    }
    if (c === 92) {
      if (i + 1 >= len) throw new NameSyntaxError('lone backslash');
      const d0 = text.charCodeAt(i + 1) - 48;
      if (d0 >= 0 && d0 <= 9) {
        const d1 = text.charCodeAt(i + 2) - 48;
        const d2 = text.charCodeAt(i + 3) - 48;
        if (!(d1 >= 0 && d1 <= 9)) throw new NameSyntaxError('short escape', text.slice(i + 1, i + 2));
        if (!(d2 >= 0 && d2 <= 9)) throw new NameSyntaxError('short escape', text.slice(i + 1, i + 3));
        const v = d0 * 100 + d1 * 10 + d2;
        if (v > 255) throw new NameSyntaxError('escape over 255', text.slice(i + 1, i + 4));
        pushOctet(n++, v);
        i += 4;
        continue;
      }
      i++; // `\X` stands for X itself
    }
    const cp = text.codePointAt(i)!;
    const w = cp > 0xffff ? 2 : 1;
    if (cp < 0x80) pushOctet(n++, cp);
    else for (const b of utf8.encode(text.slice(i, i + w))) pushOctet(n++, b);
    i += w;
  }
  finish();
  return { labels, absolute: false };
}
