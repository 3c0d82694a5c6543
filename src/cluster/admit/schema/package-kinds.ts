// The API kinds the schema packages ship, read from the packages themselves so that an upgrade of
// kubernetes-models or @kubernetes-models/gateway-api brings its kinds without an edit here.
//
// Each package has one folder per group (the core group is `v1/` at the top) and one per version
// below it; a kind's model file (`<Kind>.js`) is the only kind of file that declares
// `static{this.kind="<Kind>"}` next to `this.apiVersion`, and it imports its validator from
// `_schemas/`. A lookup reads the one file its apiVersion and kind name (`packageKind`); the full
// list (`packageKinds`: ~1400 files, 55-90 ms measured) is read only when a lookup misses and a
// "did you mean" needs every kind.

import { closeSync, existsSync, openSync, readdirSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';

export interface PackageKind {
  readonly apiVersion: string;
  readonly kind: string;
  /** Absolute path of the precompiled validator module. */
  readonly schemaFile: string;
  readonly pkg: 'kubernetes-models' | '@kubernetes-models/gateway-api';
}

const HEAD_BYTES = 512;
const KIND_RE = /static\{this\.apiVersion="([^"]+)"\}static\{this\.kind="([^"]+)"\}/;
const SCHEMA_RE = /import\{validate\}from"([^"]+_schemas\/[A-Za-z0-9]+\.js)"/;

const require = createRequire(import.meta.url);

function packageRoot(name: string): string | undefined {
  try {
    return dirname(require.resolve(`${name}/package.json`));
  } catch {
    return undefined;
  }
}

function subdirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((d) => d.isDirectory() && !d.name.startsWith('_'))
      .map((d) => d.name);
  } catch {
    return [];
  }
}

function head(file: string, buf: Buffer): string {
  const fd = openSync(file, 'r');
  try {
    return buf.toString('latin1', 0, readSync(fd, buf, 0, HEAD_BYTES, 0));
  } finally {
    closeSync(fd);
  }
}

/** Version folders: `<root>/<group>/<version>` and the core group's `<root>/v1`. */
function versionDirs(root: string): string[] {
  const out: string[] = [];
  for (const top of subdirs(root)) {
    if (/^v\d/.test(top)) out.push(join(root, top));
    else for (const v of subdirs(join(root, top))) out.push(join(root, top, v));
  }
  return out;
}

const PACKAGES = ['kubernetes-models', '@kubernetes-models/gateway-api'] as const;
const roots = new Map<PackageKind['pkg'], string | undefined>();
const rootOf = (pkg: PackageKind['pkg']): string | undefined => {
  if (!roots.has(pkg)) roots.set(pkg, packageRoot(pkg));
  return roots.get(pkg);
};

/** The kind a model file declares, when it is `name` itself (not a list of another kind). */
function readModel(dir: string, name: string, pkg: PackageKind['pkg'], has: (file: string) => boolean, buf: Buffer): PackageKind | undefined {
  // A list type's kind is "<Kind>List" of a kind in the same folder: not an object to apply.
  if (name.endsWith('List') && has(`${name.slice(0, -4)}.js`)) return undefined;
  let text: string;
  try {
    text = head(join(dir, `${name}.js`), buf);
  } catch {
    return undefined;
  }
  const m = KIND_RE.exec(text);
  const s = SCHEMA_RE.exec(text);
  // The name must match exactly: a case-insensitive file system finds "service.js" too.
  if (m === null || s === null || m[2] !== name) return undefined;
  return { apiVersion: m[1]!, kind: name, schemaFile: resolve(dir, s[1]!), pkg };
}

const SAFE_GROUP = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const SAFE_VERSION = /^v[0-9]+[a-z0-9]*$/;
const SAFE_KIND = /^[A-Z][A-Za-z0-9]*$/;
const probed = new Map<string, PackageKind | null>();

/** The package kind of exactly this apiVersion and kind, read from its one model file. */
export function packageKind(group: string, version: string, kind: string): PackageKind | undefined {
  const key = `${group}/${version}/${kind}`;
  let hit = probed.get(key);
  if (hit === undefined) {
    hit = null;
    // Names from manifests become a path only when they cannot leave the package folder.
    if ((group === '' || SAFE_GROUP.test(group)) && SAFE_VERSION.test(version) && SAFE_KIND.test(kind) && probed.size < 10_000) {
      const buf = Buffer.alloc(HEAD_BYTES);
      for (const pkg of PACKAGES) {
        const root = rootOf(pkg);
        if (root === undefined) continue;
        const dir = group === '' ? join(root, version) : join(root, group, version);
        const found = readModel(dir, kind, pkg, (f) => existsSync(join(dir, f)), buf);
        if (found !== undefined) {
          hit = found;
          break;
        }
      }
    }
    probed.set(key, hit);
  }
  return hit ?? undefined;
}

let all: readonly PackageKind[] | undefined;

/** Every kind both packages ship, scanned once per process. */
export function packageKinds(): readonly PackageKind[] {
  if (all === undefined) {
    const out: PackageKind[] = [];
    const buf = Buffer.alloc(HEAD_BYTES);
    for (const pkg of PACKAGES) {
      const root = rootOf(pkg);
      if (root === undefined) continue;
      for (const dir of versionDirs(root)) {
        const files = new Set(readdirSync(dir));
        for (const f of files) {
          if (!f.endsWith('.js') || !/^[A-Z]/.test(f)) continue;
          const k = readModel(dir, f.slice(0, -3), pkg, (x) => files.has(x), buf);
          if (k !== undefined) out.push(k);
        }
      }
    }
    all = out;
  }
  return all;
}
