// Plain block YAML takes a fast reader (yaml-fast.ts); for every text it accepts, it must give
// what the `yaml` package gives (values, document offsets, root and List item lines) and the
// package must find no problem in it; everything else goes to the package. Checked on a table
// of edge cases and on seeded random documents mixing the subset with what lies outside it.
import { describe, expect, it } from 'vitest';
import { Composer, isMap, isScalar, isSeq, LineCounter, Parser } from 'yaml';
import type { Finding } from '../../src/cluster/model.js';
import { readSimpleYaml } from '../../src/cluster/yaml-fast.js';
import { parseManifestText } from '../../src/cluster/yaml-docs.js';

interface Doc {
  value: unknown;
  start: number;
  end: number;
  startLine: number;
  rootLine: number;
  itemLines?: number[];
}

/** The package's reading, as the loader configures it; undefined when it reports any problem. */
function packageDocs(text: string): Doc[] | undefined {
  const lc = new LineCounter();
  const composer = new Composer({ version: '1.2', schema: 'core', merge: true, uniqueKeys: true, keepSourceTokens: false });
  const out: Doc[] = [];
  for (const d of composer.compose(new Parser(lc.addNewLine).parse(text), false, text.length)) {
    if (d.errors.length > 0 || d.warnings.length > 0) return undefined;
    const root = d.contents;
    if (root === null || (isScalar(root) && root.value === null && !root.tag)) continue;
    let itemLines: number[] | undefined;
    if (isMap(root)) {
      const items = root.items.find((p) => isScalar(p.key) && p.key.value === 'items')?.value;
      if (isSeq(items)) itemLines = items.items.map((n) => lc.linePos((n as { range: readonly number[] }).range[0]!).line);
    }
    const line = (off: number): number => lc.linePos(off).line;
    const value = d.toJS({ maxAliasCount: 100 }) as unknown;
    out.push({ value, start: d.range[0], end: d.range[2], startLine: line(d.range[0]), rootLine: line(root.range![0]), ...(itemLines ? { itemLines } : {}) });
  }
  return out;
}

/** Whether the fast reader, when it accepts `text`, agrees with the package; returns whether it accepted. */
function agrees(text: string): boolean {
  const fast = readSimpleYaml(text);
  if (!fast) return false;
  const slow = packageDocs(text);
  expect(slow, text).toBeDefined();
  expect(fast.length, text).toBe(slow!.length);
  fast.forEach((f, i) => {
    const s = slow![i]!;
    expect(f.value, text).toStrictEqual(s.value);
    expect([f.start, f.startLine, f.rootLine], text).toEqual([s.start, s.startLine, s.rootLine]);
    if (f.itemLines) expect(f.itemLines, text).toEqual(s.itemLines);
    // The end may take in trailing blank and comment lines: the document's field lines are the same.
    expect(f.end, text).toBeGreaterThanOrEqual(s.end);
    expect(text.slice(s.end, f.end), text).toMatch(/^(?:[ ]*(?:#[^\n]*)?\n?)*$/);
  });
  return true;
}

describe('fast YAML reader', () => {
  const accepted = [
    'a: 1\nb:\n  c: x\n',
    '# head\n\na: 1\n---\nb: 2\n\n# tail\n---\n# only a comment\n',
    '---\nkind: List\nitems:\n- kind: Service\n  metadata:\n    name: a\n-   kind: Pod\n    x: []\n- null\n- ~\n',
    'ports:\n- name: http\n  port: 80\n  targetPort: web\nselector:\n    app: x\n',
    'a: "q: #x"\nb: \'it\'\'s\'\nc: ""\nd: \'\'\ne: {}\nf: []\n',
    'n: -0\nm: +5\no: 007\np: 123456789012345\nt: True\nf: FALSE\nz: ~\nw: NULL\ns: yes\nv: 1.2.3\n',
    'image: nginx:1.27\nurl: http://x/#frag\nneg: -x\ndash: ---\nsp: a  b   \nk: a, b ]\n',
    'constructor: 1\ntoString: x\nhasOwnProperty: y\n',
    'a: 1\n---\n',
  ];
  for (const text of accepted) {
    it(`reads ${JSON.stringify(text.slice(0, 40))} as the package does`, () => {
      expect(agrees(text)).toBe(true);
    });
  }

  const refused = [
    'a: 1\na: 2\n', // duplicate key: the package reports it
    'a: &x 1\nb: *x\n',
    'a: !!str 1\n',
    'a: |\n  text\n',
    'a: {b: 1}\n',
    'a: 1.5\n',
    'a: 0x1F\n',
    'a: 1e3\n',
    'a: .inf\n',
    'a: 1234567890123456\n',
    'a: b # comment\n',
    'a: b: c\n',
    'a: b:\n',
    'a:b\n',
    'a:\n  multi\n  line\n',
    'a:\n\tb: 1\n',
    'a: 1\r\nb: 2\r\n',
    '\ufeffa: 1\n',
    'a: é\n',
    '- a\n- b\n',
    '  a: 1\n',
    'a:\n   b: 1\n  c: 2\n',
    'a:\n-\n  b: 1\n',
    '"a": 1\n',
    'true: 1\n',
    '1: x\n',
    '<<: {}\n',
    '__proto__: x\n',
    '--- a: 1\n',
    'a: 1\n...\n',
    '%YAML 1.2\n---\na: 1\n',
    'a: "x\\"y"\n',
    "a: 'x' y'\n",
    'a: - x\n',
    'a:\n  - - x\n',
  ];
  for (const text of refused) {
    it(`leaves ${JSON.stringify(text.slice(0, 40))} to the package`, () => {
      expect(readSimpleYaml(text)).toBeUndefined();
    });
  }

  it('gives the loader the same objects, lines and field lines as the package', () => {
    const text = 'apiVersion: v1\nkind: ServiceList\nitems:\n- metadata:\n    name: a\n  spec:\n    ports:\n    - port: 80\n';
    const fast = [...parseManifestText('a.yaml', text, [])];
    // A trailing comment keeps the file out of the subset, so the package reads it.
    const slowFindings: Finding[] = [];
    const slow = [...parseManifestText('a.yaml', `${text}# x\nz: y #`, slowFindings)];
    expect(fast.map((o) => [o.line, o.obj, o.listKind, o.listApiVersion])).toEqual(slow.map((o) => [o.line, o.obj, o.listKind, o.listApiVersion]));
    expect(fast[0]!.positions!.lineOf('spec.ports[0].port')).toBe(8);
    expect(slow[0]!.positions!.lineOf('spec.ports[0].port')).toBe(8);
  });

  it('agrees with the package on seeded random documents', () => {
    let seed = 12345;
    const rnd = (): number => {
      // mulberry32
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const pick = <T>(a: readonly T[]): T => a[Math.floor(rnd() * a.length)]!;
    const plainKeys = ['a', 'b', 'name', 'port', 'kind', 'items', 'x.y/z', 'k-1', 'K_2'];
    const oddKeys = ['true', 'null', '1', '__proto__', 'on', '<<', '"q"', '0x1F', '1e3', 'Null', 'a b', 'a:b', '-a', '.x', 'constructor'];
    const plainValues = ['v', '1', 'hello', 'x:y', '-3', '', 'true', '"q"', "'s'", '{}', '[]', 'a b', 'List'];
    const oddValues = [
      '~', 'Null', 'TRUE', 'yes', '007', '-0', '+5', '1.5', '0x1F', '0o7', '.inf', '-', '-x', '- x', 'a: b', 'a #b', 'a#b', 'x:', ':x',
      '"a: b"', "'it''s'", "'a'b'", '"a\\"b"', '{a: 1}', '[1]', '&a x', '*a', '!t x', '|', '>', '@x', '%x', '`x', '---', '...',
      '12345678901234567', '123456789012345', '1e5', 'a ]', '?x', '"x" #c', "'''", 'a\tb', 'é', '.5', '5.', '-1', '--', 'a :b',
    ];
    const key = (): string => (rnd() < 0.98 ? pick(plainKeys) + (rnd() < 0.7 ? String(Math.floor(rnd() * 1000)) : '') : pick(oddKeys));
    const value = (odd: number): string => (rnd() < odd ? pick(oddValues) : pick(plainValues));
    const block = (ind: number, depth: number, lines: string[], odd: number): void => {
      const seq = depth > 0 && rnd() < 0.3;
      for (let i = 1 + Math.floor(rnd() * 4); i > 0; i--) {
        const sp = ' '.repeat(Math.max(0, ind + (rnd() < 0.005 ? pick([-1, 1, 2]) : 0)));
        if (rnd() < 0.08) lines.push(pick(['', '# c', '  # c', '   ', `${sp}#x`]));
        if (!seq) {
          if (depth < 4 && rnd() < 0.35) {
            lines.push(`${sp}${key()}:${pick(['', ' '])}`);
            block(ind + pick([0, 2, 2, 4]), depth + 1, lines, odd);
          } else lines.push(`${sp}${key()}:${pick([' ', ' ', '  ', ''])}${value(odd)}${pick(['', '', ' '])}`);
        } else if (depth < 4 && rnd() < 0.5) {
          const dash = pick(['- ', '-  ']);
          if (rnd() < 0.5) lines.push(`${sp}${dash}${key()}: ${value(odd)}`);
          else {
            lines.push(`${sp}${dash}${key()}:`);
            block(ind + dash.length + pick([0, 2, 2]), depth + 1, lines, odd);
          }
          if (rnd() < 0.6) lines.push(`${' '.repeat(ind + dash.length)}${key()}: ${value(odd)}`);
        } else lines.push(`${sp}- ${value(odd)}`);
      }
    };
    let read = 0;
    for (let t = 0; t < 3000; t++) {
      const lines: string[] = [];
      for (let d = 1 + Math.floor(rnd() * 3); d > 0; d--) {
        if (d > 0 && (lines.length > 0 || rnd() < 0.3)) lines.push(rnd() < 0.95 ? '---' : pick(['--- ', '...', '--- a: 1']));
        if (rnd() < 0.2) lines.push('kind: List');
        block(0, 0, lines, t % 2 === 0 ? 0.01 : 0.1);
      }
      if (agrees(lines.join('\n') + pick(['\n', '', '\n\n']))) read++;
    }
    expect(read).toBeGreaterThan(300); // the subset is exercised, not only the fallback
  });
});
