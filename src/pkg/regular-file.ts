// Reading a file the configuration names (manifests, the Corefile and its imports, zone files,
// hosts files, the Corefile the reload plugin watches) without letting the file stall the
// server: regular files only (a FIFO blocks the reader forever, /dev/zero never ends), opened
// non-blocking so the open itself cannot wait, and at most a byte bound, checked on the open
// descriptor and again while reading (the file may grow, and /proc files report size 0).
// Synchronous on purpose: an asynchronous read of a FIFO holds a libuv thread-pool thread for
// as long as the FIFO stays open. Callers word the problem for their users (UnreadableFile).
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';

/** Largest zone file, hosts file or watched Corefile read (fixed: far above any real one). */
const MAX_DATA_FILE_BYTES = 64 * 1024 * 1024;

/** Why a file was not read. */
export type FileProblem =
  /** open(2) failed; `cause` is Node's error. */
  | { kind: 'open'; cause: Error }
  /** Not a regular file (a FIFO, a device, a directory, a socket). */
  | { kind: 'special'; stats: Stats }
  /** Larger than the limit when opened. */
  | { kind: 'size'; size: number; limit: number }
  /** Grew past the limit while being read. */
  | { kind: 'grew'; limit: number };

/** What a non-regular file is, for messages: 'a FIFO', 'a character device', ... */
export function fileKind(st: Pick<Stats, 'isDirectory' | 'isFIFO' | 'isCharacterDevice' | 'isBlockDevice' | 'isSocket'>): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

function describe(p: FileProblem): string {
  switch (p.kind) {
    case 'open':
      return (p.cause as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : p.cause.message;
    case 'special':
      return `it is ${fileKind(p.stats)}; only regular files are read`;
    case 'size':
      return `it is ${p.size} bytes, more than the limit of ${p.limit}`;
    case 'grew':
      return `it is more than the limit of ${p.limit} bytes`;
  }
}

export class UnreadableFile extends Error {
  /** The problem in plain words, without the path. */
  readonly reason: string;

  constructor(
    readonly path: string,
    readonly problem: FileProblem,
  ) {
    const reason = describe(problem);
    super(`${path}: ${reason}`);
    this.name = 'UnreadableFile';
    this.reason = reason;
  }
}

/** The bytes of a regular file of at most maxBytes; throws UnreadableFile otherwise (errors while reading propagate). */
export function readRegularFile(path: string, maxBytes = MAX_DATA_FILE_BYTES): Buffer {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    throw new UnreadableFile(path, { kind: 'open', cause: err as Error });
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new UnreadableFile(path, { kind: 'special', stats: st });
    if (st.size > maxBytes) throw new UnreadableFile(path, { kind: 'size', size: st.size, limit: maxBytes });
    // One buffer of the file's size (and a byte to see the end in): chunks and their
    // concatenation would hold a large file three times over while it is read.
    let buf = Buffer.allocUnsafe(Math.min(Math.max(st.size + 1, 64 * 1024), maxBytes + 1));
    let total = 0;
    for (;;) {
      if (total === buf.length) {
        const bigger = Buffer.allocUnsafe(Math.min(buf.length * 2, maxBytes + 1));
        buf.copy(bigger, 0, 0, total);
        buf = bigger;
      }
      const got = readSync(fd, buf, total, buf.length - total, null);
      if (got === 0) break;
      total += got;
      if (total > maxBytes) throw new UnreadableFile(path, { kind: 'grew', limit: maxBytes });
    }
    return buf.subarray(0, total);
  } finally {
    closeSync(fd);
  }
}

export function readRegularText(path: string, maxBytes = MAX_DATA_FILE_BYTES): string {
  return readRegularFile(path, maxBytes).toString('utf8');
}
