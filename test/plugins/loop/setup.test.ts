// loop's Corefile line, as CoreDNS's plugin/loop/setup_test.go reads it: no arguments, no
// options, once per block; the LoopConfig names the zone the probe goes to, and each rejected
// line its exact error (`line: reason`).
import { describe, it, expect } from 'vitest';
import { setupBlock, setupPlugin } from '../../helpers/setup.js';

const zoneOf = async (body: string, key?: string) => (await setupPlugin<{ zone: string; qname: string }>(body, 'loop', { key })).zone;
const errorsOf = async (body: string) => (await setupBlock(body)).errors;

describe('loop setup (CoreDNS setup_test.go)', () => {
  it.each<[string | undefined, string]>([
    [undefined, '.'],
    ['example.org', 'example.org.'],
    // CoreDNS probes the first zone of the server block.
    ['example.org example.net', 'example.org.'],
  ])('accepts loop in block %j, probing %j', async (key, zone) => {
    expect(await zoneOf('loop', key)).toBe(zone);
  });

  it('probes a random name below its zone', async () => {
    const p = await setupPlugin<{ zone: string; qname: string }>('loop', 'loop', { key: 'example.org' });
    expect(p.qname).toMatch(/^\d+\.\d+\.example\.org\.$/);
  });

  it.each<[string, string[]]>([
    ['loop argument', ['2: loop takes no arguments, got "argument"']],
    ['loop a b', ['2: loop takes no arguments, got "a b"']],
    ['loop {\n  option\n}', ['2: loop takes no option block']],
    // Arguments are checked before the block.
    ['loop a {\n  option\n}', ['2: loop takes no arguments, got "a"']],
  ])('rejects %j', async (body, want) => {
    expect(await errorsOf(body)).toEqual(want);
  });

  it('allows one loop per server block (ErrOnce)', async () => {
    expect((await errorsOf('loop\nloop')).join('\n')).toMatch(/^3: plugin "loop" appears twice in this server block \(first at line 2\)/);
  });
});
