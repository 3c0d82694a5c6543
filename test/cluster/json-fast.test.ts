// JSON manifests take a fast path (JSON.parse plus one scan); it must place every object and
// every duplicate key on the same line as the YAML reader would, and fall back to that reader
// for text that is not JSON.
import { describe, expect, it } from 'vitest';
import type { Finding } from '../../src/cluster/model/finding.js';
import { parseManifestText } from '../../src/cluster/read/yaml-docs.js';
import { scanJson } from '../../src/cluster/read/json-scan.js';

const list = {
  apiVersion: 'v1',
  kind: 'List',
  items: [
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 'a "quoted" \\ name', namespace: 'x' }, spec: { ports: [{ port: 80 }], clusterIP: '10.96.0.20' } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x', labels: { items: '[not the list]' } } },
    { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 's', namespace: 'x' }, endpoints: [{ addresses: ['10.0.0.1'] }], ports: [] },
  ],
};

function objects(file: string, text: string): { lines: number[]; findings: Finding[]; objs: unknown[] } {
  const findings: Finding[] = [];
  const raw = [...parseManifestText(file, text, findings)];
  return { lines: raw.map((r) => r.line), findings, objs: raw.map((r) => r.obj) };
}

describe('JSON fast path', () => {
  for (const [label, text] of [
    ['pretty', JSON.stringify(list, null, 2)],
    ['one line', JSON.stringify(list)],
    ['four spaces, CRLF', JSON.stringify(list, null, 4).replaceAll('\n', '\r\n')],
  ] as const) {
    it(`places List items on the YAML reader's lines (${label})`, () => {
      const fast = objects('c.json', text);
      const slow = objects('c.yaml', text);
      expect(fast.lines).toEqual(slow.lines);
      expect(fast.objs).toEqual(slow.objs);
      expect(fast.findings).toEqual([]);
    });
  }

  it('finds field lines inside one item on demand', () => {
    const text = JSON.stringify(list, null, 2);
    const findings: Finding[] = [];
    const [svc] = parseManifestText('c.json', text, findings);
    const want = text.split('\n').findIndex((l) => l.includes('"clusterIP"')) + 1;
    expect(svc!.positions!.lineOf('spec.clusterIP')).toBe(want);
  });

  it('warns on duplicate keys, escaped ones too, with both lines', () => {
    const text = '{\n  "apiVersion": "v1",\n  "kind": "Service",\n  "metadata": {\n    "name": "a",\n    "n\\u0061me": "b"\n  },\n  "kind": "Service"\n}\n';
    const { findings, objs } = objects('d.json', text);
    expect(objs).toHaveLength(1);
    expect(findings.map((f) => [f.line, f.severity, f.message.split(' (')[0]])).toEqual([
      [6, 'warning', 'duplicate key "name"'],
      [8, 'warning', 'duplicate key "kind"'],
    ]);
    expect(findings[0]!.message).toContain('first at line 5');
  });

  it('hands text that is not JSON to the YAML reader, which names the line', () => {
    const { findings } = objects('bad.json', '{\n  "kind": "Service",\n  "metadata": {"name": "x",}\n');
    // The root's '{' is the one never closed.
    expect(findings[0]).toMatchObject({ severity: 'error', line: 1, column: 1, message: expect.stringMatching(/the \{ here is never closed/) });
  });

  it('scans scalar and nested items and ignores an `items` key below the root', () => {
    const s = scanJson('{"items":[1, "two", {"items":[3]}, [4], null],"kind":"List"}');
    expect(s.itemStarts).toHaveLength(5);
    expect(s.itemEnds).toHaveLength(5);
  });
});

describe('JSON fast path: broken items', () => {
  it('reports an item that is not JSON at its own line and keeps the others', () => {
    const text =
      '{\n  "apiVersion": "v1",\n  "kind": "List",\n  "items": [\n    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}},\n    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "b",}},\n    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "c"}}\n  ]\n}\n';
    const { objs, findings } = objects('l.json', text);
    expect(objs.map((o) => (o as { metadata: { name: string } }).metadata.name)).toEqual(['a', 'c']);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ file: 'l.json', line: 6, severity: 'error' });
  });

  it('hands a List whose wrapper is broken to the YAML reader', () => {
    const text = '{\n  "kind": "List",\n  "items": [\n    {"kind": "Namespace"}\n  ],,\n}\n';
    const { findings } = objects('w.json', text);
    expect(findings.some((f) => f.severity === 'error')).toBe(true);
  });
});
