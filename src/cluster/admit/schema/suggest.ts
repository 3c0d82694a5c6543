// "Did you mean": the nearest name by letter case or by a few edits, and the version Kubernetes
// prefers among several of one kind.
import { editDistance as sharedEditDistance } from '../../../pkg/spelling.js';

/**
 * Edit distance counting a swap of two neighbours as one edit, or `max + 1` as soon as it must
 * exceed `max`; names longer than 256 characters are no likely typo of a kind or a field, and a
 * distance over them would cost their length times each candidate's.
 */
export function editDistance(a: string, b: string, max: number): number {
  if (a.length > 256 || b.length > 256) return max + 1;
  return sharedEditDistance(a, b, max, true);
}

/** Edits a name of this length may be off by and still be a likely typo of another. */
const allowedEdits = (len: number): number => (len >= 5 ? 2 : len >= 3 ? 1 : 0);

/**
 * The candidate `name` most likely meant: equal ignoring case first, else the fewest edits
 * (at most 2, fewer for short names); ties go to the first candidate.
 */
export function nearestName(name: string, candidates: Iterable<string>): string | undefined {
  const lower = name.toLowerCase();
  const max = allowedEdits(name.length);
  let best: string | undefined;
  let bestD = max + 1;
  for (const c of candidates) {
    if (c.toLowerCase() === lower) return c;
    if (bestD <= 0) continue;
    const d = editDistance(lower, c.toLowerCase(), max);
    if (d < bestD) {
      best = c;
      bestD = d;
    }
  }
  return bestD <= max ? best : undefined;
}

const VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;

/**
 * Orders versions as Kubernetes prefers them (apimachinery's CompareKubeAwareVersionStrings): GA
 * before beta before alpha, higher numbers first, anything else last by name. Negative when `a`
 * is preferred.
 */
export function compareVersions(a: string, b: string): number {
  const ma = VERSION.exec(a);
  const mb = VERSION.exec(b);
  if (!ma || !mb) return ma ? -1 : mb ? 1 : a < b ? -1 : a > b ? 1 : 0;
  const rank = (m: RegExpExecArray): number => (m[2] === undefined ? 2 : m[2] === 'beta' ? 1 : 0);
  if (rank(ma) !== rank(mb)) return rank(mb) - rank(ma);
  if (ma[1] !== mb[1]) return Number(mb[1]) - Number(ma[1]);
  return Number(mb[3] ?? 0) - Number(ma[3] ?? 0);
}
