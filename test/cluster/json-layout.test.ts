// The same JSON List written pretty (`kubectl get -o json`), one item a line (generators) and on
// one line (`jq -c`) must give the same findings, each at the line (and, for a syntax error, the
// column) of what it names in that text. Lines are counted once per line break (json-scan.ts
// LineCounter), which on a one-line List must not look past the next break for every object.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildModel, loadManifests } from '../../src/cluster/load.js';
import type { Finding } from '../../src/cluster/model/finding.js';
import { fieldTree, jsonFieldLines, linesOf } from '../../src/cluster/read/json-scan.js';
import { prng } from '../helpers/prng.js';

const dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-json-layout-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** 1-based line of `off`: the line breaks before it, counted from the start. */
const lineAt = (text: string, off: number): number => text.slice(0, off).split('\n').length;
const columnAt = (text: string, off: number): number => off - text.lastIndexOf('\n', off - 1);

const svc = (name: string, spec: object) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'n' }, spec });
const items = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } },
  svc('a', { clusterIP: '10.96.0.10', type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }),
  svc('b', { clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'], ports: [{ port: 80 }] }),
  svc('c', { type: 'NodePort', ports: [{ port: 81, nodePort: 30080 }] }),
  svc('d', { ports: [{ port: 70000 }] }),
  svc('e', { clusterIP: 'not-an-ip', ports: [{ port: 53, protocol: 'UDP' }] }),
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'Bad_Name' } },
  svc('broken', { ports: [{ port: 80 }] }),
  svc('dup', { type: 'ClusterIP', ports: [{ port: 80 }] }),
];
const list = { apiVersion: 'v1', kind: 'List', items };
const layouts: [string, string][] = [
  ['pretty', `${JSON.stringify(list, null, 4)}\n`],
  ['one item a line', `{"apiVersion":"v1","kind":"List","items":[\n${items.map((i) => JSON.stringify(i)).join(',\n')}\n]}\n`],
  ['one line', `${JSON.stringify(list)}\n`],
];

/** The layout with its errors written in: an extra comma in one item, a key written twice in another. */
function withErrors(text: string): string {
  return text.replace(/("broken",)/, '$1,').replace(/("name": ?"dup",)/, '$1 "name": "dup",');
}

/** Where each finding must point in `text`, found by what it names; in the order findings sort. */
function expected(text: string): { line: number; column?: number; message: RegExp }[] {
  const find = (needle: string, from = 0): number => {
    const at = text.indexOf(needle, from);
    expect(at, needle).toBeGreaterThanOrEqual(0);
    return at;
  };
  const item = (name: string): number => {
    const at = text.search(new RegExp(`"name": ?"${name}"`));
    expect(at, name).toBeGreaterThanOrEqual(0);
    return at;
  };
  const extraComma = find(',,', item('broken')) + 1;
  const dupFirst = item('dup');
  const dupAgain = find('"name"', dupFirst + 1);
  const place = (at: number) => ({ line: lineAt(text, at) });
  return [
    { ...place(find('"clusterIPs"', item('b'))), message: /^Service "n\/b": cluster IP 10\.96\.0\.10 is already used by Service "n\/a"/ },
    { ...place(find('"nodePort"', item('c'))), message: /^Service "n\/c": spec\.ports\[0\]\.nodePort 30080: is already allocated/ },
    { ...place(find('"port"', item('d'))), message: /^Service "n\/d": spec\.ports\[0\]\.port 70000 is not a valid port/ },
    { ...place(find('"clusterIP"', item('e'))), message: /^Service "n\/e": spec\.clusterIP "not-an-ip" is not a valid IP/ },
    { ...place(item('Bad_Name')), message: /^Namespace "Bad_Name": name "Bad_Name" is not a valid DNS-1123 label/ },
    {
      ...place(extraComma),
      column: columnAt(text, extraComma),
      message: new RegExp(`^YAML syntax error at line ${lineAt(text, extraComma)}, column ${columnAt(text, extraComma)}: Unexpected , in flow map`),
    },
    { ...place(dupAgain), message: new RegExp(`^duplicate key "name" \\(first at line ${lineAt(text, dupFirst)}\\)`) },
  ];
}

function findingsOf(run: () => unknown): Finding[] {
  try {
    return (run() as { findings: Finding[] }).findings;
  } catch (e) {
    return (e as { findings: Finding[] }).findings;
  }
}

/** A finding as the layout-free part of it: what it says, with its lines and columns left out. */
const gist = (f: Finding): string => `${f.severity} ${f.message.replace(/line \d+(, column \d+)?|[^ (]+\.json:\d+/g, '#')}`;

describe('one JSON List in three layouts', () => {
  const read = layouts.map(([label, text]) => {
    const t = withErrors(text);
    return { label, text: t, findings: findingsOf(() => buildModel([{ file: 'l.json', text: t }])) };
  });

  for (const { label, text, findings } of read) {
    it(`places every finding on what it names (${label})`, () => {
      const want = expected(text);
      const got = [...findings].sort((a, b) => want.findIndex((w) => w.message.test(a.message)) - want.findIndex((w) => w.message.test(b.message)));
      expect(got.map((f) => ({ line: f.line, column: f.column, message: f.message }))).toEqual(
        want.map((w) => ({ line: w.line, column: w.column, message: expect.stringMatching(w.message) })),
      );
    });
  }

  it('names the same objects with the same findings in every layout', () => {
    const [pretty, ...others] = read.map((r) => r.findings.map(gist).sort());
    expect(pretty).toHaveLength(7);
    for (const o of others) expect(o).toEqual(pretty);
  });

  it('reads the same findings at the same lines from the file, its items read again, as from memory', () => {
    for (const { label, text, findings } of read) {
      const file = path.join(dir, `${label.replaceAll(' ', '-')}.json`);
      writeFileSync(file, text);
      const disk = findingsOf(() => loadManifests([file], undefined, { every: 0, onObjects: () => {}, onTextGone: () => {} }));
      const strip = (f: Finding) => ({ line: f.line, severity: f.severity, gist: gist(f) });
      expect(disk.map(strip), label).toEqual(findings.map(strip));
    }
  });
});

describe('broken items', () => {
  it('are each placed at their own line and column, in every layout', () => {
    const names = Array.from({ length: 12 }, (_, i) => `s${i}`);
    const many = { apiVersion: 'v1', kind: 'List', items: names.map((n) => svc(n, { ports: [{ port: 80 }] })) };
    for (const text0 of [
      JSON.stringify(many),
      JSON.stringify(many, null, 2),
      `{"kind":"List","apiVersion":"v1","items":[\n${many.items.map((i) => JSON.stringify(i)).join(',\n')}]}`,
    ]) {
      // Every third item gets an extra comma after its name.
      const text = text0.replace(/("name": ?"s(\d+)",)/g, (m, _, i) => (Number(i) % 3 === 0 ? `${m},` : m));
      const commas = [...text.matchAll(/,,/g)].map((m) => m.index + 1);
      const got = findingsOf(() => buildModel([{ file: 'l.json', text }])).filter((f) => f.message.startsWith('YAML syntax error'));
      expect(got.map((f) => [f.line, f.column])).toEqual(commas.map((at) => [lineAt(text, at), columnAt(text, at)]));
    }
  });
});

describe('line counting', () => {
  it('gives the line of every offset, and of fields, as counting from the start does', () => {
    const rnd = prng(2207);
    for (let t = 0; t < 300; t++) {
      // Lines of every length, from none to long runs without a break, breaks at either end.
      const parts = Array.from({ length: 1 + Math.floor(rnd() * 6) }, () => 'x'.repeat(Math.floor(rnd() * (rnd() < 0.3 ? 2000 : 5))));
      const text = parts.join('\n');
      const offsets = Array.from({ length: Math.floor(rnd() * 20) }, () => Math.floor(rnd() * (text.length + 1))).sort((a, b) => a - b);
      expect(linesOf(text, offsets)).toEqual(offsets.map((o) => lineAt(text, o)));
    }
  });

  it('places the fields of an object written on a few long lines', () => {
    const obj = {
      metadata: { name: 'x', labels: { a: 'b'.repeat(3000) } },
      spec: { clusterIP: '10.96.0.1', ports: [{ port: 80, nodePort: 30000 }, { port: 81 }] },
    };
    const tree = fieldTree(['spec.clusterIP', 'spec.ports[].nodePort', 'metadata.name']);
    for (const text of [
      JSON.stringify(obj),
      JSON.stringify(obj).replace('"spec"', '\n"spec"'),
      `\n${JSON.stringify(obj)}`,
      JSON.stringify(obj).replaceAll(',', ',\n'),
    ]) {
      const at = (needle: string, from = 0): number => lineAt(text, text.indexOf(needle, from)) + 6;
      const got = jsonFieldLines(text, 0, text.length, 7, tree)!;
      expect(Object.fromEntries(got)).toEqual({
        metadata: at('"metadata"'),
        'metadata.name': at('"name"'),
        spec: at('"spec"'),
        'spec.clusterIP': at('"clusterIP"'),
        'spec.ports': at('"ports"'),
        'spec.ports[0]': at('{"port":80'),
        'spec.ports[0].nodePort': at('"nodePort"'),
        'spec.ports[1]': at('{"port":81'),
      });
    }
  });
});
