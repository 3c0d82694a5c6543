// CoreDNS plugin/loadbalance/setup_test.go, ported: the LoadbalanceConfig of each accepted line
// and the exact error (`line: reason`) of each rejected one. The weighted policy and the `prefer`
// block are not implemented here and are refused with that reason.
import { describe, it, expect } from 'vitest';
import { setupBlock, setupPlugin } from '../../helpers/setup.js';
import type { LoadbalanceConfig } from '../../../src/plugins/loadbalance/config.js';

const cfgOf = async (body: string) => (await setupPlugin<{ cfg: LoadbalanceConfig }>(body, 'loadbalance')).cfg;
const errorsOf = async (body: string) => (await setupBlock(body)).errors;
const NO_POLICY = (p: string): string => `loadbalance: policy "${p}" is not supported: the only policy is round_robin (weighted is not)`;
const ARITY = (n: number): string => `loadbalance: wrong number of arguments: ${n} given, at most 1 expected; usage \`loadbalance [round_robin]\``;

describe('loadbalance setup (CoreDNS setup_test.go)', () => {
  it.each(['loadbalance', 'loadbalance round_robin'])('accepts %j', async (body) => {
    expect(await cfgOf(body)).toEqual({ policy: 'round_robin' });
  });

  it.each<[string, string[]]>([
    ['loadbalance fleeb', [`2: ${NO_POLICY('fleeb')}`]],
    ['loadbalance round_robin a', [`2: ${ARITY(2)}`]],
    ['loadbalance weighted', [`2: ${NO_POLICY('weighted')}`]],
    ['loadbalance weighted a b', [`2: ${ARITY(3)}`]],
    ['loadbalance {\n  prefer 10.0.0.0/8\n}', ['2: loadbalance: the option block (prefer CIDR...) is not supported']],
    // The policy is checked before the block.
    ['loadbalance weighted {\n  prefer 10.0.0.0/8\n}', [`2: ${NO_POLICY('weighted')}`]],
  ])('rejects %j', async (body, want) => {
    expect(await errorsOf(body)).toEqual(want);
  });
});

describe('several loadbalance or autopath lines, as CoreDNS reads them', () => {
  it('accepts them (the last wins) and checks each', async () => {
    expect(await cfgOf('loadbalance\nloadbalance round_robin')).toEqual({ policy: 'round_robin' });
    expect(await errorsOf('loadbalance\nloadbalance fleeb')).toEqual([`3: ${NO_POLICY('fleeb')}`]);
    const r = await setupBlock('autopath @kubernetes\nautopath example.org @kubernetes');
    expect(r.errors).toEqual([]);
    expect((r.plugins.find((p) => p.name === 'autopath') as unknown as { zones: string[] }).zones).toEqual(['example.org.']);
  });
});
