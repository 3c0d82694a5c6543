// The one label selector evaluator, and the three readers that build its LabelSelector: a
// workload's metav1.LabelSelector from a manifest, the kubernetes plugin's `labels` string and
// k8s_gateway's `serviceLabelSelectors` string. The same selector written each way must select
// the same labels.
import { describe, expect, it } from 'vitest';
import { type LabelSelector, type Labels, matchesSelector, type SelectorRequirement } from '../../src/cluster/model/selector.js';
import { readLabelSelector } from '../../src/cluster/admit/selector.js';
import { Checker } from '../../src/cluster/admit/validate.js';
import type { Finding } from '../../src/cluster/model/finding.js';
import { parseSelector } from '../../src/plugins/kubernetes/selector.js';
import { parseLabelSelector } from '../../src/plugins/k8s_gateway/selector.js';

const sel = (matchLabels: Labels, ...matchExpressions: SelectorRequirement[]): LabelSelector => ({ matchLabels, matchExpressions });
const req = (key: string, operator: SelectorRequirement['operator'], ...values: string[]): SelectorRequirement => ({ key, operator, values });

describe('matchesSelector', () => {
  it.each<[string, LabelSelector, Labels, boolean]>([
    ['empty selects everything', sel({}), {}, true],
    ['empty selects labelled too', sel({}), { app: 'web' }, true],
    ['matchLabels equal', sel({ app: 'web' }), { app: 'web', tier: 'x' }, true],
    ['matchLabels other value', sel({ app: 'web' }), { app: 'api' }, false],
    ['matchLabels missing key', sel({ app: 'web' }), {}, false],
    ['matchLabels empty value needs the key', sel({ app: '' }), {}, false],
    ['matchLabels empty value', sel({ app: '' }), { app: '' }, true],
    ['In listed', sel({}, req('env', 'In', 'prod', 'stage')), { env: 'stage' }, true],
    ['In other', sel({}, req('env', 'In', 'prod')), { env: 'dev' }, false],
    ['In missing key', sel({}, req('env', 'In', 'prod')), {}, false],
    ['In no values', sel({}, req('env', 'In')), { env: '' }, false],
    ['NotIn listed', sel({}, req('env', 'NotIn', 'prod')), { env: 'prod' }, false],
    ['NotIn other', sel({}, req('env', 'NotIn', 'prod')), { env: 'dev' }, true],
    ['NotIn missing key', sel({}, req('env', 'NotIn', 'prod')), {}, true],
    ['Exists', sel({}, req('canary', 'Exists')), { canary: '' }, true],
    ['Exists missing', sel({}, req('canary', 'Exists')), {}, false],
    ['DoesNotExist', sel({}, req('canary', 'DoesNotExist')), {}, true],
    ['DoesNotExist present', sel({}, req('canary', 'DoesNotExist')), { canary: 'no' }, false],
    ['Gt above', sel({}, req('replicas', 'Gt', '2')), { replicas: '3' }, true],
    ['Gt equal', sel({}, req('replicas', 'Gt', '2')), { replicas: '2' }, false],
    ['Gt not a number', sel({}, req('replicas', 'Gt', '2')), { replicas: 'three' }, false],
    ['Gt missing', sel({}, req('replicas', 'Gt', '2')), {}, false],
    ['Gt beyond 2^53', sel({}, req('n', 'Gt', '9007199254740992')), { n: '9007199254740993' }, true],
    ['Lt below', sel({}, req('replicas', 'Lt', '2')), { replicas: '-1' }, true],
    ['Lt equal', sel({}, req('replicas', 'Lt', '2')), { replicas: '2' }, false],
    ['a key on the prototype is not a label', sel({}, req('constructor', 'Exists')), {}, false],
    ['every part must hold', sel({ app: 'web' }, req('env', 'In', 'prod'), req('canary', 'DoesNotExist')), { app: 'web', env: 'prod', canary: '1' }, false],
    ['every part holds', sel({ app: 'web' }, req('env', 'In', 'prod'), req('canary', 'DoesNotExist')), { app: 'web', env: 'prod' }, true],
  ])('%s', (_name, selector, labels, want) => {
    expect(matchesSelector(selector, labels)).toBe(want);
  });
});

/** A metav1.LabelSelector as a manifest writes it, read as admission reads it. */
function fromManifest(value: unknown): LabelSelector {
  const findings: Finding[] = [];
  const check = new Checker(findings, { file: 'test.yaml', line: 1 }, 'Deployment "default/web"');
  const s = readLabelSelector({ selector: value }, 'selector', 'spec.selector', check, true);
  expect(findings).toEqual([]);
  return s!;
}

describe('the readers build the same selector', () => {
  const labelSets: Labels[] = [
    {},
    { app: 'web' },
    { app: 'web', env: 'prod' },
    { app: 'web', env: 'dev' },
    { app: 'api', env: 'prod', canary: 'x' },
    { env: 'prod', canary: '' },
  ];
  it.each<[string, unknown, string]>([
    ['equality', { matchLabels: { app: 'web' } }, 'app=web'],
    [
      'set and absence',
      {
        matchExpressions: [
          { key: 'env', operator: 'In', values: ['prod', 'stage'] },
          { key: 'canary', operator: 'DoesNotExist' },
        ],
      },
      'env in (prod,stage),!canary',
    ],
    [
      'inequality and existence',
      {
        matchExpressions: [
          { key: 'env', operator: 'NotIn', values: ['dev'] },
          { key: 'app', operator: 'Exists' },
        ],
      },
      'env notin (dev),app',
    ],
  ])('%s', (_name, manifest, text) => {
    const a = fromManifest(manifest);
    const b = parseSelector(text);
    const c = parseLabelSelector(text).selector;
    for (const labels of labelSets) {
      const want = matchesSelector(a, labels);
      expect([matchesSelector(b, labels), matchesSelector(c, labels)], JSON.stringify(labels)).toEqual([want, want]);
    }
  });
});
