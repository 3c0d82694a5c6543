// Bounded waits: a test that needs something to happen polls for it with a deadline instead of
// sleeping a fixed time, so it goes on as soon as it can and fails (naming what) when it cannot.

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls `f` every `everyMs` until it returns a value other than undefined; throws after `timeoutMs`. */
export async function pollFor<T>(what: string, f: () => T | undefined | Promise<T | undefined>, timeoutMs = 5000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Polls `f` every `everyMs` until it holds; throws after `timeoutMs`. */
export async function waitUntil(what: string, f: () => boolean | Promise<boolean>, timeoutMs = 5000, everyMs = 25): Promise<void> {
  await pollFor(what, async () => ((await f()) ? true : undefined), timeoutMs, everyMs);
}
