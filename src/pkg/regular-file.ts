// Reading a data file a plugin names (a zone file, a hosts file, the Corefile the reload plugin
// watches) without letting the file stall the server: regular files only (a FIFO blocks the
// reader forever, /dev/zero never ends), opened non-blocking so the open itself cannot wait, and
// at most a byte bound, checked on the open descriptor and again while reading (the file may
// grow, and /proc files report size 0). Synchronous on purpose: an asynchronous read of a FIFO
// holds a libuv thread-pool thread for as long as the FIFO stays open.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** Largest zone file, hosts file or watched Corefile read (fixed: far above any real one). */
export const MAX_DATA_FILE_BYTES = 64 * 1024 * 1024;

export class UnreadableFile extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path}: ${reason}`);
    this.name = 'UnreadableFile';
  }
}

function kindOf(st: { isDirectory(): boolean; isFIFO(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean; isSocket(): boolean }): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/** The bytes of a regular file of at most maxBytes; throws UnreadableFile otherwise. */
export function readRegularFile(path: string, maxBytes = MAX_DATA_FILE_BYTES): Buffer {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    throw new UnreadableFile(path, (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new UnreadableFile(path, `it is ${kindOf(st)}; only regular files are read`);
    if (st.size > maxBytes) throw new UnreadableFile(path, `it is ${st.size} bytes, more than the limit of ${maxBytes}`);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.min(64 * 1024, maxBytes + 1 - total));
      const got = readSync(fd, buf, 0, buf.length, null);
      if (got === 0) break;
      chunks.push(buf.subarray(0, got));
      total += got;
      if (total > maxBytes) throw new UnreadableFile(path, `it is more than the limit of ${maxBytes} bytes`);
    }
    return Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}

export function readRegularText(path: string, maxBytes = MAX_DATA_FILE_BYTES): string {
  return readRegularFile(path, maxBytes).toString('utf8');
}
