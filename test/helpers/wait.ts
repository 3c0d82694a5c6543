// Bounded waits: a test that needs something to happen polls for it with a deadline instead of
// sleeping a fixed time, so it goes on as soon as it can and fails (naming what) when it cannot.
// Every wait in test/ goes through here, so each one says what it waits for: polls (`pollFor`,
// `waitUntil`, `retryFor`, `waitForLines`, `holdsWithin`), a bound on a promise (`settleWithin`),
// a measurement across a window (`sampleFor`), and the few fixed waits that are the point of
// their test (`quietFor`) or pace a load (`pace`).

/** What is awaited, for the timeout message; a function is called only then (e.g. to add the server's last log lines). */
export type What = string | (() => string);

const say = (what: What): string => (typeof what === 'function' ? what() : what);

/** A bare timer. Tests use the named waits below; this stays for the helpers built on it. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * A fixed wait that is itself the test: a window in which something must not happen (no reply,
 * no second reload), or a period the server measures in another process that the test must let
 * pass. `what` names it, so a reader sees why this one is not a poll.
 */
export function quietFor(ms: number, what: string): Promise<void> {
  void what;
  return sleep(ms);
}

/**
 * A short pause inside a bounded load loop (a sender giving the receiver room, a slow writer's
 * rhythm): it paces the load and waits for nothing.
 */
export function pace(ms: number): Promise<void> {
  return sleep(ms);
}

/** Polls `f` every `everyMs` until it returns a value other than undefined; throws after `timeoutMs`. */
export async function pollFor<T>(what: What, f: () => T | undefined | Promise<T | undefined>, timeoutMs = 5000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${say(what)}`);
    await sleep(everyMs);
  }
}

/** Polls `f` every `everyMs` until it holds; throws after `timeoutMs`. */
export async function waitUntil(what: What, f: () => boolean | Promise<boolean>, timeoutMs = 5000, everyMs = 25): Promise<void> {
  await pollFor(what, async () => ((await f()) ? true : undefined), timeoutMs, everyMs);
}

/**
 * As `pollFor`, where `f` failing (a refused connection, a server not up yet, an expectation not
 * met yet) means "not yet": after `timeoutMs` the last failure is thrown, under `what`.
 */
export async function retryFor<T>(what: What, f: () => T | Promise<T>, timeoutMs = 5000, everyMs = 25): Promise<T> {
  let last: unknown;
  try {
    return await pollFor(
      what,
      async () => {
        try {
          return { v: await f() };
        } catch (err) {
          last = err;
          return undefined;
        }
      },
      timeoutMs,
      everyMs,
    ).then((r) => r.v);
  } catch (timeout) {
    if (last === undefined) throw timeout;
    throw new Error(`${(timeout as Error).message}; last failure: ${last instanceof Error ? last.message : String(last)}`, { cause: last });
  }
}

/**
 * Waits until `count` entries of `lines` (a log a running server appends to) from index `from` on
 * satisfy `match`; returns them. `match` is a substring, a pattern or a predicate.
 */
export async function waitForLines<L>(
  lines: readonly L[],
  match: string | RegExp | ((line: L) => boolean),
  what: What,
  opts: { count?: number; from?: number; timeoutMs?: number; everyMs?: number } = {},
): Promise<L[]> {
  const { count = 1, from = 0, timeoutMs = 5000, everyMs = 25 } = opts;
  const test = typeof match === 'function' ? match : (l: L) => (typeof match === 'string' ? String(l).includes(match) : match.test(String(l)));
  return pollFor(
    what,
    () => {
      const hits = lines.slice(from).filter(test);
      return hits.length >= count ? hits : undefined;
    },
    timeoutMs,
    everyMs,
  );
}

/**
 * Polls `f` until it holds or `timeoutMs` passes, and says which, for a test that checks the
 * outcome itself (with its own message) or counts what a bounded wait did not get.
 */
export async function holdsWithin(f: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 25): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await f()) return true;
    if (Date.now() > deadline) return false;
    await sleep(everyMs);
  }
}

/** `p`'s value, or 'timeout' when it has not settled within `ms` (a process exit, a close). */
export async function settleWithin<T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Calls `f` every `everyMs` for `ms`: a measurement taken across a window (peak memory under a load). */
export async function sampleFor(ms: number, everyMs: number, f: () => void | Promise<void>): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    await f();
    await sleep(everyMs);
  }
}
