// The SARIF checks themselves: they must catch what a consumer would refuse.
import { describe, expect, it } from 'vitest';
import { formatSarif } from '../../src/cli/findings-output.js';
import { validateSarif } from './sarif-shape.js';

const good = JSON.parse(
  formatSarif(
    [
      { file: 'a b/x.yaml', line: 3, column: 2, severity: 'error', code: 'yaml-syntax', message: 'bad' },
      { file: '../y.yaml', line: 0, severity: 'warning', code: 'manifest-warning', message: 'w' },
      { file: '(built-in default Corefile)', line: 0, severity: 'info', code: 'kind-unused', message: 'i' },
    ],
    '0.0.0',
  ),
) as { runs: { results: Record<string, unknown>[]; tool: { driver: Record<string, unknown> } }[] } & Record<string, unknown>;

describe('validateSarif', () => {
  it('accepts what formatSarif writes: encoded URIs, no region for a whole file, no location for a built-in file', () => {
    expect(validateSarif(good)).toEqual([]);
    expect(good.runs[0]!.results[0]).toMatchObject({
      locations: [{ physicalLocation: { artifactLocation: { uri: 'a%20b/x.yaml' }, region: { startLine: 3, startColumn: 2 } } }],
    });
    expect(good.runs[0]!.results[1]!['locations']).toEqual([{ physicalLocation: { artifactLocation: { uri: '../y.yaml' } } }]);
    expect(good.runs[0]!.results[2]!['locations']).toBeUndefined();
    expect(good.runs[0]!.results.map((r) => r['level'])).toEqual(['error', 'warning', 'note']);
  });

  it('finds what the schema requires', () => {
    const broken = structuredClone(good);
    broken['version'] = '2.0.0';
    delete broken.runs[0]!.tool.driver['name'];
    broken.runs[0]!.results[0]!['level'] = 'info';
    broken.runs[0]!.results[1]!['message'] = {};
    broken.runs[0]!.results[0]!['ruleIndex'] = 1;
    (broken.runs[0]!.results[0]!['locations'] as { physicalLocation: { region: { startLine: number } } }[])[0]!.physicalLocation.region.startLine = 0;
    expect(validateSarif(broken)).toEqual([
      '$.version: must be "2.1.0"',
      '$.runs[0].tool.driver.name: required string',
      '$.runs[0].results[0].level: not a SARIF level',
      '$.runs[0].results[0].ruleIndex: does not point at rule "yaml-syntax"',
      '$.runs[0].results[0].locations[0].physicalLocation.region.startLine: an integer >= 1 is required',
      '$.runs[0].results[1].message: message needs text or id',
    ]);
  });
});
