// A persisted image of a manifest feed's last load: the summary and every view's parts as the
// loader thread handed them over, with what vouches for them (the build of clusterdns that made
// them, the feed's paths and options, and each file's identity and version). A start whose files
// all match hands the views over from the image without reading a manifest; anything else (a
// changed file, another build, a damaged image) is a normal load. Written by the loader thread
// once a load's views are handed over and it is quiet, never by the serving thread.
//
// Layout: a fixed header (magic, format, the length of the metadata and of the body, a sha1 of
// the body), then the metadata (v8-serialized) and each view part (v8-serialized, length first).
// Nothing is deserialized before the header and checksum agree with the bytes read: the
// directory is the user's own cache, but a torn write or a disk error must not reach
// v8.deserialize.
import { createHash } from 'node:crypto';
import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeSync,
  fstatSync,
} from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { deserialize, serialize } from 'node:v8';
import { threadId } from 'node:worker_threads';
import { changedNs, type FileState, hashText, RACY_WINDOW_NS } from './feed.js';
import type { FeedInit, FeedSummary } from './feed-protocol.js';
export { DEFAULT_IMAGE_BUDGET_BYTES, defaultImageDir } from './feed-image-options.js';
import { collectManifestFiles, readManifestFile, sameVersion, versionOf } from './read/files.js';

export const IMAGE_MAGIC = 'CDNSIMG\n';
export const IMAGE_FORMAT = 1;
export const HEADER_BYTES = 48;
const SUFFIX = '.img';
export interface ImageOptions {
  readonly dir: string;
  readonly budgetBytes: number;
}

/** One view of the image: its subscription key (builder module and args) and its parts' bytes. */
export interface ImageView {
  readonly key: string;
  readonly parts: readonly Uint8Array[];
  /** The build's `after` result, when it came before the image was written. */
  readonly after?: { readonly value: unknown };
}

export interface ImageContent {
  readonly summary: FeedSummary;
  readonly views: ReadonlyMap<string, ImageView>;
  /** The files it was made from. */
  readonly files: readonly ImageFile[];
}

/**
 * A file the image was made from: path, dev, ino, size, mtimeNs, ctimeNs, the sha1 of its text,
 * and whether its version alone vouches for the text (its times were clearly older than the
 * image): else the text is hashed at start, as for a file whose version changed (a file touched
 * but unchanged still matches).
 */
export type ImageFile = readonly [string, bigint, bigint, bigint, bigint, bigint, string, boolean];

interface Meta {
  readonly identity: string;
  readonly key: string;
  readonly files: readonly ImageFile[];
  readonly summary: FeedSummary;
  readonly views: readonly { readonly key: string; readonly parts: number; readonly after?: { readonly value: unknown } }[];
}

let identityMemo: string | undefined;

/**
 * What must be equal for an image to be read: the package version and the name, size and
 * modification time of every compiled file (or source file, where they run directly) of this
 * clusterdns: a rebuilt or upgraded clusterdns never reads an image an older one wrote.
 */
export function buildIdentity(): string {
  if (identityMemo !== undefined) return identityMemo;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (path.basename(dir) !== 'dist' && path.basename(dir) !== 'src' && path.dirname(dir) !== dir) dir = path.dirname(dir);
  const h = createHash('sha1');
  try {
    h.update(readFileSync(path.join(path.dirname(dir), 'package.json')));
  } catch {
    h.update('no package.json');
  }
  const walk = (d: string): void => {
    const entries = readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(js|mjs|ts)$/.test(e.name)) {
        const st = statSync(p, { bigint: true });
        h.update(`${p}\0${st.size}\0${st.mtimeNs}\n`);
      }
    }
  };
  walk(dir);
  identityMemo = h.digest('hex');
  return identityMemo;
}

/** The feed's identity for its image: absolute paths and every option but the image's own. */
export function imageKey(init: FeedInit): string {
  const cluster = Object.fromEntries(Object.entries(init.cluster).filter(([k]) => k !== 'image'));
  return JSON.stringify([init.paths.map((p) => path.resolve(p)), cluster]);
}

const sha1 = (chunks: readonly Uint8Array[]): Buffer => {
  const h = createHash('sha1');
  for (const c of chunks) h.update(c);
  return h.digest();
};

const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};

/** Why a file of the image no longer stands for the file on disk, or undefined when it does. */
export function fileChanged(f: ImageFile, maxFileBytes: number | undefined): string | undefined {
  const [file, dev, ino, size, mtimeNs, ctimeNs, hash, vouched] = f;
  let st;
  try {
    st = statSync(file, { bigint: true });
  } catch {
    return `${file} is gone`;
  }
  if (vouched && st.dev === dev && st.ino === ino && st.size === size && st.mtimeNs === mtimeNs && st.ctimeNs === ctimeNs) return undefined;
  if (st.size !== size) return `${file} changed`;
  const text = readManifestFile(file, [], maxFileBytes);
  return text !== undefined && hashText(text) === hash ? undefined : `${file} changed`;
}

/**
 * The image's record of a file a load read: its text hashed now, when the file is still the one
 * read (the same version, and the text the load hashed when it was racy then). Undefined when
 * it is not: the load is of a tree that changed since, and the next load (the watch's) writes.
 * `previous`: the record the last image had, whose hash stands while the version vouches for it.
 */
export function fileRecord(s: FileState, maxFileBytes: number | undefined, nowNs: bigint, previous?: ImageFile): ImageFile | undefined {
  const v = s.version;
  if (!v) return undefined;
  const now = versionOf(s.file);
  if (!now || !sameVersion(now, v)) return undefined;
  const vouched = nowNs - changedNs(v) >= RACY_WINDOW_NS;
  if (
    previous?.[7] &&
    s.hash === undefined &&
    sameVersion(v, { dev: previous[1], ino: previous[2], size: previous[3], mtimeNs: previous[4], ctimeNs: previous[5] })
  )
    return previous;
  const text = readManifestFile(s.file, [], maxFileBytes);
  if (text === undefined) return undefined;
  const hash = hashText(text);
  if (s.hash !== undefined && s.hash !== hash) return undefined;
  return [s.file, v.dev, v.ino, v.size, v.mtimeNs, v.ctimeNs, hash, vouched];
}

export type ImageWarn = (detail: object, message: string) => void;

/**
 * A feed's image file: `<dir>/<sha1 of the feed key>.img`. Each failure to write is warned about
 * once per FeedImage (an unwritable directory does not fill the log); each image found unusable
 * once when read.
 */
export class FeedImage {
  readonly file: string;
  private readonly key: string;
  private writeWarned = false;
  /** The files of the last image written or read: a file whose version vouches for its text is not read again. */
  private records = new Map<string, ImageFile>();

  constructor(
    private readonly init: FeedInit,
    private readonly opts: ImageOptions,
    private readonly warn: ImageWarn,
  ) {
    this.key = imageKey(init);
    this.file = path.join(opts.dir, `${createHash('sha1').update(this.key).digest('hex')}${SUFFIX}`);
  }

  /** The image, when one exists, is sound, was made by this build for this feed and every file is as it read it. */
  read(): ImageContent | undefined {
    let fd: number;
    try {
      fd = openSync(this.file, 'r');
    } catch {
      return undefined; // none yet
    }
    let bytes: Buffer;
    try {
      const size = fstatSync(fd).size;
      const bad = (why: string): undefined => {
        this.warn({ image: this.file, why }, 'manifest image ignored, loading the manifests');
        return undefined;
      };
      if (size < HEADER_BYTES) return bad('truncated');
      if (size > this.opts.budgetBytes) return bad(`larger (${size} bytes) than the image budget (${this.opts.budgetBytes})`);
      const header = Buffer.alloc(HEADER_BYTES);
      readSync(fd, header, 0, HEADER_BYTES, 0);
      if (header.toString('latin1', 0, 8) !== IMAGE_MAGIC) return bad('not a clusterdns image');
      const format = header.readUInt32LE(8);
      if (format !== IMAGE_FORMAT) return bad(`format ${format}, this clusterdns reads ${IMAGE_FORMAT}`);
      const metaLen = header.readUInt32LE(12);
      const bodyLen = Number(header.readBigUInt64LE(16));
      if (HEADER_BYTES + bodyLen !== size || metaLen > bodyLen) return bad('truncated');
      bytes = Buffer.allocUnsafe(bodyLen);
      let got = 0;
      while (got < bodyLen) {
        const n = readSync(fd, bytes, got, bodyLen - got, HEADER_BYTES + got);
        if (n === 0) return bad('truncated');
        got += n;
      }
      if (!sha1([bytes]).equals(header.subarray(24, 44))) return bad('checksum mismatch');
      let meta: Meta;
      try {
        meta = deserialize(bytes.subarray(0, metaLen)) as Meta;
      } catch {
        return bad('unreadable metadata');
      }
      if (meta.identity !== buildIdentity()) return bad('written by another build of clusterdns');
      if (meta.key !== this.key) return undefined; // another feed's name hash: not ours
      const views = new Map<string, ImageView>();
      let at = metaLen;
      for (const v of meta.views) {
        const parts: Uint8Array[] = [];
        for (let i = 0; i < v.parts; i++) {
          if (at + 4 > bodyLen) return bad('truncated');
          const n = bytes.readUInt32LE(at);
          at += 4;
          if (at + n > bodyLen) return bad('truncated');
          parts.push(bytes.subarray(at, at + n));
          at += n;
        }
        views.set(v.key, { key: v.key, parts, ...(v.after ? { after: v.after } : {}) });
      }
      if (at !== bodyLen) return bad('trailing bytes');
      if (!this.sameFiles(meta.files)) return undefined;
      // Read now: the budget evicts the least recently used.
      try {
        const now = new Date();
        utimesSync(this.file, now, now);
      } catch {
        // Eviction order only.
      }
      this.records = new Map(meta.files.map((f) => [f[0], f]));
      return { summary: meta.summary, views, files: meta.files };
    } catch (err) {
      this.warn({ image: this.file, err }, 'manifest image unreadable, loading the manifests');
      return undefined;
    } finally {
      closeSync(fd);
    }
  }

  /** Whether the manifest files are those the image was made from (the same list, each unchanged). */
  private sameFiles(files: readonly ImageFile[]): boolean {
    const list = collectManifestFiles([...this.init.paths], []);
    if (list.length !== files.length) return false;
    for (let i = 0; i < list.length; i++) if (list[i] !== files[i]![0]) return false;
    const maxFileBytes = this.init.cluster.manifestLimits?.maxFileBytes;
    for (const f of files) if (fileChanged(f, maxFileBytes) !== undefined) return false;
    return true;
  }

  /**
   * Writes the image of a load (temp file, then rename) and evicts the oldest images past the
   * budget. False when it was not written (a file without a version, an unwritable directory).
   */
  write(
    states: readonly FileState[],
    summary: FeedSummary,
    views: readonly { key: string; parts: readonly Uint8Array[]; after?: { value: unknown } }[],
  ): boolean {
    const files: ImageFile[] = [];
    const maxFileBytes = this.init.cluster.manifestLimits?.maxFileBytes;
    const nowNs = BigInt(Date.now()) * 1_000_000n;
    for (const s of states) {
      const f = fileRecord(s, maxFileBytes, nowNs, this.records.get(s.file));
      if (!f) return false;
      files.push(f);
    }
    this.records = new Map(files.map((f) => [f[0], f]));
    const chunks: Uint8Array[] = [];
    let meta: Buffer;
    try {
      const m: Meta = {
        identity: buildIdentity(),
        key: this.key,
        files,
        summary,
        views: views.map((v) => ({ key: v.key, parts: v.parts.length, ...(v.after ? { after: v.after } : {}) })),
      };
      meta = serialize(m);
    } catch (err) {
      this.warnWrite({ err }, 'manifest image not written: its data cannot be stored');
      return false;
    }
    chunks.push(meta);
    for (const v of views) {
      for (const p of v.parts) {
        chunks.push(u32(p.byteLength), p);
      }
    }
    let bodyLen = 0;
    for (const c of chunks) bodyLen += c.byteLength;
    if (HEADER_BYTES + bodyLen > this.opts.budgetBytes) {
      this.warnWrite({ bytes: HEADER_BYTES + bodyLen, budgetBytes: this.opts.budgetBytes }, 'manifest image not written: larger than the image budget');
      this.remove(this.file);
      return false;
    }
    const header = Buffer.alloc(HEADER_BYTES);
    header.write(IMAGE_MAGIC, 0, 'latin1');
    header.writeUInt32LE(IMAGE_FORMAT, 8);
    header.writeUInt32LE(meta.byteLength, 12);
    header.writeBigUInt64LE(BigInt(bodyLen), 16);
    sha1(chunks).copy(header, 24);
    const tmp = `${this.file}.${process.pid}.${threadId}.tmp`;
    try {
      mkdirSync(this.opts.dir, { recursive: true, mode: 0o700 });
      const fd = openSync(tmp, 'w', 0o600);
      try {
        writeSync(fd, header);
        for (const c of chunks) writeSync(fd, c);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, this.file);
    } catch (err) {
      this.remove(tmp);
      this.warnWrite(
        { dir: this.opts.dir, err: err instanceof Error ? err.message : String(err) },
        'manifest image not written; serving goes on, the next start loads the manifests',
      );
      return false;
    }
    this.evict();
    return true;
  }

  /** The oldest images (by last use) go until the directory is within the budget; this one stays. */
  private evict(): void {
    let entries: { file: string; size: number; mtimeMs: number }[];
    try {
      entries = readdirSync(this.opts.dir)
        .filter((n) => n.endsWith(SUFFIX))
        .flatMap((n) => {
          const file = path.join(this.opts.dir, n);
          try {
            const st = statSync(file);
            return [{ file, size: st.size, mtimeMs: st.mtimeMs }];
          } catch {
            return [];
          }
        });
    } catch {
      return;
    }
    entries.sort((a, b) => b.mtimeMs - a.mtimeMs);
    let total = 0;
    for (const e of entries) if (e.file === this.file) total += e.size;
    let over = false;
    for (const e of entries) {
      if (e.file === this.file) continue;
      over ||= total + e.size > this.opts.budgetBytes;
      if (over) this.remove(e.file);
      else total += e.size;
    }
  }

  private remove(file: string): void {
    try {
      unlinkSync(file);
    } catch {
      // Gone already, or not ours to remove.
    }
  }

  private warnWrite(detail: object, message: string): void {
    if (this.writeWarned) return;
    this.writeWarned = true;
    this.warn({ image: this.file, ...detail }, message);
  }
}
