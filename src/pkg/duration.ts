// Go's time.ParseDuration and Duration.String(), which CoreDNS uses for every DURATION in a
// Corefile and in its log lines. One parser for every plugin, so `.5s`, `+2s` and `1µs` mean the
// same everywhere.

const UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** The largest Go duration (int64 nanoseconds), in milliseconds; Go rejects anything longer. */
const MAX_MS = Number(2n ** 63n - 1n) / 1e6;

/**
 * Milliseconds, or undefined when `text` is not a Go duration: `[-+]?([0-9]*(\.[0-9]*)?unit)+`
 * or a bare `0`. Each number needs a unit and at least one digit; the unit runs to the next digit
 * or dot, so `1sm` is an unknown unit, as in Go. Negative durations are allowed (callers check).
 */
export function parseGoDuration(text: string): number | undefined {
  let s = text;
  let sign = 1;
  if (s.startsWith('-') || s.startsWith('+')) {
    if (s[0] === '-') sign = -1;
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s === '') return undefined;
  const re = /^(\d*)(?:\.(\d*))?([^\d.]*)/;
  let total = 0;
  while (s.length > 0) {
    const m = re.exec(s);
    if (!m) return undefined;
    const [whole, int = '', frac, unit = ''] = m;
    if (int === '' && (frac === undefined || frac === '')) return undefined;
    const scale = UNITS[unit];
    if (scale === undefined) return undefined;
    total += Number(`${int || '0'}.${frac || '0'}`) * scale;
    if (total > MAX_MS) return undefined;
    s = s.slice(whole.length);
  }
  return sign * total;
}

/** Milliseconds as Go's Duration.String(): '0s', '1µs', '1.5ms', '500ms', '1.5s', '5m0s', '1h0m0s'. */
export function goDurationString(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 0) return `-${goDurationString(-ms)}`;
  if (ms < 1e-3) return `${trim(ms * 1e6, 0)}ns`;
  if (ms < 1) return `${trim(ms * 1e3, 3)}µs`;
  if (ms < 1000) return `${trim(ms, 6)}ms`;
  let rest = ms / 1000;
  const h = Math.floor(rest / 3600);
  rest -= h * 3600;
  const m = Math.floor(rest / 60);
  rest -= m * 60;
  const s = `${trim(rest, 9)}s`;
  if (h > 0) return `${h}h${m}m${s}`;
  if (m > 0) return `${m}m${s}`;
  return s;
}

/** A number with at most `digits` decimals and no trailing zeros, as Go's fractional printing. */
function trim(n: number, digits: number): string {
  return String(Number(n.toFixed(digits)));
}
