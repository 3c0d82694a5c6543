// Hostile and careless manifest inputs (issues #9, #11, #12): every one is rejected or read
// within a bounded time and memory, with a finding that names file and line, and a running
// server keeps answering from its last good data.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawnSync, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildModel, loadManifests } from '../../src/cluster/load.js';
import { ManifestError, type Finding } from '../../src/cluster/model/finding.js';
import { launcher, repoRoot, startServer, type RunningServer } from '../helpers/server.js';
import { dnsQuery } from '../cli/udp-query.js';
import { missingTools, skipOrFailInCI } from '../helpers/tools.js';
import { pace, sampleFor, waitForLines, waitUntil } from '../helpers/wait.js';

/** `clusterdns check`, killed after 10 s and with a 512 MiB heap, so a regression fails instead of eating the machine. */
const check = (...args: string[]): { code: number | null; out: string; ms: number } => {
  const t = Date.now();
  const r = spawnSync(process.execPath, ['--max-old-space-size=512', launcher, 'check', ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
    timeout: 10000,
    killSignal: 'SIGKILL',
    maxBuffer: 1 << 20,
  });
  return { code: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}`, ms: Date.now() - t };
};

/** The errors and warnings of a build expected to reject something (left out; the rest loads). */
const failing = (docs: { file: string; text: string }[], opts?: Parameters<typeof buildModel>[1]): Finding[] => {
  let findings: readonly Finding[];
  try {
    findings = buildModel(docs, opts).findings;
  } catch (e) {
    if (!(e instanceof ManifestError)) throw e;
    findings = e.findings;
  }
  if (!findings.some((f) => f.severity === 'error')) throw new Error('expected an error');
  return findings.filter((f) => f.severity !== 'info');
};

const service = (name: string, ip = '10.96.1.1'): string =>
  `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n  clusterIP: ${ip}\n  ports: [{name: http, port: 80}]\n`;

/** `levels` anchors, each a list of nine aliases to the one before: 9^levels leaves when expanded. */
function aliasBomb(levels: number, indent: string): string {
  const names = 'abcdefghijklmnop';
  const lines = [`${indent}a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]`];
  for (let i = 1; i < levels; i++) {
    const prev = names[i - 1]!;
    lines.push(`${indent}${names[i]}: &${names[i]} [${Array(9).fill(`*${prev}`).join(',')}]`);
  }
  return lines.join('\n');
}

const deploymentBomb = (levels: number): string => `apiVersion: apps/v1
kind: Deployment
metadata: {name: bomb}
spec:
  selector: {matchLabels: {app: bomb}}
  template:
    metadata: {labels: {app: bomb}}
    spec:
      containers: [{name: c, image: x}]
      x:
${aliasBomb(levels, '        ')}
`;

let tmp: string;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-hostile-manifests-'));
});
afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});
const dirFor = (name: string): string => {
  const d = path.join(tmp, name);
  fs.mkdirSync(d, { recursive: true });
  return d;
};

describe('findings name the line of the field (#11.12, #12.4)', () => {
  it('an invalid clusterIP on line 6 is reported at line 6, not at the object', () => {
    const text = 'apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  clusterIP: 10.96.300.1\n  ports: [{port: 80}]\n';
    const f = failing([{ file: 'web.yaml', text }]);
    expect(f.map((x) => [x.file, x.line])).toEqual([['web.yaml', 6]]);
    expect(f[0]!.message).toMatch(/spec\.clusterIP "10\.96\.300\.1" is not a valid IP address/);
  });

  it('fields of List items, flow mappings and later documents get their own lines', () => {
    const text = [
      'apiVersion: v1', // 1
      'kind: List', // 2
      'items:', // 3
      '- apiVersion: v1', // 4
      '  kind: Service', // 5
      '  metadata: {name: a}', // 6
      '  spec:', // 7
      '    ports:', // 8
      '    - {name: http, port: 80}', // 9
      '    - name: dns', // 10
      '      port: 70000', // 11
      '---', // 12
      'apiVersion: v1', // 13
      'kind: Pod', // 14
      'metadata: {name: p}', // 15
      'status: {podIP: 10.244.0.x}', // 16
      'spec: {containers: [{name: c, image: i}]}', // 17
    ].join('\n');
    const f = failing([{ file: 'l.yaml', text }]);
    expect(f.map((x) => x.line)).toEqual([11, 16]);
  });

  it('a block scalar holding "---" lines stays whole, next to a broken document', () => {
    const text = `apiVersion: v1
kind: ConfigMap
metadata: {name: script}
data:
  run.sh: |
    echo one
    ---
    echo two
---
apiVersion: v1
kind: Service
metadata: {name: [broken}
---
${service('after')}`;
    const f = failing([{ file: 'b.yaml', text }]);
    expect(f).toHaveLength(1);
    expect(f[0]!.line).toBe(12);
    expect(f[0]!.message).toMatch(/YAML syntax error at line 12/);
  });

  it('a missing manifest path is named without a ":0:" line', () => {
    const r = check('--manifests', path.join(tmp, 'no-such-dir'));
    // A --manifests path that is not there is a command line that cannot run: exit 2, as eslint.
    expect(r.code).toBe(2);
    expect(r.out).toContain(`clusterdns check: --manifests ${path.join(tmp, 'no-such-dir')}: no such file or directory`);
    expect(r.out).not.toMatch(/:0:/);
  });
});

describe('YAML alias bombs and oversized objects (#9.1)', () => {
  it('check rejects a 9-level alias bomb under spec.template quickly, with file:line', () => {
    const d = dirFor('bomb');
    fs.writeFileSync(path.join(d, 'bomb.yaml'), deploymentBomb(9));
    expect(fs.statSync(path.join(d, 'bomb.yaml')).size).toBeLessThan(1000);
    const r = check('--manifests', d);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/bomb\.yaml:1: error: this document expands its YAML aliases more than 100 times per anchor/);
    expect(r.ms).toBeLessThan(8000);
  });

  it('an alias bomb as metadata.name is an error at file:line, not "Invalid string length"', () => {
    const text = `apiVersion: v1\nkind: Service\nspec:\n  x:\n${aliasBomb(7, '    ')}\nmetadata:\n  name: *g\n`;
    const f = failing([{ file: 'n.yaml', text }]);
    expect(f.map((x) => [x.file, x.line])).toEqual([['n.yaml', 1]]);
    expect(f[0]!.message).toMatch(/YAML aliases more than 100 times/);
    // With the alias limit raised, the expanded-size limit still stops it.
    const g = failing([{ file: 'n.yaml', text }], { manifestLimits: { maxAliases: 100_000_000 } });
    expect(g[0]!.message).toMatch(/larger than 4194304 bytes once its aliases are expanded; .*--max-manifest-object-bytes/);
  });

  it('a few aliases are fine, and an object over --max-manifest-object-bytes is refused', () => {
    const text = `apiVersion: v1\nkind: Service\nmetadata: {name: s, labels: &l {a: b}}\nspec:\n  selector: *l\n  ports: [{port: 80}]\n`;
    expect(buildModel([{ file: 'ok.yaml', text }]).model.services[0]!.selector).toEqual({ a: 'b' });
    const d = dirFor('big');
    fs.writeFileSync(path.join(d, 'big.yaml'), `${service('big')}  x: "${'y'.repeat(5000)}"\n`);
    const r = check('--manifests', d, '--max-manifest-object-bytes', '4096');
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/big\.yaml:1: error: this document is larger than 4096 bytes/);
  });

  it('a watched directory that receives an alias bomb keeps answering from the last good data', async () => {
    const d = dirFor('bomb-serve');
    fs.mkdirSync(path.join(d, 'm'));
    fs.writeFileSync(path.join(d, 'm/web.yaml'), service('web'));
    fs.writeFileSync(path.join(d, 'Corefile'), 'cluster.local {\n    bind 127.0.0.1\n    kubernetes {\n        manifests m\n        watch 100ms\n    }\n}\n');
    const server: RunningServer = await startServer(['--conf', path.join(d, 'Corefile')]);
    try {
      fs.writeFileSync(path.join(d, 'm/bomb.yaml'), deploymentBomb(9));
      let answered = 0;
      // Asked every 20 ms for 1.5 s while the bomb loads.
      await sampleFor(1500, 20, async () => {
        const r = await dnsQuery(server.port, 'web.default.svc.cluster.local', 'A', 1000);
        expect(r.answers.map((a) => a.data)).toEqual(['10.96.1.1']);
        answered++;
      });
      expect(answered).toBeGreaterThan(10);
      // The bomb is rejected (logged at its file and line, not served); the rest serves on.
      const rejected = (l: string): boolean => l.includes('"level":50') && l.includes('not served:');
      await waitForLines(server.logs, rejected, 'the bomb to be refused', { timeoutMs: 3000, everyMs: 50 });
      expect(server.logs.find(rejected)).toMatch(/bomb\.yaml","line":1.*aliases more than 100 times/);
    } finally {
      await server.stop();
    }
  }, 15000);
});

describe('directory walks (#9.6)', () => {
  it('symlink loops end, and a file reached through several links is read once', () => {
    const d = dirFor('loops');
    fs.writeFileSync(path.join(d, 'web.yaml'), service('web'));
    fs.symlinkSync('.', path.join(d, 'x'));
    fs.symlinkSync('.', path.join(d, 'y'));
    fs.mkdirSync(path.join(d, 'sub'));
    fs.symlinkSync('..', path.join(d, 'sub/up'));
    fs.symlinkSync('../web.yaml', path.join(d, 'sub/again.yaml'));
    const r = check('--manifests', d);
    expect(r.out).toContain('0 error(s), 0 warning(s)');
    expect(r.code).toBe(0);
    expect(r.ms).toBeLessThan(8000);
    // The same file named twice, directly and through its directory, is read once too.
    const { model } = loadManifests([d, path.join(d, 'web.yaml'), path.join(d, 'sub/again.yaml')]);
    expect(model.objectCount).toBe(1);
  });

  it('a self-link gives no "declared twice" errors', () => {
    const d = dirFor('self');
    fs.writeFileSync(path.join(d, 'web.yaml'), service('web'));
    fs.symlinkSync(d, path.join(d, 'self'));
    const { model, findings } = loadManifests([d]);
    expect(findings).toEqual([]);
    expect(model.objectCount).toBe(1);
  });
});

describe('special files and file size (#9.14)', () => {
  it.skipIf(skipOrFailInCI(missingTools('mkfifo'), 'FIFO manifest'))('a FIFO named as a manifest is refused at once instead of hanging', () => {
    const fifo = path.join(dirFor('fifo'), 'pipe.yaml');
    execFileSync('mkfifo', [fifo]);
    const r = check('--manifests', fifo);
    expect(r.code).toBe(1);
    expect(r.out).toContain(`${fifo}: error: is a FIFO, not a regular file; manifests must be regular files`);
    // Inside a directory it is skipped with a warning.
    const inDir = check('--manifests', path.dirname(fifo));
    expect(inDir.out).toContain(`${fifo}: warning: is a FIFO, not a regular file, so it is skipped`);
    expect(inDir.out).toContain('0 error(s), 1 warning(s)');
  });

  it('/dev/zero is refused without reading it', () => {
    const r = check('--manifests', '/dev/zero');
    expect(r.code).toBe(1);
    expect(r.out).toContain('/dev/zero: error: is a device, not a regular file');
    expect(r.ms).toBeLessThan(8000);
  });

  it('a file over --max-manifest-file-bytes is refused with the flag to raise', () => {
    const d = dirFor('size');
    fs.writeFileSync(path.join(d, 'web.yaml'), service('web'));
    const r = check('--manifests', d, '--max-manifest-file-bytes', '64');
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/web\.yaml: error: is \d+ bytes, more than the 64-byte limit; split it or raise --max-manifest-file-bytes/);
    expect(check('--manifests', d, '--max-manifest-file-bytes', 'lots').out).toMatch(/--max-manifest-file-bytes <n>' argument 'lots' is invalid/);
  });
});

describe('duplicate keys and echoed input (#9.18)', () => {
  it('warns about duplicate keys in JSON with the line, and still errors on them in YAML', () => {
    const json =
      '{\n  "apiVersion": "v1",\n  "kind": "Service",\n  "metadata": {\n    "name": "a",\n    "name": "b"\n  },\n  "spec": {"ports": [{"port": 80}]}\n}\n';
    const { model, findings } = buildModel([{ file: 'd.json', text: json }]);
    expect(model.services.map((s) => s.name)).toEqual(['b']); // last wins, as in every JSON reader
    expect(findings).toEqual([
      expect.objectContaining({ file: 'd.json', line: 6, severity: 'warning', message: expect.stringMatching(/duplicate key "name" \(first at line 5\)/) }),
    ]);
    const f = failing([{ file: 'd.yaml', text: 'apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n  name: b\n' }]);
    expect(f.map((x) => x.line)).toEqual([5]);
    expect(f[0]!.message).toMatch(/Map keys must be unique/);
  });

  it('never echoes more than a short excerpt of a value', () => {
    const long = 'A'.repeat(1_000_000);
    const f = failing([
      { file: 'a.yaml', text: `apiVersion: v1\nkind: Service\nmetadata: {name: "${long}"}\n` },
      { file: 'b.yaml', text: `apiVersion: v1\nkind: Service\nmetadata: {name: ok}\nspec: {clusterIP: [${Array(50000).fill('"x"').join(',')}]}\n` },
      { file: 'c.yaml', text: `apiVersion: v1\nkind: Service\nmetadata: {name: ok2, namespace: "${long}"}\n` },
      { file: 'd.yaml', text: `apiVersion: v1\nkind: ${long}\nmetadata: {labels: {a: b}}\n` },
      { file: 'e.yaml', text: `apiVersion: v1\nkind: Service\nmetadata: {name: ok3}\nspec: {type: !${long} x}\n` },
    ]);
    expect(f.length).toBeGreaterThanOrEqual(5);
    for (const x of f) expect(x.message.length).toBeLessThan(600);
  });
});

describe('watch applies only stable files (#9.8)', () => {
  it('a slowly written manifest is not served half-written; the finished one is', async () => {
    const d = dirFor('slow');
    fs.mkdirSync(path.join(d, 'm'));
    const file = path.join(d, 'm/web.yaml');
    fs.writeFileSync(file, service('web', '10.96.1.1'));
    // 500 ms polls against a write every ~40 ms: only a writer stalled for a whole poll
    // interval could look stable, which a loaded test machine does not do.
    fs.writeFileSync(path.join(d, 'Corefile'), 'cluster.local {\n    bind 127.0.0.1\n    kubernetes {\n        manifests m\n        watch 500ms\n    }\n}\n');
    const server = await startServer(['--conf', path.join(d, 'Corefile')]);
    try {
      // The new content, written in growing pieces every 40 ms (a slow writer); one of the cuts
      // ends right after "clusterIP: ", which alone would get an allocated IP.
      const next = service('web', '10.96.2.2') + '---\n' + service('api', '10.96.3.3');
      const cuts: number[] = [];
      for (let n = 0; n < next.length; n += 12) cuts.push(n);
      cuts.push(next.indexOf('clusterIP: ') + 'clusterIP: '.length);
      cuts.sort((a, b) => a - b);
      const seen = new Set<string>();
      const ask = async (): Promise<void> => {
        const r = await dnsQuery(server.port, 'web.default.svc.cluster.local', 'A', 1000);
        seen.add(`${r.rcode} ${r.answers.map((a) => a.data).join(',')}`);
      };
      for (const n of cuts.slice(0, 40)) {
        fs.writeFileSync(file, next.slice(0, n));
        await ask();
        // Each cut stays on disk a while, for the watch (every 100 ms) to meet some of them.
        await pace(40);
      }
      expect([...seen]).toEqual(['NOERROR 10.96.1.1']);
      fs.writeFileSync(file, next);
      await waitUntil(
        'the whole edit to serve',
        async () => {
          await ask();
          return seen.has('NOERROR 10.96.2.2');
        },
        4000,
        50,
      );
      expect([...seen]).toEqual(['NOERROR 10.96.1.1', 'NOERROR 10.96.2.2']);
      const api = await dnsQuery(server.port, 'api.default.svc.cluster.local', 'A', 1000);
      expect(api.answers.map((a) => a.data)).toEqual(['10.96.3.3']);
    } finally {
      await server.stop();
    }
  }, 20000);

  it('an edit that does not load keeps the previous data', async () => {
    const d = dirFor('broken-edit');
    fs.mkdirSync(path.join(d, 'm'));
    const file = path.join(d, 'm/web.yaml');
    fs.writeFileSync(file, service('web', '10.96.1.1'));
    fs.writeFileSync(path.join(d, 'Corefile'), 'cluster.local {\n    bind 127.0.0.1\n    kubernetes {\n        manifests m\n        watch 100ms\n    }\n}\n');
    const server = await startServer(['--conf', path.join(d, 'Corefile')]);
    try {
      fs.writeFileSync(file, service('web', '10.96.300.1'));
      // The new version is rejected at its field's line, and the version admitted before serves on.
      const rejected = (l: string): boolean => l.includes('"level":50') && l.includes('not served:');
      await waitForLines(server.logs, rejected, 'the edit to be refused', { timeoutMs: 3000, everyMs: 50 });
      expect(server.logs.find(rejected)).toMatch(/web\.yaml","line":7/);
      expect(server.logs.some((l) => l.includes('"previous-version-served"'))).toBe(true);
      const r = await dnsQuery(server.port, 'web.default.svc.cluster.local', 'A', 1000);
      expect(r.answers.map((a) => a.data)).toEqual(['10.96.1.1']);
    } finally {
      await server.stop();
    }
  }, 15000);
});
