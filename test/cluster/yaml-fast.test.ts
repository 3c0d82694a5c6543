// Plain block YAML takes a fast reader (yaml-fast.ts); for every document it accepts, it must give
// what the `yaml` package gives (values, document offsets, root and List item lines) and the
// package must find no problem in it; every other document goes to the package alone, which must
// read it as in the whole file. Checked on a table of edge cases and on seeded random files mixing
// the subset with what lies outside it, down to the loader's objects, field lines and findings.
import { describe, expect, it } from 'vitest';
import { prng } from '../helpers/prng.js';
import { Composer, isMap, isScalar, isSeq, LineCounter, Parser } from 'yaml';
import type { Finding } from '../../src/cluster/model/finding.js';
import { readSimpleYaml } from '../../src/cluster/read/yaml-fast.js';
import { parseManifestText, parseWithPackage } from '../../src/cluster/read/yaml-docs.js';
import type { RawObject } from '../../src/cluster/read/positions.js';

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

/**
 * Everything the package makes of `text` (read from offset `at`, line `line` of a file), in the
 * file's offsets and lines: each document's range, value or why there is none, problems.
 */
function packageAll(text: string, at = 0, line = 1): unknown[] {
  const lc = new LineCounter();
  const composer = new Composer({ version: '1.2', schema: 'core', merge: true, uniqueKeys: true, keepSourceTokens: false });
  const out: unknown[] = [];
  const where = (off: number): string => `${off + at}@${lc.linePos(off).line + line - 1}:${lc.linePos(off).col}`;
  const problem = (e: { pos: [number, number]; code: string; message: string }): string =>
    `${where(e.pos[0])} ${e.code} ${e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`;
  for (const d of composer.compose(new Parser(lc.addNewLine).parse(text), false, text.length)) {
    const root = d.contents;
    const empty = root === null || (isScalar(root) && root.value === null && !root.tag);
    if (empty && d.errors.length + d.warnings.length === 0) continue; // nothing the loader reads
    let value: unknown;
    try {
      value = d.toJS({ maxAliasCount: 100 });
    } catch (e) {
      value = `throws ${(e as Error).message}`;
    }
    const at = root?.range ? where(root.range[0]) : undefined;
    out.push({ range: d.range.map(where), root: at, value, errors: d.errors.map(problem), warnings: d.warnings.map(problem) });
  }
  return out;
}

/**
 * Whether the fast reader, when it takes `text`, agrees with the package: each segment it leaves
 * reads alone as in the whole file, each document it reads as the package reads it. Returns how
 * many documents it read.
 */
function agrees(text: string): number {
  const parts = readSimpleYaml(text);
  if (!parts) return 0;
  // Where a document the package reads has a syntax error or the package misses a line break, the
  // loader reads the whole file with it (loadsAsPackage checks that): an unclosed quote may close
  // after the next '---' there, and lines after a missed break are one off.
  const whole = parts.some(({ fast, segment: { start, end } }) => {
    if (fast) return false;
    const lc = new LineCounter();
    const composer = new Composer({ version: '1.2', schema: 'core', merge: true, uniqueKeys: true, keepSourceTokens: false });
    const docs = [...composer.compose(new Parser(lc.addNewLine).parse(text.slice(start, end)))];
    return docs.some((d) => d.errors.length > 0) || lc.lineStarts.length !== text.slice(start, end).split('\n').length;
  });
  if (!whole)
    expect(
      parts.flatMap((p) => packageAll(text.slice(p.segment.start, p.segment.end), p.segment.start, p.segment.line)),
      text,
    ).toEqual(packageAll(text));
  let read = 0;
  for (const f of parts) {
    if (!f.fast) continue;
    read++;
    const { start, end, line } = f.segment;
    const slow = packageDocs(text.slice(start, end));
    expect(slow, text).toBeDefined();
    expect(slow!.length, text).toBe(1);
    const s = slow![0]!;
    for (const k of ['start', 'end'] as const) s[k] += start;
    for (const k of ['startLine', 'rootLine'] as const) s[k] += line - 1;
    s.itemLines = s.itemLines?.map((n) => n + line - 1);
    // Not toStrictEqual: it compares `constructor` properties, which a `constructor:` key is.
    expect(f.value, text).toEqual(s.value);
    expect(JSON.stringify(f.value), text).toBe(JSON.stringify(s.value));
    expect([f.start, f.startLine, f.rootLine], text).toEqual([s.start, s.startLine, s.rootLine]);
    if (f.itemLines) expect(f.itemLines, text).toEqual(s.itemLines);
    // The end may take in trailing blank and comment lines: the document's field lines are the same.
    expect(f.end, text).toBeGreaterThanOrEqual(s.end);
    expect(text.slice(s.end, f.end), text).toMatch(/^(?:[ ]*(?:#[^\n]*)?\n?)*$/);
  }
  return read;
}

/** Every field path of a value, as Positions names them. */
function paths(v: unknown, prefix = '', out: string[] = []): string[] {
  const add = (p: string, e: unknown): void => {
    out.push(p);
    paths(e, p, out);
  };
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) add(`${prefix}[${i}]`, v[i]);
  } else if (typeof v === 'object' && v !== null) for (const [k, e] of Object.entries(v)) add(prefix === '' ? k : `${prefix}.${k}`, e);
  return out;
}

/** The loader's reading of `text` as plain data: objects, their field lines, findings. */
function loaded(read: (findings: Finding[]) => Iterable<RawObject>): unknown {
  const findings: Finding[] = [];
  const objects = [...read(findings)].map((o) => ({
    line: o.line,
    obj: o.obj,
    listKind: o.listKind,
    listApiVersion: o.listApiVersion,
    fields: paths(o.obj).map((p) => `${p}@${o.positions?.lineOf(p)}`),
  }));
  return { objects, findings };
}

/** parseManifestText (fast documents and the package per document) gives what the package gives for the whole file. */
function loadsAsPackage(text: string): void {
  expect(
    loaded((f) => parseManifestText('a.yaml', text, f)),
    text,
  ).toEqual(loaded((f) => parseWithPackage('a.yaml', text, f)));
}

describe('fast YAML reader', () => {
  const accepted = [
    'a: |\n  text\n',
    '"a": 1\n\'b\'\'c\': 2\n"": x\n\'k:{"a":1}\': y\n',
    // Block scalars: blank lines (with fewer spaces than the content) inside and after them,
    // trailing spaces kept, a comment-like line as content, chomping at the end of a document
    // and of the file (with and without its final line break).
    'a: |\n  x\n\n   y  \n  \n  # not a comment\nb: |-\n    z\n\n\nc: 1\n',
    'a: |\n  x\n\n---\nb: |-\n  y\n\n',
    'a: |\n  x',
    'a: |-\n  x',
    'a: |\n  x\n  ',
    'a: |\n  x\n# trailing\n  # comment\n',
    'a:\n- |\n x\n  y\n-  |-\n   z\n- b: |\n    w\n  c: |-\n    v\n',
    'metadata:\n  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: |\n      {"a":{"b":[1,"c: d"]}}\n  name: x\n',
    // managedFields as the API server writes them.
    'fieldsV1:\n  f:metadata:\n    f:labels:\n      .: {}\n      f:app: {}\n  f:spec:\n    f:ports:\n      .: {}\n      k:{"port":80,"protocol":"TCP"}:\n        .: {}\n        f:port: {}\n    f:finalizers:\n      v:"kubernetes": {}\n',
    'a::  1\nb:c: 2\nx#y: 3\nk{[]}: 4\n',
    'kind: List\nitems:\n  - a: 1\n  -   b: 2\n  - x\n',
    'a: 1\nb:\n  c: x\n',
    '# head\n\na: 1\n---\nb: 2\n\n# tail\n---\n# only a comment\n',
    '---\nkind: List\nitems:\n- kind: Service\n  metadata:\n    name: a\n-   kind: Pod\n    x: []\n- null\n- ~\n',
    'ports:\n- name: http\n  port: 80\n  targetPort: web\nselector:\n    app: x\n',
    "a: \"q: #x\"\nb: 'it''s'\nc: \"\"\nd: ''\ne: {}\nf: []\n",
    'n: -0\nm: +5\no: 007\np: 123456789012345\nt: True\nf: FALSE\nz: ~\nw: NULL\ns: yes\nv: 1.2.3\n',
    'image: nginx:1.27\nurl: http://x/#frag\nneg: -x\ndash: ---\nsp: a  b   \nk: a, b ]\n',
    'constructor: 1\ntoString: x\nhasOwnProperty: y\n',
    'a: 1\n---\n',
  ];
  for (const text of accepted) {
    it(`reads ${JSON.stringify(text.slice(0, 40))} as the package does`, () => {
      expect(agrees(text)).toBe(readSimpleYaml(text)!.length);
      loadsAsPackage(text);
    });
  }

  const refused = [
    'a: 1\na: 2\n', // duplicate key: the package reports it
    'a: &x 1\nb: *x\n',
    'a: !!str 1\n',
    'a: |+\n  text\n',
    'a: |2\n  text\n',
    'a: >\n  text\n',
    'a: >-\n  text\n',
    'a: | # c\n  text\n',
    'a: |\n\n  text\n',
    'a: |\n  text\n    \n',
    'a: |\nb: 1\n',
    'a:\n  b: |\n  c\n',
    'a: |\n    x\n  y\n',
    'a: |\n  x\n# c\n  y\n',
    '- |\n  x\n',
    'a b: 1\n',
    '? a\n: b\n',
    'a : 1\n',
    '"a"b: 1\n',
    '"a\\"b": 1\n',
    '-a: 1\n',
    '.5: x\n',
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
      expect(readSimpleYaml(text)?.filter((d) => d.fast) ?? []).toEqual([]);
      agrees(text);
      loadsAsPackage(text);
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

  it('reads the documents in the subset and leaves each other one to the package alone', () => {
    const text = 'a: 1\n---\nb: &x 1\nc: *x\n---\n# c\nd: |\n  x\n---\ne: é\n';
    expect(readSimpleYaml(text)!.map((d) => d.fast)).toEqual([true, false, true, false]);
    expect(agrees(text)).toBe(2);
    loadsAsPackage(text);
    // A broken document is reported (where its flow sequence opens, never closed), the others
    // still load.
    const broken = 'a: 1\n---\nb: [1,\n---\nc: 2\n';
    const findings: Finding[] = [];
    expect([...parseManifestText('a.yaml', broken, findings)].map((o) => [o.line, o.obj])).toEqual([
      [1, { a: 1 }],
      [5, { c: 2 }],
    ]);
    expect(findings.map((f) => [f.line, f.column])).toEqual([[3, 4]]);
    loadsAsPackage(broken);
  });

  it('leaves the whole file to the package where a document read alone would read otherwise', () => {
    // Alone, the unclosed quote is an error; in the file, the package closes it after '---'.
    loadsAsPackage("a: '''\n---\nb: 'x'\n");
    for (const text of ['a: 1\n...\n---\nb: 2\n', '%YAML 1.2\n---\na: 1\n', 'a: 1\n--- b\n', 'a: 1\r\n', 'a: 1\n---\nb: \u2028\n']) {
      expect(readSimpleYaml(text), text).toBeUndefined();
      loadsAsPackage(text);
    }
  });

  it('agrees with the package on seeded random documents', () => {
    const rnd = prng(12345);
    const pick = <T>(a: readonly T[]): T => a[Math.floor(rnd() * a.length)]!;
    const plainKeys = [
      'a',
      'b',
      'name',
      'port',
      'kind',
      'items',
      'x.y/z',
      'k-1',
      'K_2',
      'f:app',
      '.',
      'k:{"port":80,"protocol":"TCP"}',
      'v:"x"',
      '"q k"',
      "'s''k'",
      'a::',
    ];
    const oddKeys = ['true', 'null', '1', '__proto__', 'on', '<<', '"q"', '0x1F', '1e3', 'Null', 'a b', 'a:b', '-a', '.x', 'constructor'];
    const plainValues = ['v', '1', 'hello', 'x:y', '-3', '', 'true', '"q"', "'s'", '{}', '[]', 'a b', 'List'];
    const oddValues = [
      '~',
      'Null',
      'TRUE',
      'yes',
      '007',
      '-0',
      '+5',
      '1.5',
      '0x1F',
      '0o7',
      '.inf',
      '-',
      '-x',
      '- x',
      'a: b',
      'a #b',
      'a#b',
      'x:',
      ':x',
      '"a: b"',
      "'it''s'",
      "'a'b'",
      '"a\\"b"',
      '{a: 1}',
      '[1]',
      '&a x',
      '*a',
      '!t x',
      '|',
      '>',
      '@x',
      '%x',
      '`x',
      '---',
      '...',
      '12345678901234567',
      '123456789012345',
      '1e5',
      'a ]',
      '?x',
      '"x" #c',
      "'''",
      'a\tb',
      'é',
      '.5',
      '5.',
      '-1',
      '--',
      'a :b',
    ];
    const key = (): string => (rnd() < 0.98 ? pick(plainKeys) + (rnd() < 0.7 ? String(Math.floor(rnd() * 1000)) : '') : pick(oddKeys));
    const value = (odd: number): string => (rnd() < odd ? pick(oddValues) : pick(plainValues));
    // A block scalar's header; its lines, deeper than column `parent`, go onto `lines`.
    const literal = (parent: number, lines: string[], odd: number): string => {
      const n = parent + pick([1, 2, 2, 4]);
      const at = (k: number): string => ' '.repeat(Math.max(0, k));
      if (rnd() < odd) lines.push(pick(['', at(n + 1)]));
      for (let k = 1 + Math.floor(rnd() * 3); k > 0; k--) {
        const r = rnd();
        if (r < 0.15) lines.push(pick(['', at(n - 1), at(n)]));
        else if (r < 0.2) lines.push(`${at(n)}# c`);
        else if (r < 0.25) lines.push(`${at(n + 2)}deeper`);
        else if (r < 0.3) lines.push(`${at(n)}trail  `);
        else if (rnd() < odd) lines.push(pick([at(n + 3), `${at(n - 1)}less`, `${at(n)}\tx`, `${at(n)}é`, '# out', `${at(n)}x`]));
        else lines.push(`${at(n)}${pick(['{"a":1}', 'text', 'k: v', '- x', '---x', "'q'"])}`);
      }
      if (rnd() < 0.3) lines.push(pick(['', '  ', '# after']));
      return rnd() < odd ? pick(['|+', '>', '|2', '>-', '| #c', '|1-']) : pick(['|', '|-', '|  ']);
    };
    // The header goes on the line before its content: built after it, then put in place.
    const withLiteral = (head: string, parent: number, lines: string[], odd: number): void => {
      const body: string[] = [];
      const header = literal(parent, body, odd);
      lines.push(`${head}${header}`, ...body);
    };
    const block = (ind: number, depth: number, lines: string[], odd: number): void => {
      const seq = depth > 0 && rnd() < 0.3;
      for (let i = 1 + Math.floor(rnd() * 4); i > 0; i--) {
        const sp = ' '.repeat(Math.max(0, ind + (rnd() < 0.005 ? pick([-1, 1, 2]) : 0)));
        if (rnd() < 0.08) lines.push(pick(['', '# c', '  # c', '   ', `${sp}#x`]));
        if (!seq) {
          if (depth < 4 && rnd() < 0.35) {
            lines.push(`${sp}${key()}:${pick(['', ' '])}`);
            block(ind + pick([0, 2, 2, 4]), depth + 1, lines, odd);
          } else if (rnd() < 0.12) withLiteral(`${sp}${key()}: `, sp.length, lines, odd);
          else lines.push(`${sp}${key()}:${pick([' ', ' ', '  ', ''])}${value(odd)}${pick(['', '', ' '])}`);
        } else if (depth < 4 && rnd() < 0.5) {
          const dash = pick(['- ', '-  ']);
          if (rnd() < 0.1) withLiteral(`${sp}${dash}${key()}: `, ind + dash.length, lines, odd);
          else if (rnd() < 0.5) lines.push(`${sp}${dash}${key()}: ${value(odd)}`);
          else {
            lines.push(`${sp}${dash}${key()}:`);
            block(ind + dash.length + pick([0, 2, 2]), depth + 1, lines, odd);
          }
          if (rnd() < 0.6) lines.push(`${' '.repeat(ind + dash.length)}${key()}: ${value(odd)}`);
        } else if (rnd() < 0.1) withLiteral(`${sp}- `, sp.length, lines, odd);
        else lines.push(`${sp}- ${value(odd)}`);
      }
    };
    let read = 0;
    let mixed = 0;
    for (let t = 0; t < 3000; t++) {
      const lines: string[] = [];
      for (let d = 1 + Math.floor(rnd() * 3); d > 0; d--) {
        if (d > 0 && (lines.length > 0 || rnd() < 0.3)) lines.push(rnd() < 0.95 ? '---' : pick(['--- ', '...', '--- a: 1']));
        if (rnd() < 0.2) lines.push('kind: List');
        block(0, 0, lines, t % 2 === 0 ? 0.01 : 0.1);
      }
      const text = lines.join('\n') + pick(['\n', '', '\n\n']);
      const n = agrees(text);
      if (n > 0) read++;
      if (n > 0 && readSimpleYaml(text)!.some((d) => !d.fast)) mixed++;
      loadsAsPackage(text);
    }
    expect(read).toBeGreaterThan(300); // the subset is exercised, not only the fallback
    expect(mixed).toBeGreaterThan(100); // and files where some documents are read here, others by the package
  });
});
