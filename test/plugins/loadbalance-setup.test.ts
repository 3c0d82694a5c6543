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

describe('loop setup (CoreDNS setup_test.go)', () => {
  it('accepts loop and rejects an argument', async () => {
    expect((await setupBlock('loop')).errors).toEqual([]);
    expect((await setupBlock('loop argument')).errors).toEqual(['2: loop takes no arguments']);
  });
});
