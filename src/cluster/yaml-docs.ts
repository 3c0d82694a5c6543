// Reading manifest files: directory walking, multi-document YAML / JSON parsing with source lines,
// and flattening of `kind: List` / `*List` documents into their items.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { constructFromEvents, CORE_SCHEMA, EVENT_ID, getScalarValue, mergeTag, parseEvents, YAMLException } from 'js-yaml';
import type { Event } from 'js-yaml';
import type { Finding } from './model.js';

/** One manifest object as written, with where it starts. */
export interface RawObject {
  readonly file: string;
  /** 1-based line of the object's first line. */
  readonly line: number;
  readonly obj: unknown;
  /** For items of a `*List`: the kind and apiVersion they inherit when they name none. */
  readonly listKind?: string;
  readonly listApiVersion?: string;
}

const MANIFEST_EXT = /\.(ya?ml|json)$/i;

/**
 * Expands paths (files or directories, walked recursively) into a sorted list of manifest files.
 * Hidden files and directories (leading '.') are skipped inside directories; a file named
 * explicitly is always read.
 */
export function collectManifestFiles(paths: readonly string[], findings: Finding[]): string[] {
  const out = new Set<string>();
  const walk = (dir: string): void => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch (e) {
      findings.push({ file: dir, line: 0, severity: 'error', message: `cannot read directory: ${(e as Error).message}` });
      return;
    }
    for (const ent of entries) {
      if (ent.name.startsWith('.')) continue;
      const p = join(dir, ent.name);
      let isDir = ent.isDirectory();
      let isFile = ent.isFile();
      if (ent.isSymbolicLink()) {
        try {
          const st = statSync(p);
          isDir = st.isDirectory();
          isFile = st.isFile();
        } catch {
          continue; // dangling link
        }
      }
      if (isDir) walk(p);
      else if (isFile && MANIFEST_EXT.test(ent.name)) out.add(p);
    }
  };
  for (const p of paths) {
    let st;
    try {
      st = statSync(p);
    } catch (e) {
      findings.push({ file: p, line: 0, severity: 'error', message: `cannot read manifest path: ${(e as Error).message}` });
      continue;
    }
    if (st.isDirectory()) walk(p);
    else out.add(p);
  }
  return [...out].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Offsets of line starts, for offset -> 1-based line conversion. */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

function lineOf(starts: readonly number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

/** Start offset of a node event, including its anchor/tag; -1 when unknown. */
function nodeStart(e: Event): number {
  let s = -1;
  const consider = (v: number): void => {
    if (v >= 0 && (s < 0 || v < s)) s = v;
  };
  switch (e.type) {
    case EVENT_ID.MAPPING:
    case EVENT_ID.SEQUENCE:
      consider(e.start);
      consider(e.anchorStart);
      consider(e.tagStart);
      break;
    case EVENT_ID.SCALAR:
      consider(e.valueStart);
      consider(e.anchorStart);
      consider(e.tagStart);
      break;
    case EVENT_ID.ALIAS:
      consider(e.anchorStart);
      break;
    default:
      break;
  }
  return s;
}

interface DocPositions {
  /** Offset of the document's root node (-1 when empty/unknown). */
  root: number;
  /** Offsets of the items of a top-level `items:` sequence, when there is one. */
  items: number[];
}

interface Frame {
  isMap: boolean;
  /** Mapping: number of child nodes seen (even = next is a key). */
  n: number;
  lastKey?: string;
  /** This sequence is the root mapping's `items`. */
  isItems: boolean;
}

/** One pass over the events: the root offset of each document and of its `items` entries. */
function documentPositions(events: readonly Event[], source: string): DocPositions[] {
  const docs: DocPositions[] = [];
  let cur: DocPositions | undefined;
  const stack: Frame[] = [];
  // Called for every node event before it is opened: updates the parent and returns whether the
  // node is the value of the root mapping's `items` key.
  const enter = (e: Event): boolean => {
    if (!cur) return false;
    const parent = stack[stack.length - 1];
    if (!parent) {
      cur.root = nodeStart(e);
      return false;
    }
    let isItemsValue = false;
    if (parent.isMap) {
      const isKey = parent.n % 2 === 0;
      if (isKey) {
        parent.lastKey = stack.length === 1 && e.type === EVENT_ID.SCALAR ? getScalarValue(source, e) : undefined;
      } else if (stack.length === 1 && parent.lastKey === 'items') {
        isItemsValue = true;
      }
    } else if (parent.isItems) {
      cur.items.push(nodeStart(e));
    }
    parent.n++;
    return isItemsValue;
  };
  for (const e of events) {
    switch (e.type) {
      case EVENT_ID.DOCUMENT:
        cur = { root: -1, items: [] };
        docs.push(cur);
        stack.length = 0;
        break;
      case EVENT_ID.MAPPING:
      case EVENT_ID.SEQUENCE: {
        const isItems = enter(e);
        stack.push({ isMap: e.type === EVENT_ID.MAPPING, n: 0, isItems: isItems && e.type === EVENT_ID.SEQUENCE });
        break;
      }
      case EVENT_ID.SCALAR:
      case EVENT_ID.ALIAS:
        enter(e);
        break;
      case EVENT_ID.POP:
        if (stack.length > 0) stack.pop();
        else cur = undefined;
        break;
      default:
        break;
    }
  }
  return docs;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function yamlFinding(file: string, lineOffset: number, e: unknown): Finding {
  if (e instanceof YAMLException) {
    const line = (e.mark?.line ?? 0) + 1 + lineOffset;
    const col = (e.mark?.column ?? 0) + 1;
    return {
      file,
      line,
      severity: 'error',
      message: `YAML syntax error at line ${line}, column ${col}: ${e.reason}; fix the YAML (check indentation, quoting and '---' separators)`,
    };
  }
  return { file, line: 1 + lineOffset, severity: 'error', message: `cannot parse manifest: ${(e as Error)?.message ?? String(e)}` };
}

interface ParsedChunk {
  docs: unknown[];
  positions: DocPositions[];
  starts: number[];
}

/** The core schema plus merge keys (`<<: *anchor`), which Kubernetes' YAML reader (go-yaml) accepts. */
const MANIFEST_SCHEMA = CORE_SCHEMA.withTags(mergeTag);

function parseChunk(text: string, json: boolean): ParsedChunk {
  const events = parseEvents(text, {});
  const docs = constructFromEvents(events, { source: text, json, ...(json ? {} : { schema: MANIFEST_SCHEMA }) });
  return { docs, positions: documentPositions(events, text), starts: lineStarts(text) };
}

/**
 * Splits a file into raw objects. Syntax errors are reported with the YAML line; when the whole
 * file does not parse, each `---`-separated part is retried on its own so the valid documents of
 * the file still load and every broken one is reported.
 */
export function parseManifestText(file: string, text: string, findings: Finding[]): RawObject[] {
  const json = /\.json$/i.test(file);
  const out: RawObject[] = [];
  const emit = (chunk: ParsedChunk, lineOffset: number): void => {
    chunk.docs.forEach((doc, i) => {
      if (doc === null || doc === undefined) return; // empty document
      const pos = chunk.positions[i];
      const rootLine = pos && pos.root >= 0 ? lineOf(chunk.starts, pos.root) + lineOffset : 1 + lineOffset;
      if (!isRecord(doc)) {
        findings.push({
          file,
          line: rootLine,
          severity: 'error',
          message: `a manifest document must be a mapping (an object with apiVersion, kind and metadata), not ${Array.isArray(doc) ? 'a sequence' : 'a scalar'}`,
        });
        return;
      }
      const kind = doc['kind'];
      const items = doc['items'];
      if (typeof kind === 'string' && kind.endsWith('List') && Array.isArray(items)) {
        const itemKind = kind === 'List' ? undefined : kind.slice(0, -'List'.length);
        const apiVersion = typeof doc['apiVersion'] === 'string' ? doc['apiVersion'] : undefined;
        items.forEach((item, j) => {
          const off = pos?.items[j];
          const line = off !== undefined && off >= 0 ? lineOf(chunk.starts, off) + lineOffset : rootLine;
          if (item === null || item === undefined) return;
          out.push({
            file,
            line,
            obj: item,
            ...(itemKind !== undefined ? { listKind: itemKind } : {}),
            ...(itemKind !== undefined && apiVersion !== undefined ? { listApiVersion: apiVersion } : {}),
          });
        });
        return;
      }
      out.push({ file, line: rootLine, obj: doc });
    });
  };
  let whole: unknown;
  try {
    emit(parseChunk(text, json), 0);
    return out;
  } catch (e) {
    whole = e;
    if (json) {
      findings.push(yamlFinding(file, 0, e));
      return out;
    }
  }
  // Retry document by document.
  const lines = text.split('\n');
  let start = 0;
  let failed = false;
  const flush = (end: number): void => {
    const part = lines.slice(start, end).join('\n');
    try {
      emit(parseChunk(part, false), start);
    } catch (e) {
      failed = true;
      findings.push(yamlFinding(file, start, e));
    }
  };
  for (let i = 0; i < lines.length; i++) {
    if (i > start && /^---(\s|$)/.test(lines[i]!)) {
      flush(i);
      start = i;
    }
  }
  flush(lines.length);
  if (!failed) findings.push(yamlFinding(file, 0, whole)); // an error only the whole file shows
  return out;
}

export function readManifestFile(file: string, findings: Finding[]): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    findings.push({ file, line: 0, severity: 'error', message: `cannot read manifest file: ${(e as Error).message}` });
    return undefined;
  }
}
