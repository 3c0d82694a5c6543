// CoreDNS plugin/loadbalance/setup_test.go and plugin/loop/setup_test.go, ported. The weighted
// policy and the `prefer` block are not implemented here and are refused with that reason.
import { describe, it, expect } from 'vitest';
import { setupBlock } from '../helpers/setup.js';

describe('loadbalance setup (CoreDNS setup_test.go)', () => {
  it.each(['loadbalance', 'loadbalance round_robin'])('accepts %j', async (body) => {
    expect((await setupBlock(body)).errors).toEqual([]);
  });

  it.each([
    ['loadbalance fleeb', /the only policy is round_robin/],
    ['loadbalance round_robin a', /the only policy is round_robin/],
    ['loadbalance weighted', /weighted is not supported/],
    ['loadbalance weighted a b', /weighted is not supported/],
    ['loadbalance {\n  prefer 10.0.0.0/8\n}', /prefer CIDR.*not supported/],
  ])('rejects %j', async (body, reason) => {
    expect((await setupBlock(body)).errors.join('\n')).toMatch(reason);
  });
});

describe('several loadbalance or autopath lines, as CoreDNS reads them', () => {
  it('accepts them (the last wins) and checks each', async () => {
    expect((await setupBlock('loadbalance\nloadbalance round_robin')).errors).toEqual([]);
    expect((await setupBlock('loadbalance\nloadbalance fleeb')).errors.join('\n')).toMatch(/the only policy is round_robin/);
    const r = await setupBlock('autopath @kubernetes\nautopath example.org @kubernetes');
    expect(r.errors).toEqual([]);
    expect((r.plugins.find((p) => p.name === 'autopath') as unknown as { zones: string[] }).zones).toEqual(['example.org.']);
  });
});

describe('loop setup (CoreDNS setup_test.go)', () => {
  it('accepts loop once, rejects an argument and a second loop (ErrOnce)', async () => {
    expect((await setupBlock('loop\nloop')).errors.join('\n')).toMatch(/appears twice/);
    expect((await setupBlock('loop')).errors).toEqual([]);
    expect((await setupBlock('loop argument')).errors).toEqual(['2: loop takes no arguments']);
  });
});
