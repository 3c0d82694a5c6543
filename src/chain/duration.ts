// Go's time.ParseDuration, which CoreDNS uses for every DURATION in a Corefile: a sequence of
// decimal numbers with units ("300ms", "1.5h", "2h45m"), or a bare "0".

const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, 'μs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds, or undefined when `text` is not a Go duration. Negative durations are allowed. */
export function parseGoDuration(text: string): number | undefined {
  let s = text;
  let sign = 1;
  if (s.startsWith('-') || s.startsWith('+')) {
    if (s[0] === '-') sign = -1;
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s === '') return undefined;
  let total = 0;
  const re = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/;
  while (s.length > 0) {
    const m = re.exec(s);
    if (!m) return undefined;
    total += Number(m[1]) * UNITS[m[2]!]!;
    s = s.slice(m[0].length);
  }
  return sign * total;
}
