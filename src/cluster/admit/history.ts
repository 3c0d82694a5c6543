// Admission history: what the last load read, kept so that the next load can do what the API
// server does when an apply fails. A `kubectl apply` whose new version of an object is rejected
// leaves the old object in place, and a manifest file that cannot be parsed (a GitOps sync that
// fails) changes nothing in the cluster. So a reload that rejects an object, or cannot read a
// document, keeps serving the version the previous load admitted.
//
// What is kept: the text of every file the load read, deflated, within a byte budget (the
// texts, not objects, because they are already in memory while reading and compress about
// tenfold), and the objects a load served from an older text (their new version was rejected
// again), each as its JSON. The history crosses threads (the kubernetes loader thread) as plain
// data. Files beyond the budget are not kept: a rejected object there is not served, and the
// finding says which limit to raise.
import { deflateRawSync, inflateRawSync } from 'node:zlib';

/** Bytes of manifest text the history keeps per load (before compression). */
export const DEFAULT_HISTORY_BYTES = 16 * 1024 * 1024;

export interface AdmissionHistory {
  /** The texts the load read, per file path, deflated. */
  readonly files: readonly { readonly path: string; readonly deflated: Uint8Array }[];
  /** Objects served from an older text than their file's: their key and JSON. */
  readonly carried: readonly { readonly key: string; readonly file: string; readonly line: number; readonly json: string }[];
  /** Files not kept because the budget was spent. */
  readonly skipped: readonly string[];
}

/** Collects a load's history as it reads. */
export class HistoryWriter {
  private readonly files: { path: string; deflated: Uint8Array }[] = [];
  private readonly carried: { key: string; file: string; line: number; json: string }[] = [];
  private readonly skipped: string[] = [];
  private left: number;

  constructor(budgetBytes: number) {
    this.left = budgetBytes;
  }

  /** A file's text as the load read it; its deflated form when kept (within the budget). */
  text(path: string, text: string): Uint8Array | undefined {
    if (!this.fits(text.length)) {
      this.skip(path);
      return undefined;
    }
    // Level 1: manifests compress well even so, and this runs on every load.
    const deflated = deflateRawSync(Buffer.from(text, 'utf8'), { level: 1 });
    this.keep(path, text.length, deflated);
    return deflated;
  }

  /** Whether a text of `length` characters is kept now. */
  fits(length: number): boolean {
    return length <= this.left;
  }

  /**
   * A file's text kept as an earlier load deflated it (a feed's file it did not read again,
   * feed.ts), after `fits` said yes; `length` is the text's, as `text` counts it.
   */
  keep(path: string, length: number, deflated: Uint8Array): void {
    this.left -= length;
    this.files.push({ path, deflated });
  }

  /** A file whose text is not kept, over the budget. */
  skip(path: string): void {
    this.skipped.push(path);
  }

  /** An object served from an older version than its file holds now. */
  carry(key: string, file: string, line: number, obj: unknown): void {
    this.carried.push({ key, file, line, json: JSON.stringify(obj) });
  }

  done(): AdmissionHistory {
    return { files: this.files, carried: this.carried, skipped: this.skipped };
  }
}

/** Reads the previous load's history: the old text of a file, the old version of an object. */
export class HistoryReader {
  private readonly texts = new Map<string, Uint8Array>();
  private readonly carried = new Map<string, { file: string; line: number; json: string }>();
  private readonly skipped: ReadonlySet<string>;

  constructor(h: AdmissionHistory) {
    for (const f of h.files) this.texts.set(f.path, f.deflated);
    for (const c of h.carried) this.carried.set(c.key, c);
    this.skipped = new Set(h.skipped);
  }

  /** The text `path` had at the previous load, if kept. */
  text(path: string): string | undefined {
    const d = this.texts.get(path);
    return d === undefined ? undefined : inflateRawSync(d).toString('utf8');
  }

  /** An object the previous load served from an older text, by key. */
  carriedObject(key: string): { file: string; line: number; obj: unknown } | undefined {
    const c = this.carried.get(key);
    return c === undefined ? undefined : { file: c.file, line: c.line, obj: JSON.parse(c.json) as unknown };
  }

  /** Whether the previous load read `path` but did not keep its text (over the budget). */
  wasSkipped(path: string): boolean {
    return this.skipped.has(path);
  }
}
