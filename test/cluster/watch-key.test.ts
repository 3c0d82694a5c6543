// The watcher's key of the manifest files (fingerprint) walks the tree itself, in one pass; it
// must change whenever the files the loader reads change: the list collectManifestFiles makes,
// or the size, times or inode of one of them. Checked against that list over random edits of a
// tree (seeded), one edit at a time.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { fingerprint } from '../../src/cluster/read/watch.js';
import { collectManifestFiles } from '../../src/cluster/read/files.js';
import type { Finding } from '../../src/cluster/model/finding.js';
import { prng } from '../helpers/prng.js';

/** What the loader would read, as collectManifestFiles lists it and stat describes each file. */
function reference(paths: string[]): string {
  const found: Finding[] = [];
  const h = createHash('sha256');
  for (const file of collectManifestFiles(paths, found)) {
    const st = fs.statSync(file);
    h.update(`${file}\0${st.size}\0${st.mtimeMs}\0${st.ctimeMs}\0${st.ino}\n`);
  }
  for (const f of found) h.update(`${f.file}\0${f.message}\n`);
  return h.digest('hex');
}

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-watch-key-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('fingerprint', () => {
  it('changes whenever the files the loader reads change, and not for other files', () => {
    const rnd = prng(22);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    const tree = path.join(root, 'm');
    const outside = path.join(root, 'outside');
    fs.mkdirSync(tree);
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(outside, 'target.yaml'), 'a: 1\n');
    const paths = [tree, path.join(root, 'named.txt')];
    const dirs = (): string[] => {
      const out = [tree];
      for (let i = 0; i < out.length; i++) {
        for (const e of fs.readdirSync(out[i]!, { withFileTypes: true })) if (e.isDirectory()) out.push(path.join(out[i]!, e.name));
      }
      return out;
    };
    const entries = (): string[] => dirs().flatMap((d) => fs.readdirSync(d).map((n) => path.join(d, n)));
    const names = ['a.yaml', 'b.yml', 'c.json', 'D.YAML', 'notes.txt', '.hidden.yaml', 'README'];
    let clock = Date.now() / 1000;
    const free = (p: string): boolean => fs.lstatSync(p, { throwIfNoEntry: false }) === undefined;
    /** A link that leads somewhere (a dangling one is passed over by both). */
    const links = (): boolean => entries().some((e) => fs.lstatSync(e).isSymbolicLink() && fs.existsSync(e));
    const edits: Array<[string, () => void]> = [
      [
        'write',
        () => {
          const p = path.join(pick(dirs()), pick(names));
          if (free(p) || fs.lstatSync(p).isFile()) fs.writeFileSync(p, `x: ${rnd()}\n`);
        },
      ],
      [
        'append',
        () => {
          const f = pick(entries().filter((e) => fs.lstatSync(e).isFile()));
          if (f) fs.appendFileSync(f, 'y: 2\n');
        },
      ],
      [
        'touch',
        () => {
          const f = pick(entries());
          clock += 10;
          if (f && fs.existsSync(f)) fs.utimesSync(f, clock, clock);
        },
      ],
      [
        'remove',
        () => {
          const e = pick(entries());
          if (e) fs.rmSync(e, { recursive: true, force: true });
        },
      ],
      ['mkdir', () => fs.mkdirSync(path.join(pick(dirs()), pick(['sub', 'team', '.git', 'x.yaml'])), { recursive: true })],
      [
        'rename',
        () => {
          const e = pick(entries());
          try {
            if (e) fs.renameSync(e, path.join(pick(dirs()), pick(names)));
          } catch {
            // into itself, or a file over a directory: refused, nothing changed
          }
        },
      ],
      [
        'link outside',
        () => {
          const p = path.join(pick(dirs()), pick(names));
          if (free(p)) fs.symlinkSync(path.join(outside, 'target.yaml'), p);
        },
      ],
      [
        'link dir',
        () => {
          const p = path.join(pick(dirs()), pick(['linked', 'loop']));
          if (free(p)) fs.symlinkSync(pick([outside, tree]), p);
        },
      ],
      [
        'dangling',
        () => {
          const p = path.join(pick(dirs()), pick(names));
          if (free(p)) fs.symlinkSync(path.join(root, 'nowhere.yaml'), p);
        },
      ],
      ['edit outside', () => fs.writeFileSync(path.join(outside, 'target.yaml'), `a: ${rnd()}\n`)],
      [
        'named path',
        () => {
          const p = paths[1]!;
          if (fs.existsSync(p)) fs.rmSync(p);
          else fs.writeFileSync(p, 'kind: List\n');
        },
      ],
    ];
    const linking = new Set(['link outside', 'link dir']);
    let key = fingerprint(paths);
    let ref = reference(paths);
    let changed = 0;
    // 300 edits without links, then 300 with them. Where a link is, the key may change while the
    // loader's files do not: collectManifestFiles keeps one of two paths to a file, the key both.
    for (let step = 0; step < 600; step++) {
      const [what, edit] = pick(step < 300 ? edits.filter(([w]) => !linking.has(w)) : edits);
      const mayDiffer = links();
      edit();
      const nextKey = fingerprint(paths);
      const nextRef = reference(paths);
      const detail = `step ${step}: ${what}`;
      if (nextRef !== ref) {
        changed++;
        expect(nextKey, detail).not.toBe(key);
      } else if (!mayDiffer && !links()) {
        expect(nextKey, detail).toBe(key);
      }
      key = nextKey;
      ref = nextRef;
    }
    // The walk did change the files, many times over.
    expect(changed).toBeGreaterThan(100);
  });
});
