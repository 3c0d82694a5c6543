// The character-strings of a TXT record hold at most 255 octets each (RFC 1035 3.3), so a long
// text goes out as several strings.

/**
 * Cuts `octets` into 255-octet strings as CoreDNS's msg.split255 does (and the plugins that copied
 * it): fewer than 255 octets stay one string, and a text of exactly 255·k octets ends with an
 * empty string, as there. The strings share memory with `octets`.
 */
export function split255(octets: Buffer): Buffer[] {
  if (octets.length < 255) return [octets];
  const out: Buffer[] = [];
  // Ends after at most length/255 + 1 strings: each pass moves p by 255.
  for (let p = 0; ; p += 255) {
    if (p + 255 > octets.length) {
      out.push(octets.subarray(p));
      return out;
    }
    out.push(octets.subarray(p, p + 255));
  }
}
