// A YAML (or JSON List item) syntax error is reported at its line and column in the file, and an
// unclosed quote or bracket where it opens, not where the reader ran out of text.
import { describe, expect, it } from 'vitest';
import { parseManifestText } from '../../src/cluster/read/yaml-docs.js';
import type { Finding } from '../../src/cluster/model/finding.js';

function syntaxErrors(file: string, text: string): Pick<Finding, 'line' | 'column' | 'message'>[] {
  const findings: Finding[] = [];
  [...parseManifestText(file, text, findings)];
  return findings.filter((f) => f.severity === 'error').map(({ line, column, message }) => ({ line, column, message }));
}

describe('YAML syntax error places', () => {
  const svc = 'apiVersion: v1\nkind: Service\n';
  it.each([
    [
      'an unclosed double quote, at the quote',
      `${svc}metadata:\n  name: "web\n  namespace: x\n`,
      4,
      9,
      /Missing closing "quote \(the quoted value that starts here is never closed\)/,
    ],
    ["an unclosed single quote, at the quote (a '' inside is no quote)", `${svc}metadata:\n  name: 'it''s\n`, 4, 9, /Missing closing 'quote/],
    ['an escaped quote is not the opening one', 'a: b\nc: "x \\" y\n', 2, 4, /Missing closing "quote/],
    [
      'an unclosed flow sequence, at the [',
      `${svc}metadata: {name: web}\nspec:\n  ports: [{port: 80}\n`,
      5,
      10,
      /Flow sequence .*end with a \] \(the \[ here is never closed\)/,
    ],
    ['a tab as indentation', `${svc}metadata:\n  name: web\n\tnamespace: x\n`, 5, 1, /Tabs are not allowed as indentation/],
    ['in a later document', `${svc}metadata: {name: a}\n---\n${svc}metadata:\n  name: x: y\n`, 8, 9, /Nested mappings/],
  ])('%s', (_what, text, line, column, reason) => {
    const [e, ...rest] = syntaxErrors('m.yaml', text);
    expect(rest).toEqual([]);
    expect(e).toEqual({ line, column, message: expect.stringMatching(new RegExp(`^YAML syntax error at line ${line}, column ${column}: ${reason.source}`)) });
  });

  it('places an error in a JSON List item at its line and column in the file', () => {
    const item = '{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a"}}';
    const bad = '{"apiVersion": "v1", "kind": "Service" "metadata": {"name": "b"}}';
    const text = `{"apiVersion": "v1", "kind": "List", "items": [\n  ${item},   ${bad}\n]}\n`;
    const col = text.split('\n')[1]!.indexOf('"metadata": {"name": "b"}') + 1;
    expect(syntaxErrors('list.json', text)).toEqual([
      { line: 2, column: col, message: expect.stringMatching(new RegExp(`^YAML syntax error at line 2, column ${col}: `)) },
    ]);
    // On a later line of the item, the column is the line's own.
    const multi = `{"apiVersion": "v1", "kind": "List", "items": [\n  ${item},\n    {"apiVersion": "v1",\n  "kind": "Service" "metadata": {"name": "b"}}\n]}\n`;
    expect(syntaxErrors('list.json', multi)).toEqual([{ line: 4, column: 21, message: expect.stringMatching(/^YAML syntax error at line 4, column 21: /) }]);
  });
});
