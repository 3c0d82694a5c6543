// An ASCII JSON List read from disk by a reader that collects its heap when a text goes
// (yaml-docs.ts readManifestObjects with onTextGone) is scanned, its text let go, and its items
// read again from the file when the loader reaches them: the objects, lines and findings must be
// those of reading the text in memory, and a file that changes meanwhile is read again whole, or
// reported when it changes while its items are read.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildModel, loadManifests } from '../../src/cluster/load.js';
import type { Finding } from '../../src/cluster/model/finding.js';
import { parseManifestText, readManifestObjects } from '../../src/cluster/read/yaml-docs.js';
import type { RawObject } from '../../src/cluster/read/positions.js';

const dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-reread-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const svc = (name: string, spec: object) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'n' }, spec });
const slice = (name: string, ips: string[]) => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name, namespace: 'n', labels: { 'kubernetes.io/service-name': name.split('-')[0] } },
  addressType: 'IPv4',
  ports: [{ port: 80 }],
  endpoints: ips.map((ip, i) => ({
    addresses: [ip],
    conditions: { ready: i % 2 === 0 },
    nodeName: 'kind-worker',
    targetRef: { kind: 'Pod', name: `${name}-${i}` },
  })),
});

/** A List of `n` Services and slices, pretty-printed, with a duplicate key, a broken item and a null one. */
function listText(n: number, big = ''): string {
  const items: unknown[] = [];
  for (let i = 0; i < n; i++) {
    items.push(svc(`s${i}`, { clusterIP: `10.96.0.${i % 200}`, ports: [{ port: 80 }] }), slice(`s${i}-a`, [`10.1.${i % 200}.1`, `10.1.${i % 200}.2`]));
  }
  items.push(null, svc('big', { ports: [{ port: 80, name: big }] }));
  const text = JSON.stringify({ apiVersion: 'v1', kind: 'List', items }, null, 2);
  return text.replace('"spec": {', '"spec": {"type": "ClusterIP", "type": "ClusterIP",').replace('"name": "s3"', '"name": "s3" "x"');
}

function read(file: string, text: string): { objs: unknown[]; lines: number[]; findings: Finding[] } {
  const findings: Finding[] = [];
  const raw: RawObject[] = [...parseManifestText(file, text, findings)];
  return { objs: raw.map((r) => r.obj), lines: raw.map((r) => r.line), findings };
}

/** Sizes of the texts let go, as the reader reported them. */
const gone: number[] = [];
const onTextGone = (bytes: number): void => void gone.push(bytes);

function reread(file: string, between?: (k: number) => void): { objs: unknown[]; lines: number[]; findings: Finding[] } {
  const findings: Finding[] = [];
  const objs: unknown[] = [];
  const lines: number[] = [];
  let k = 0;
  for (const r of readManifestObjects(file, findings, {}, onTextGone)) {
    objs.push(r.obj);
    lines.push(r.line);
    between?.(k++);
  }
  return { objs, lines, findings };
}

describe('JSON Lists read again from their file', () => {
  it('reads what reading the text in memory reads: objects, lines, findings', () => {
    // Items larger than the 1 MiB read window, and more items than one window holds.
    const text = listText(3000, 'p'.repeat(1_200_000));
    const file = path.join(dir, 'list.json');
    writeFileSync(file, text);
    gone.length = 0;
    expect(reread(file)).toEqual(read(file, text));
    expect(gone).toEqual([text.length]);
    const disk = (() => {
      try {
        return loadManifests([file], undefined, { every: 0, onObjects: () => {}, onTextGone });
      } catch (e) {
        return e;
      }
    })();
    const memory = (() => {
      try {
        return buildModel([{ file, text }]);
      } catch (e) {
        return e;
      }
    })();
    expect(disk).toEqual(memory);
  });

  it('reads a List that is not ASCII from memory, with the same result', () => {
    const text = listText(5).replace('"s1"', '"s1", "note": "caf\u00e9 \u2603"');
    const file = path.join(dir, 'utf8.json');
    writeFileSync(file, text);
    gone.length = 0;
    expect(reread(file)).toEqual(read(file, text));
    expect(gone).toEqual([]);
  });

  it('reads a file that changed after its scan again, whole', () => {
    const file = path.join(dir, 'changed.json');
    writeFileSync(file, listText(4));
    const findings: Finding[] = [];
    const objects = readManifestObjects(file, findings, {}, onTextGone);
    const now = listText(6);
    writeFileSync(file, now);
    utimesSync(file, new Date(), new Date(Date.now() + 5000));
    const objs = [...objects].map((r) => r.obj);
    const fresh = read(file, now);
    expect([objs, findings]).toEqual([fresh.objs, fresh.findings]);
  });

  it('reports a file that changed while its items were read', () => {
    const file = path.join(dir, 'changing.json');
    writeFileSync(file, listText(2000));
    const { findings } = reread(file, (k) => {
      if (k === 10) {
        writeFileSync(file, listText(2000).replaceAll('10.96.', '10.97.'));
        utimesSync(file, new Date(), new Date(Date.now() + 5000));
      }
    });
    expect(findings.filter((f) => f.line === 0)).toEqual([
      { file, line: 0, severity: 'error', message: 'changed while it was being read, so what was read may mix two versions of it; load it again' },
    ]);
  });
});
