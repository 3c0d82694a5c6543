// Once an object is read its file's text goes (Positions.settle): a Service keeps the lines of
// the fields findings raised after reading name (cluster IPs, node ports), found then by a scan
// of its JSON text or from a copy of its own text, and they must be the lines the `yaml`
// package's index gives on demand, on any writing of the JSON (duplicate keys, `<<` keys, nested
// values, any spacing and line breaks) and in YAML.
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { prng } from '../helpers/prng.js';
import { buildModel, LATER_SERVICE_FIELDS } from '../../src/cluster/load.js';
import type { Finding } from '../../src/cluster/model/finding.js';
import { parseManifestText } from '../../src/cluster/read/yaml-docs.js';
import type { RawObject } from '../../src/cluster/read/positions.js';

/** Paths findings after reading ask for, their ancestors, and some they never ask for. */
const PATHS = ['spec', 'spec.clusterIP', 'spec.clusterIPs', 'spec.ports', 'metadata', 'metadata.name', 'spec.type'];
for (let k = 0; k < 5; k++) PATHS.push(`spec.ports[${k}]`, `spec.ports[${k}].nodePort`, `spec.ports[${k}].port`);
/** What allocate.ts and nodeports.ts ask once the objects are read: these fields and their ancestors. */
const asked = PATHS.filter((p) => /^spec(\.clusterIPs?|\.ports(\[\d+\](\.nodePort)?)?)?$/.test(p));

function read(file: string, text: string): RawObject[] {
  const findings: Finding[] = [];
  return [...parseManifestText(file, text, findings)];
}

/**
 * What findings after reading get: the line of every asked path, and of the cluster IP field
 * allocate.ts names (Checker.written: spec.clusterIPs when written, else spec.clusterIP).
 */
function answers(raw: readonly RawObject[]): unknown[] {
  return raw.map((r) => {
    const pos = r.positions;
    const written = pos?.has('spec.clusterIPs') ? 'spec.clusterIPs' : 'spec.clusterIP';
    return [...asked.map((p) => [p, pos?.lineOf(p)]), pos?.lineOf(written)];
  });
}

/** The same, each object settled first (read one at a time, as the loader does). */
function settledAnswers(file: string, text: string): unknown[] {
  const out: RawObject[] = [];
  for (const r of parseManifestText(file, text, [])) {
    r.positions?.settle(LATER_SERVICE_FIELDS);
    out.push(r);
  }
  return answers(out);
}

/** A random Service-like value: ports with and without node ports, clusterIP(s) or not. */
function randomService(rand: () => number, i: number): Record<string, unknown> {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const ports = Array.from({ length: Math.floor(rand() * 4) }, (_, k) => ({
    name: `p${k}`,
    port: 80 + k,
    ...(rand() < 0.5 ? { nodePort: 30000 + k } : {}),
    ...(rand() < 0.3 ? { extra: { nested: [1, { nodePort: 1 }] } } : {}),
  }));
  const spec: Record<string, unknown> = { type: pick(['ClusterIP', 'NodePort']) };
  if (rand() < 0.6) spec['clusterIP'] = `10.96.0.${i % 250}`;
  if (rand() < 0.4) spec['clusterIPs'] = [`10.96.0.${i % 250}`];
  if (rand() < 0.8) spec['ports'] = rand() < 0.1 ? null : ports;
  if (rand() < 0.2) spec['selector'] = { app: 'x', 'a.b/c': 'spec.ports' };
  return { apiVersion: 'v1', kind: 'Service', metadata: { name: `s${i}`, namespace: 'n', labels: { spec: 'ports' } }, ...(rand() < 0.9 ? { spec } : {}) };
}

/** JSON text with random spacing: each break and indent kept, dropped or doubled. */
function respace(text: string, rand: () => number): string {
  return text.replace(/\n */g, (m) => (rand() < 0.3 ? '' : rand() < 0.2 ? `\n\n${m.slice(1)} ` : m)).replace(/": /g, () => (rand() < 0.2 ? '" :  ' : '": '));
}

describe('Positions.settle', () => {
  it('keeps the lines of the asked-for fields of JSON Services, as the package places them', () => {
    const rand = prng(7);
    for (let round = 0; round < 40; round++) {
      const items = Array.from({ length: 6 }, (_, i) => randomService(rand, i));
      let text = respace(JSON.stringify({ apiVersion: 'v1', kind: 'List', items }, null, 1 + Math.floor(rand() * 4)), rand);
      // Duplicate keys (the last writing's line wins, both values are looked into) and `<<` keys
      // (neither recorded nor looked into).
      if (round % 3 === 0) text = text.replace('"spec":', '"spec": {"clusterIPs": ["10.96.1.1"], "ports": [{"nodePort": 30111}]},\n"spec":');
      if (round % 4 === 0) text = text.replace('"spec":', '"<<": {"spec": {"clusterIP": "10.96.1.2"}},\n"spec":');
      if (round % 5 === 0) text = text.replace('"ports":', '"ports": [],\n "ports":');
      JSON.parse(text);
      expect(settledAnswers('l.json', text), text).toEqual(answers(read('l.json', text)));
    }
  });

  it('keeps them for texts the scan leaves to the package (escaped keys, CRLF, tabs), one-line items and YAML', () => {
    const rand = prng(11);
    const items = Array.from({ length: 5 }, (_, i) => randomService(rand, i));
    const list = { apiVersion: 'v1', kind: 'List', items };
    const pretty = JSON.stringify(list, null, 2);
    for (const [file, text] of [
      ['escaped.json', pretty.replace('"clusterIP"', '"cluster\\u0049P"')],
      ['crlf.json', pretty.replaceAll('\n', '\r\n')],
      ['tabs.json', JSON.stringify(list, null, '\t')],
      ['one.json', JSON.stringify(items[1], null, 2)],
      ['compact.json', JSON.stringify(list)],
      ['one-per-line.json', JSON.stringify(list).replaceAll('},{"apiVersion"', '},\n{"apiVersion"')],
      ['list.yaml', stringify(list)],
      ['docs.yaml', items.map((i) => stringify(i)).join('---\n')],
    ] as const) {
      expect(settledAnswers(file, text), file).toEqual(answers(read(file, text)));
    }
  });

  it('leaves other objects their own line only', () => {
    const [r] = read('n.json', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } }, null, 2));
    r!.positions!.settle();
    expect([r!.positions!.has('metadata.name'), r!.positions!.lineOf('metadata.name')]).toEqual([false, r!.line]);
  });

  it('places findings raised after reading on the fields of a multi-line JSON List', () => {
    const svc = (name: string, spec: object) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'n' }, spec });
    const items = [
      svc('a', { clusterIP: '10.96.0.10', type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] }),
      svc('b', { clusterIP: '10.96.0.10', clusterIPs: ['10.96.0.10'], ports: [{ port: 80 }] }),
      svc('c', { type: 'NodePort', ports: [{ port: 81, nodePort: 30080 }] }),
    ];
    const text = JSON.stringify({ apiVersion: 'v1', kind: 'List', items }, null, 2);
    const lines = text.split('\n');
    const lineOf = (needle: string, from = 0): number => lines.findIndex((l, i) => i >= from && l.includes(needle)) + 1;
    const findings = buildModel([{ file: 'l.json', text }]).findings.filter((f) => f.severity === 'error');
    expect(findings.map((f) => [f.line, f.message.split(':')[0]])).toEqual([
      [lineOf('"clusterIPs"'), 'Service "n/b"'],
      [lineOf('"nodePort"', lineOf('"c"')), 'Service "n/c"'],
    ]);
  });
});
