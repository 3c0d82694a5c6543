// Which files a set of manifest paths names (directories walked, symlink loops ended) and reading
// one safely (a regular file, within its byte bound), with what tells one version of a file from
// the next.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Finding } from '../model/finding.js';
import { defaultManifestLimits } from '../model/limits.js';
import { readRegularText, UnreadableFile } from '../../pkg/regular-file.js';

const MANIFEST_EXT = /\.(ya?ml|json)$/i;

const identity = (st: { dev: bigint; ino: bigint }): string => `${st.dev}:${st.ino}`;

function specialKind(st: { isFIFO(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean; isSocket(): boolean }): string {
  return st.isFIFO() ? 'a FIFO' : st.isCharacterDevice() || st.isBlockDevice() ? 'a device' : st.isSocket() ? 'a socket' : 'a special file';
}

/**
 * Expands paths (files or directories, walked recursively) into a sorted list of manifest files.
 * Hidden files and directories (leading '.') are skipped inside directories; a file named
 * explicitly is always read. Directories and files are tracked by device and inode, so symlink
 * loops end and a file reached through several links is read once.
 */
export function collectManifestFiles(paths: readonly string[], findings: Finding[]): string[] {
  const out: string[] = [];
  const seenDirs = new Set<string>();
  const seenFiles = new Set<string>();
  const addFile = (p: string, id: string): void => {
    if (seenFiles.has(id)) return;
    seenFiles.add(id);
    out.push(p);
  };
  const walk = (dir: string, dirId: string): void => {
    if (seenDirs.has(dirId)) return; // a symlink back to a directory already walked
    seenDirs.add(dirId);
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch (e) {
      findings.push({ file: dir, line: 0, severity: 'error', message: `cannot read directory: ${(e as Error).message}` });
      return;
    }
    // Sorted so that which of several links to one file is kept does not depend on the file system.
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const ent of entries) {
      if (ent.name.startsWith('.')) continue;
      if (!ent.isDirectory() && !MANIFEST_EXT.test(ent.name) && !ent.isSymbolicLink()) continue;
      const p = join(dir, ent.name);
      let st;
      try {
        st = statSync(p, { bigint: true });
      } catch {
        continue; // dangling link
      }
      if (st.isDirectory()) walk(p, identity(st));
      else if (!MANIFEST_EXT.test(ent.name)) continue;
      else if (st.isFile()) addFile(p, identity(st));
      else findings.push({ file: p, line: 0, severity: 'warning', message: `is ${specialKind(st)}, not a regular file, so it is skipped` });
    }
  };
  for (const p of paths) {
    let st;
    try {
      st = statSync(p, { bigint: true });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      const why = code === 'ENOENT' ? 'does not exist' : code === 'EACCES' ? 'is not readable (permission denied)' : (e as Error).message;
      findings.push({
        file: p,
        line: 0,
        severity: 'error',
        message: `manifest path ${why}; check the --manifests flag or the kubernetes block's manifests option`,
      });
      continue;
    }
    if (st.isDirectory()) walk(p, identity(st));
    else addFile(p, identity(st));
  }
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * Reads a manifest file: regular files only (a FIFO would block forever, /dev/zero never ends),
 * at most `maxBytes`. Opened non-blocking so that a FIFO is refused instead of waited on.
 */
export function readManifestFile(file: string, findings: Finding[], maxBytes = defaultManifestLimits.maxFileBytes): string | undefined {
  const fail = (message: string): undefined => {
    findings.push({ file, line: 0, severity: 'error', message });
    return undefined;
  };
  try {
    return readRegularText(file, maxBytes);
  } catch (e) {
    if (!(e instanceof UnreadableFile)) return fail(`cannot read manifest file: ${(e as Error).message}`);
    const p = e.problem;
    switch (p.kind) {
      case 'open':
        return fail(`cannot read manifest file: ${p.cause.message}`);
      case 'special':
        return fail(`is ${specialKind(p.stats)}, not a regular file; manifests must be regular files`);
      case 'size':
        return fail(`is ${p.size} bytes, more than the ${p.limit}-byte limit; split it or raise --max-manifest-file-bytes`);
      case 'grew':
        return fail(`grew past the ${p.limit}-byte limit while being read; split it or raise --max-manifest-file-bytes`);
    }
  }
}

/** What identifies one writing of a file: a change to it changes one of these. */
export interface FileVersion {
  readonly dev: bigint;
  readonly ino: bigint;
  readonly size: bigint;
  readonly mtimeNs: bigint;
  /** A write that puts the modification time back (touch -d, a restore) still moves this. */
  readonly ctimeNs: bigint;
}

/** The file's version, as plain values (kept with a file's read for as long as the feed keeps it). */
export function versionOf(file: string): FileVersion | undefined {
  try {
    const st = statSync(file, { bigint: true });
    return { dev: st.dev, ino: st.ino, size: st.size, mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs };
  } catch {
    return undefined;
  }
}

export const sameVersion = (a: FileVersion | undefined, b: FileVersion | undefined): boolean =>
  a !== undefined && b !== undefined && a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
