// `clusterdns diff --git`: the manifests (and Corefile) of a revision of the current repository,
// read with `git ls-tree` and `git cat-file --batch` into a temporary directory laid out as the
// repository, without touching the work tree or the index. Paths in the output are then the
// repository's own.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Side } from './diff-compute.js';

/** Files the manifest loader reads, plus the Corefile wherever it lies. */
const MANIFEST_EXT = /\.(ya?ml|json)$/i;

function git(args: readonly string[], cwd: string): string {
  try {
    return execFileSync('git', args, { cwd, encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    throw new Error(`git ${args.join(' ')}: ${(err.stderr ?? '').trim() || err.message}`);
  }
}

/** The two revisions `spec` names, as `git diff` reads it: REV (against the work tree), A..B, or A...B (from their merge base). */
export function revisions(spec: string, cwd: string): { old: string; new: string | undefined } {
  const three = spec.indexOf('...');
  if (three >= 0) {
    const a = spec.slice(0, three) || 'HEAD';
    const b = spec.slice(three + 3) || 'HEAD';
    return { old: git(['merge-base', a, b], cwd).trim(), new: b };
  }
  const two = spec.indexOf('..');
  if (two >= 0) return { old: spec.slice(0, two) || 'HEAD', new: spec.slice(two + 2) || 'HEAD' };
  return { old: spec, new: undefined };
}

/** Blobs of `rev` under the repository paths `paths` (repository-relative, '' for all), by path. */
function listBlobs(rev: string, paths: readonly string[], top: string): { path: string; hash: string }[] {
  const out = git(['ls-tree', '-r', '-z', '--full-tree', rev, '--', ...paths.map((p) => (p === '' ? '.' : p))], top);
  const blobs: { path: string; hash: string }[] = [];
  for (const entry of out.split('\0')) {
    if (entry === '') continue;
    const tab = entry.indexOf('\t');
    const [, type, hash] = entry.slice(0, tab).split(' ');
    if (type === 'blob' && hash !== undefined) blobs.push({ path: entry.slice(tab + 1), hash });
  }
  return blobs;
}

/** The contents of `hashes`, in order, through one `git cat-file --batch`. */
function readBlobs(hashes: readonly string[], top: string): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['cat-file', '--batch'], { cwd: top, stdio: ['pipe', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`git cat-file --batch: ${stderr.trim() || `exit ${code}`}`));
      // Each object: "<hash> blob <size>\n", its bytes, "\n".
      const all = Buffer.concat(chunks);
      const out: Buffer[] = [];
      let at = 0;
      for (let i = 0; i < hashes.length; i++) {
        const nl = all.indexOf(10, at);
        const header = all.toString('utf8', at, nl).split(' ');
        if (header[1] !== 'blob') return reject(new Error(`git cat-file: ${header.join(' ')}`));
        const size = Number(header[2]);
        out.push(all.subarray(nl + 1, nl + 1 + size));
        at = nl + 1 + size + 1;
      }
      resolve(out);
    });
    child.stdin.end(`${hashes.join('\n')}\n`);
  });
}

/** A side whose files are the repository's at `rev`, in a temporary directory `cleanup` removes. */
export interface GitSides {
  readonly old: Side;
  readonly new: Side;
  cleanup(): void;
}

/**
 * The sides of `diff --git SPEC PATH...`: manifests under `paths` (relative to `cwd`) and the
 * Corefile `conf`, each read from its revision when the repository holds it there; a side with
 * no second revision is the work tree.
 */
export async function gitSides(spec: string, paths: readonly string[], conf: string | undefined, cwd: string = process.cwd()): Promise<GitSides> {
  const top = git(['rev-parse', '--show-toplevel'], cwd).trim();
  const { old, new: next } = revisions(spec, cwd);
  const inRepo = (p: string): string | undefined => {
    const rel = path.relative(top, path.resolve(cwd, p));
    return rel.startsWith('..') || path.isAbsolute(rel) ? undefined : rel.split(path.sep).join('/');
  };
  const repoPaths = paths.map((p) => {
    const rel = inRepo(p);
    if (rel === undefined) throw new Error(`--git: ${p} is outside the repository ${top}`);
    return rel;
  });
  const confRel = conf !== undefined ? inRepo(conf) : undefined;
  const dirs: string[] = [];
  const materialize = async (rev: string): Promise<Side> => {
    let resolved: string;
    try {
      resolved = git(['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], top).trim();
    } catch {
      throw new Error(`--git: ${rev} is not a commit of the repository ${top}`);
    }
    const dir = mkdtempSync(path.join(os.tmpdir(), 'clusterdns-diff-'));
    dirs.push(dir);
    const blobs = listBlobs(resolved, repoPaths, top).filter((b) => MANIFEST_EXT.test(b.path));
    const confBlob = confRel !== undefined ? listBlobs(resolved, [confRel], top).find((b) => b.path === confRel) : undefined;
    if (confBlob) blobs.push(confBlob);
    const contents = await readBlobs(
      blobs.map((b) => b.hash),
      top,
    );
    blobs.forEach((b, i) => {
      const file = path.join(dir, ...b.path.split('/'));
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, contents[i]!);
    });
    // A path the revision does not have is there empty (a file without objects, a directory
    // without files): that side serves none of it.
    const manifests = repoPaths.map((p) => path.join(dir, ...p.split('/')));
    for (const m of manifests) {
      if (existsSync(m)) continue;
      if (MANIFEST_EXT.test(m)) {
        mkdirSync(path.dirname(m), { recursive: true });
        writeFileSync(m, '');
      } else mkdirSync(m, { recursive: true });
    }
    return { label: rev, ...(conf !== undefined ? { conf: confBlob ? path.join(dir, ...confRel!.split('/')) : conf } : {}), manifests, root: dir };
  };
  try {
    const before = await materialize(old);
    const after: Side =
      next !== undefined
        ? await materialize(next)
        : { label: 'work tree', ...(conf !== undefined ? { conf } : {}), manifests: paths.map((p) => path.resolve(cwd, p)), root: top };
    return {
      old: before,
      new: after,
      cleanup: () => {
        for (const d of dirs) rmSync(d, { recursive: true, force: true });
      },
    };
  } catch (e) {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    throw e;
  }
}
