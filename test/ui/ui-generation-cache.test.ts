// The ui's per-generation cache: one run per generation shared by its callers, runs one at a time,
// generations passed during a run skipped (their callers get the newer value), failures retried.
import { describe, expect, it } from 'vitest';
import { generationCache } from '../../src/ui/generation-cache.js';

/** A make() whose runs the test finishes by hand, recording which generations ran. */
function manual(): { make(g: number): Promise<string>; runs: number[]; finish(i: number, fail?: boolean): Promise<void> } {
  const runs: number[] = [];
  const ends: { resolve(v: string): void; reject(e: Error): void }[] = [];
  return {
    runs,
    make: (g) =>
      new Promise<string>((resolve, reject) => {
        runs.push(g);
        ends.push({ resolve, reject });
      }),
    finish: async (i, fail = false) => {
      if (fail) ends[i]!.reject(new Error(`run ${i} failed`));
      else ends[i]!.resolve(`value of ${runs[i]}`);
      // Let the cache see the end and start the next run.
      await new Promise((r) => setTimeout(r, 0));
    },
  };
}

describe('generationCache', () => {
  it('makes a generation once for all its callers', async () => {
    let generation = 1;
    const m = manual();
    const get = generationCache(() => generation, m.make);
    const a = get();
    const b = get();
    expect(m.runs).toEqual([1]);
    await m.finish(0);
    expect(await a).toBe('value of 1');
    expect(await b).toBe('value of 1');
    expect(await get()).toBe('value of 1');
    expect(m.runs).toEqual([1]);
    generation = 2;
    const c = get();
    expect(m.runs).toEqual([1, 2]);
    await m.finish(1);
    expect(await c).toBe('value of 2');
  });

  it('runs one at a time and skips the generations that pass meanwhile', async () => {
    let generation = 1;
    const m = manual();
    const get = generationCache(() => generation, m.make);
    const one = get();
    generation = 2;
    const two = get();
    generation = 3;
    const three = get();
    generation = 4;
    const four = get();
    // Generation 1 still runs: nothing else started.
    expect(m.runs).toEqual([1]);
    await m.finish(0);
    expect(await one).toBe('value of 1');
    // One run for the newest; the callers of 2 and 3 get its value.
    expect(m.runs).toEqual([1, 4]);
    await m.finish(1);
    expect(await Promise.all([two, three, four])).toEqual(['value of 4', 'value of 4', 'value of 4']);
  });

  it('keeps no failure: the callers see it, the next call runs again', async () => {
    const m = manual();
    const get = generationCache(() => 7, m.make);
    const failed = get();
    await m.finish(0, true);
    await expect(failed).rejects.toThrow('run 0 failed');
    const again = get();
    expect(m.runs).toEqual([7, 7]);
    await m.finish(1);
    expect(await again).toBe('value of 7');
  });

  it('turns a make() that throws into a rejection, and goes on', async () => {
    let n = 0;
    const get = generationCache(
      () => 1,
      (g) => {
        if (n++ === 0) throw new Error('thrown');
        return Promise.resolve(`ok ${g}`);
      },
    );
    await expect(get()).rejects.toThrow('thrown');
    expect(await get()).toBe('ok 1');
  });
});
