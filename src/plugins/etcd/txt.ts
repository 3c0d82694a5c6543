// TXT data of a SkyDNS value as CoreDNS puts it on the wire: msg.split255 cuts the `text`
// string's UTF-8 octets into 255-octet strings, then miekg/dns packs each one reading
// presentation escapes (`\DDD` one octet, the decimal wrapping modulo 256 as Go's byte
// arithmetic does; `\X` the octet X; a backslash ending a string is dropped). So
// `{"text":"a\\255b"}` is the octets a 0xFF b, and `\\\\` in JSON is one backslash.
// `clusterdns sync` writes octets that are not printable UTF-8 in this form.

import { split255 } from '../../pkg/split255.js';

const BACKSLASH = 0x5c;

function isDigit(b: number | undefined): boolean {
  return b !== undefined && b >= 0x30 && b <= 0x39;
}

/** miekg/dns packTxtString's octets for one string (its length never grows past the input's). */
export function unescapeTxt(s: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(s.length);
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i] !== BACKSLASH) {
      out[n++] = s[i]!;
      continue;
    }
    i++;
    if (i === s.length) break;
    if (isDigit(s[i]) && isDigit(s[i + 1]) && isDigit(s[i + 2])) {
      out[n++] = ((s[i]! - 0x30) * 100 + (s[i + 1]! - 0x30) * 10 + (s[i + 2]! - 0x30)) & 0xff;
      i += 2;
    } else {
      out[n++] = s[i]!;
    }
  }
  return out.subarray(0, n);
}

/**
 * The character-strings of a TXT record for `text`: CoreDNS's split255 over the UTF-8 octets (a
 * text of exactly 255·k octets ends with an empty string, as there), each string unescaped.
 */
export function txtStrings(text: string): Buffer[] {
  return split255(Buffer.from(text, 'utf8')).map((s) => unescapeTxt(s));
}
