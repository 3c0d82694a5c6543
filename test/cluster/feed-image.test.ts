// The manifest feed's persisted image (src/cluster/feed-image.ts), through the real server: a
// start on unchanged files answers from the image exactly as a load of the files does (the whole
// zone, by AXFR with dig), and whatever the image cannot vouch for (an edited file, a damaged
// image) is loaded from the files instead; the image directory's budget and the switch to
// turn it off.
import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { repoRoot, startServer, type RunningServer, which } from '../helpers/server.js';
import { describeNeeding } from '../helpers/tools.js';
import { pollFor, quietFor } from '../helpers/wait.js';
import { fileChanged, type ImageFile } from '../../src/cluster/feed-image.js';
import { hashText } from '../../src/cluster/feed.js';

const dig = which('dig');

function axfr(port: number): Promise<string[]> {
  return new Promise((resolve, reject) =>
    execFile(
      dig!,
      ['@127.0.0.1', '-p', String(port), '+time=5', '+tries=1', '+noall', '+answer', 'AXFR', 'cluster.local'],
      { timeout: 15_000 },
      (err, stdout) => {
        if (err && !stdout) return reject(err);
        // The SOA's serial is the time of the load: every other field of every record must match.
        resolve(
          stdout
            .split('\n')
            .filter((l) => l.trim() !== '' && !l.startsWith(';'))
            .map((l) =>
              l
                .split(/\s+/)
                .filter((_, i) => i !== 1)
                .join(' ')
                .replace(/^(\S+ IN SOA \S+ \S+) \d+/, '$1 SERIAL'),
            ),
        );
      },
    ),
  );
}

const loaded = (s: RunningServer): Record<string, unknown>[] =>
  s.logs.filter((l) => l.includes('"msg":"kubernetes data loaded"')).map((l) => JSON.parse(l) as Record<string, unknown>);
const warnings = (s: RunningServer): string[] => s.logs.filter((l) => l.includes('"level":40') && l.includes('manifest image'));
/** The first load of a start that came from the image: no file read. */
const fromImage = (s: RunningServer): boolean => {
  const first = loaded(s)[0];
  return first?.['reread'] === 0 && first['full'] === false;
};

describeNeeding(['dig'], 'the manifest image, through the real server', () => {
  let dir: string;
  let manifests: string;
  let conf: string;
  let reference: string[];
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-feed-image-'));
    manifests = path.join(dir, 'manifests');
    cpSync(path.join(repoRoot, 'examples/manifests'), manifests, { recursive: true });
    conf = path.join(dir, 'Corefile');
    writeFileSync(
      conf,
      'cluster.local in-addr.arpa {\n    bind 127.0.0.1\n    transfer cluster.local {\n        to *\n    }\n    kubernetes cluster.local in-addr.arpa {\n        pods insecure\n        watch 0s\n    }\n}\n',
    );
    // The answers of a load of the files, no image involved.
    const s = await startServer(['--conf', conf, '--manifests', manifests, '--no-manifest-image']);
    try {
      reference = await axfr(s.port);
    } finally {
      await s.stop();
    }
    expect(reference.length).toBeGreaterThan(20);
  }, 60_000);
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const serve = (images: string, ...more: string[]): Promise<RunningServer> =>
    startServer(['--conf', conf, '--manifests', manifests, '--manifest-image-dir', images, ...more], { timeoutMs: 30_000 });
  const imageFiles = (images: string): string[] => (existsSync(images) ? readdirSync(images).filter((f) => f.endsWith('.img')) : []);
  /** Serves until the image is written (once the loader thread is quiet after the load), then stops. */
  const writeImage = async (images: string): Promise<string> => {
    const s = await serve(images);
    try {
      const [name] = await pollFor('the image to be written', () => (imageFiles(images).length > 0 ? imageFiles(images) : undefined), 20_000, 50);
      expect(fromImage(s)).toBe(false);
      return path.join(images, name!);
    } finally {
      await s.stop();
    }
  };

  it('a start on unchanged files answers from the image, every record as a load of the files gives it', async () => {
    const images = path.join(dir, 'images-same');
    await writeImage(images);
    const s = await serve(images);
    try {
      expect(fromImage(s)).toBe(true);
      expect(await axfr(s.port)).toEqual(reference);
      expect(warnings(s)).toEqual([]);
    } finally {
      await s.stop();
    }
  }, 60_000);

  it('after a start from the image, a change is loaded by file: the feed keeps its reads, restored in the background', async () => {
    const images = path.join(dir, 'images-change');
    await writeImage(images);
    const s = await serve(images);
    const file = path.join(manifests, 'zz-added.yaml');
    try {
      expect(fromImage(s)).toBe(true);
      await quietFor(3000, 'the quiet time after which the loader thread loads the files the image stood for');
      writeFileSync(
        `${file}.tmp`,
        'apiVersion: v1\nkind: Service\nmetadata:\n  name: added\n  namespace: default\nspec:\n  clusterIP: 10.96.77.77\n  ports:\n  - port: 80\n',
      );
      renameSync(`${file}.tmp`, file);
      s.proc.kill('SIGHUP');
      const second = await pollFor('the reload', () => loaded(s)[1], 20_000, 50);
      expect([second['load'], second['reread'], second['full']]).toEqual([2, 1, false]);
      const all = await axfr(s.port);
      expect(all).toContain('added.default.svc.cluster.local. IN A 10.96.77.77');
      expect(all.filter((l) => !l.startsWith('added.') && !l.startsWith('_http._tcp.added.'))).toEqual(reference);
    } finally {
      await s.stop();
      rmSync(file, { force: true });
    }
  }, 60_000);

  it('a file touched but unchanged still matches; one edited within the same size and modification time does not', async () => {
    const images = path.join(dir, 'images-edit');
    await writeImage(images);
    const file = path.join(manifests, 'default.yaml');
    const before = statSync(file);
    const text = readFileSync(file, 'utf8');
    utimesSync(file, new Date(), new Date());
    let s = await serve(images);
    try {
      expect(fromImage(s)).toBe(true);
      expect(await axfr(s.port)).toEqual(reference);
    } finally {
      await s.stop();
    }
    // The same bytes but for one address, the times put back: only the text tells.
    const edited = text.replace('clusterIP: 10.96.0.1\n', 'clusterIP: 10.96.0.9\n');
    expect(edited.length).toBe(text.length);
    expect(edited).not.toBe(text);
    try {
      writeFileSync(file, edited);
      utimesSync(file, before.atime, before.mtime);
      s = await serve(images);
      try {
        expect(fromImage(s)).toBe(false);
        const now = await axfr(s.port);
        expect(now).not.toEqual(reference);
        const fresh = await startServer(['--conf', conf, '--manifests', manifests, '--no-manifest-image']);
        try {
          expect(now).toEqual(await axfr(fresh.port));
        } finally {
          await fresh.stop();
        }
      } finally {
        await s.stop();
      }
    } finally {
      writeFileSync(file, text);
    }
  }, 120_000);

  it('a truncated, corrupt or foreign-format image is ignored with one warning, and the files are loaded', async () => {
    for (const damage of ['truncated', 'checksum mismatch', 'format 7, this clusterdns reads 1'] as const) {
      const images = path.join(dir, `images-${damage.split(' ')[0]}`);
      const image = await writeImage(images);
      if (damage === 'truncated') truncateSync(image, statSync(image).size - 100);
      else if (damage.startsWith('format')) {
        const bytes = readFileSync(image);
        bytes.writeUInt32LE(7, 8);
        writeFileSync(image, bytes);
      } else {
        const bytes = readFileSync(image);
        bytes[bytes.length - 10]! ^= 0xff;
        writeFileSync(image, bytes);
      }
      const s = await serve(images);
      try {
        expect(fromImage(s)).toBe(false);
        expect(await axfr(s.port)).toEqual(reference);
        const w = warnings(s);
        expect(w).toHaveLength(1);
        expect(JSON.parse(w[0]!)['why']).toBe(damage);
      } finally {
        await s.stop();
      }
    }
  }, 120_000);

  it('an unwritable image directory: one warning, and serving goes on', async () => {
    // A directory below a regular file cannot be made, whoever runs the test.
    const blocker = path.join(dir, 'not-a-directory');
    writeFileSync(blocker, '');
    const s = await serve(path.join(blocker, 'images'));
    try {
      const w = await pollFor('the warning', () => (warnings(s).length > 0 ? warnings(s) : undefined), 20_000, 50);
      expect(w[0]).toContain('manifest image not written');
      expect(await axfr(s.port)).toEqual(reference);
    } finally {
      await s.stop();
    }
    expect(warnings(s)).toHaveLength(1);
  }, 60_000);

  it('the byte budget evicts the least recently used images, and an image over it is not written', async () => {
    const images = path.join(dir, 'images-budget');
    mkdirSync(images);
    const old = path.join(images, 'old.img');
    const older = path.join(images, 'older.img');
    writeFileSync(older, Buffer.alloc(60_000));
    writeFileSync(old, Buffer.alloc(50_000));
    utimesSync(older, new Date(Date.now() - 7_200_000), new Date(Date.now() - 7_200_000));
    utimesSync(old, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
    const s = await serve(images, '--manifest-image-bytes', '100000');
    try {
      await pollFor('the image to be written', () => (imageFiles(images).length > 2 || !existsSync(older) ? true : undefined), 20_000, 50);
      await quietFor(200, 'the eviction that follows the write');
    } finally {
      await s.stop();
    }
    const ours = imageFiles(images).filter((f) => f !== 'old.img' && f !== 'older.img');
    expect(ours).toHaveLength(1);
    expect(statSync(path.join(images, ours[0]!)).size).toBeLessThan(50_000);
    expect(existsSync(old)).toBe(true);
    expect(existsSync(older)).toBe(false);
    // A budget the image itself exceeds: nothing written, one warning.
    const small = path.join(dir, 'images-small');
    const t = await serve(small, '--manifest-image-bytes', '1KiB');
    try {
      const w = await pollFor('the warning', () => (warnings(t).length > 0 ? warnings(t) : undefined), 20_000, 50);
      expect(w[0]).toContain('larger than the image budget');
    } finally {
      await t.stop();
    }
    expect(imageFiles(small)).toEqual([]);
  }, 60_000);

  it('--no-manifest-image writes nothing and reads nothing', async () => {
    const images = path.join(dir, 'images-off');
    await writeImage(images);
    const before = readdirSync(images).map((f) => [f, statSync(path.join(images, f)).mtimeMs]);
    const s = await serve(images, '--no-manifest-image');
    try {
      expect(fromImage(s)).toBe(false);
      await quietFor(3000, 'the quiet time after which an image would be written');
      expect(await axfr(s.port)).toEqual(reference);
    } finally {
      await s.stop();
    }
    expect(readdirSync(images).map((f) => [f, statSync(path.join(images, f)).mtimeMs])).toEqual(before);
    const never = path.join(dir, 'images-never');
    const t = await serve(never, '--no-manifest-image');
    try {
      await quietFor(3000, 'the quiet time after which an image would be written');
    } finally {
      await t.stop();
    }
    expect(existsSync(never)).toBe(false);
  }, 60_000);
});

it('a file whose version is unchanged but whose text differs is caught by the hash where the version cannot vouch for it', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-feed-image-racy-'));
  try {
    const file = path.join(dir, 'a.yaml');
    writeFileSync(file, 'kind: Namespace\napiVersion: v1\nmetadata:\n  name: a\n');
    const st = statSync(file, { bigint: true });
    const record = (text: string, vouched: boolean): ImageFile => [file, st.dev, st.ino, st.size, st.mtimeNs, st.ctimeNs, hashText(text), vouched];
    const same = readFileSync(file, 'utf8');
    const other = same.replace('name: a', 'name: b');
    // Recent times: the text is read and compared.
    expect(fileChanged(record(same, false), undefined)).toBeUndefined();
    expect(fileChanged(record(other, false), undefined)).toContain('changed');
    // Times clearly older than the image: the version is enough, the text is not read.
    expect(fileChanged(record(other, true), undefined)).toBeUndefined();
    rmSync(file);
    expect(fileChanged(record(same, false), undefined)).toContain('gone');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
