// Reading manifest text: multi-document YAML / JSON parsing with source lines (the fast readers
// first, else the `yaml` package's AST), and flattening of `kind: List` / `*List` documents into
// their items; a JSON List's items read again from its file when its text has gone. Finding and
// reading the files is files.ts; the lines of an object's fields, positions.ts.

import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import type * as YamlPackage from 'yaml';
import type { Document, Node as YamlNode } from 'yaml';
import { type Finding, jsonExcerpt } from '../model/finding.js';
import { defaultManifestLimits, type ManifestLimits } from '../model/limits.js';
import { type JsonScan, LineCounter, linesOf, scanJson } from './json-scan.js';
import { readSimpleYaml, type Segment } from './yaml-fast.js';
import { type FileVersion, readManifestFile, sameVersion, versionOf } from './files.js';
import { indexNode, mapValue, Positions, type RawObject } from './positions.js';
import { yaml } from './yaml-package.js';
import { checkSize, isRecord, TooBig } from './object-size.js';

const JSON_FILE = /\.json$/i;

const SYNTAX_FIX = "fix the YAML (check indentation, quoting and '---' separators)";
const DUPLICATE_FIX = 'JSON readers keep the last one, so the earlier value is ignored: remove one of them';

/** What reading one file's documents shares: its text, its limits, where findings go. */
interface DocReader {
  readonly file: string;
  readonly text: string;
  readonly json: boolean;
  readonly limits: ManifestLimits;
  readonly lc: YamlPackage.LineCounter;
  readonly lineAt: (offset: number) => number;
  readonly err: (line: number, message: string, severity?: 'error' | 'warning', column?: number) => void;
}

/**
 * Splits a file into raw objects, document by document (a broken document is reported with its
 * line and the others still load). Each document's AST is dropped once its value is built; an
 * object finds the lines of its fields through `positions`, on demand.
 */
export function parseManifestText(file: string, text: string, findings: Finding[], limits: Partial<ManifestLimits> = {}): Iterable<RawObject> {
  const all = { ...defaultManifestLimits, ...limits };
  const json = JSON_FILE.test(file);
  if (json) {
    const fast = parseJsonFast(file, text, findings, all);
    if (fast) return fast;
  }
  if (!json) {
    const fast = readFastYaml(file, text, findings, all);
    if (fast) return fast;
  }
  return parseWithPackage(file, text, findings, all);
}

/**
 * The `yaml` package's reading of a whole file, what parseManifestText gives when the fast
 * readers leave it all (tests compare the two on every text the fast readers take).
 */
export function parseWithPackage(file: string, text: string, findings: Finding[], limits: Partial<ManifestLimits> = {}): RawObject[] {
  const out: RawObject[] = [];
  const all = { ...defaultManifestLimits, ...limits };
  readWithPackage(file, text, /\.json$/i.test(file), { start: 0, end: text.length, line: 1 }, findings, all, out);
  return out;
}

/**
 * The package's reading of `segment` of a file (the whole file, or the documents between two
 * `---` lines, which it reads as in the whole file): its objects onto `out`, its problems as
 * findings, at the file's lines. Returns whether that is sure to be what the package makes of
 * it in the whole file: not when it has a syntax error (an unclosed quote, read alone, is an
 * error; in the whole file the package may close it with a quote after the next '---'), nor when
 * the package missed a line break in it (it does in some broken documents), as every line after
 * that is one off in the whole file.
 */
function readWithPackage(file: string, text: string, json: boolean, segment: Segment, findings: Finding[], limits: ManifestLimits, out: RawObject[]): boolean {
  const part = segment.start === 0 && segment.end === text.length ? text : text.slice(segment.start, segment.end);
  const lc = new (yaml().LineCounter)();
  const before = segment.line - 1;
  const r: DocReader = {
    file,
    text: part,
    json,
    limits,
    lc,
    lineAt: (offset) => lc.linePos(offset).line + before,
    err: (line, message, severity = 'error', column) => void findings.push({ file, line, ...(column !== undefined ? { column } : {}), severity, message }),
  };
  // JSON: duplicate keys are last-wins in every JSON reader, so they load (with a warning); YAML
  // forbids them. Merge keys are a YAML extension Kubernetes' reader (go-yaml) accepts.
  const composer = new (yaml().Composer)({ version: '1.2', schema: 'core', merge: !json, uniqueKeys: !json, keepSourceTokens: false });
  const docs = composer.compose(new (yaml().Parser)(lc.addNewLine).parse(part), false, part.length);
  let clean = true;
  for (const doc of docs as Iterable<Document.Parsed>) {
    if (doc.errors.length > 0) clean = false;
    readDocument(r, doc, out);
  }
  let breaks = 0;
  for (let nl = part.indexOf('\n'); nl >= 0; nl = part.indexOf('\n', nl + 1)) breaks++;
  return clean && lc.lineStarts.length === breaks + 1;
}

/** One document's objects (one, or a `*List`'s items) onto `out`; its problems as findings. */
function readDocument(r: DocReader, doc: Document.Parsed, out: RawObject[]): void {
  const root = doc.contents;
  if (doc.errors.length > 0) {
    reportSyntaxError(r, doc.errors[0]!);
    return;
  }
  if (root === null || (yaml().isScalar(root) && root.value === null && !root.tag)) return; // empty document
  const rootLine = root.range ? r.lineAt(root.range[0]) : 1;
  const read = boundedValue(r, doc, root, rootLine);
  if (!read) return;
  const { value } = read;
  for (const w of doc.warnings) r.err(r.lineAt(w.pos[0]), `YAML: ${w.message.split('\n')[0]!.slice(0, 200)}`, 'warning');
  if (r.json) {
    // Every JSON reader keeps the last of duplicate keys; YAML forbids them, JSON only warns.
    indexNode(root, r.lineAt, (key, line, first) => r.err(line, `duplicate key ${jsonExcerpt(key)} (first at line ${first}); ${DUPLICATE_FIX}`, 'warning'));
  }
  if (!isRecord(value)) {
    const what = Array.isArray(value) ? 'a sequence' : 'a scalar';
    r.err(rootLine, `a manifest document must be a mapping (an object with apiVersion, kind and metadata), not ${what}`);
    return;
  }
  const [docStart, , docEnd] = doc.range;
  const itemsNode = mapValue(root, 'items');
  const itemLine = (j: number): number => {
    const node = yaml().isSeq(itemsNode) ? (itemsNode.items[j] as YamlNode | undefined) : undefined;
    return node?.range ? r.lineAt(node.range[0]) : rootLine;
  };
  pushObjects(r, value, { start: docStart, end: docEnd, line: r.lineAt(docStart), rootLine }, itemLine, out);
}

/** Where a document is: its text from start to end, its first line, its root's line. */
interface DocPlace {
  readonly start: number;
  readonly end: number;
  readonly line: number;
  readonly rootLine: number;
}

/** A document's object, or a `*List`'s items (`itemLine(j)`: item j's line), onto `out`. */
function pushObjects(
  r: Pick<DocReader, 'file' | 'text' | 'json'>,
  value: Record<string, unknown>,
  at: DocPlace,
  itemLine: (j: number) => number,
  out: RawObject[],
): void {
  const kind = value['kind'];
  const items = value['items'];
  if (typeof kind === 'string' && kind.endsWith('List') && Array.isArray(items)) {
    const itemKind = kind === 'List' ? undefined : kind.slice(0, -'List'.length);
    const apiVersion = typeof value['apiVersion'] === 'string' ? value['apiVersion'] : undefined;
    items.forEach((item, j) => {
      if (item === null || item === undefined) return;
      const line = itemLine(j);
      out.push({
        file: r.file,
        line,
        obj: item,
        positions: new Positions(line, { text: r.text, start: at.start, end: at.end, firstLine: at.line, json: r.json, item: j }),
        ...(itemKind !== undefined ? { listKind: itemKind } : {}),
        ...(itemKind !== undefined && apiVersion !== undefined ? { listApiVersion: apiVersion } : {}),
      });
    });
    return;
  }
  out.push({
    file: r.file,
    line: at.rootLine,
    obj: value,
    positions: new Positions(at.rootLine, { text: r.text, start: at.start, end: at.end, firstLine: at.line, json: r.json }),
  });
}

/**
 * A YAML file's documents in the plain subset yaml-fast.ts reads, without the package's AST; the
 * others (and one too large, for the package to report) each read by the package alone;
 * undefined when the whole file must go to the package.
 */
function readFastYaml(file: string, text: string, findings: Finding[], limits: ManifestLimits): RawObject[] | undefined {
  const docs = readSimpleYaml(text);
  if (!docs) return undefined;
  const out: RawObject[] = [];
  const found: Finding[] = [];
  const r = { file, text, json: false };
  for (const d of docs) {
    let fits = d.fast;
    try {
      if (d.fast) checkSize(d.value, limits);
    } catch (e) {
      if (!(e instanceof TooBig)) throw e;
      fits = false;
    }
    if (!d.fast || !fits) {
      if (!readWithPackage(file, text, false, d.segment, found, limits, out)) return undefined;
      continue;
    }
    const lines = d.itemLines;
    pushObjects(r, d.value, { start: d.start, end: d.end, line: d.startLine, rootLine: d.rootLine }, (j) => lines?.[j] ?? d.rootLine, out);
  }
  for (const f of found) findings.push(f);
  return out;
}

/**
 * A document's first syntax error, at its line and column: the ones after it are mostly its
 * consequences. An unclosed quote or bracket is reported where it opens: the package finds it
 * where the text runs out, often many lines below the typo.
 */
function reportSyntaxError(r: DocReader, e: { pos: [number, number]; message: string }): void {
  const first = e.message
    .split('\n')[0]!
    .replace(/ at line \d+, column \d+:?$/, '')
    .slice(0, 200);
  const opener = unclosedOpener(r.text, e.pos[0], first);
  const at = opener?.at ?? e.pos[0];
  // Read from a line's start, so the column is the file's; the line is counted from where it starts.
  const { col } = r.lc.linePos(at);
  const line = r.lineAt(at);
  // The reader recurses per nesting level: a document nested deeper than the stack allows is
  // reported here rather than crashing.
  const reason = /Maximum call stack/.test(first) ? 'nested too deeply (thousands of levels); flatten it' : `${first}${opener?.note ?? ''}`;
  r.err(line, `YAML syntax error at line ${line}, column ${col}: ${reason}; ${SYNTAX_FIX}`, 'error', col);
}

/**
 * The opening quote or bracket an error about a missing closing one is about (the package's
 * messages "Missing closing "quote" and "... must end with a ]"), searched back from where the
 * package stopped; undefined for other errors, or when there is none to find.
 */
function unclosedOpener(text: string, from: number, message: string): { at: number; note: string } | undefined {
  const end = Math.min(from, text.length);
  const quote = /^Missing closing (["'])quote/.exec(message)?.[1];
  if (quote !== undefined) {
    for (let i = end - 1; i >= 0; i--) {
      if (text[i] !== quote) continue;
      if (quote === "'" && text[i - 1] === "'") {
        i--; // '' is a quote inside a single-quoted value
        continue;
      }
      if (quote === '"' && escapedAt(text, i)) continue;
      return { at: i, note: ' (the quoted value that starts here is never closed)' };
    }
    return undefined;
  }
  const close = /end with a ([\]}])$/.exec(message)?.[1];
  if (close === undefined) return undefined;
  const open = close === ']' ? '[' : '{';
  let depth = 0;
  for (let i = end - 1; i >= 0; i--) {
    if (text[i] === close) depth++;
    else if (text[i] === open && depth-- === 0) return { at: i, note: ` (the ${open} here is never closed)` };
  }
  return undefined;
}

/** Whether the character at `i` follows an odd number of backslashes. */
function escapedAt(text: string, i: number): boolean {
  let n = 0;
  while (i - n - 1 >= 0 && text[i - n - 1] === '\\') n++;
  return n % 2 === 1;
}

/**
 * The document's value with its aliases expanded, within the alias and size bounds (a `*List`
 * is bounded like a file, each item like an object); undefined, with a finding, when it is not.
 */
function boundedValue(r: DocReader, doc: Document.Parsed, root: YamlNode, rootLine: number): { value: unknown } | undefined {
  const { maxAliases } = r.limits;
  try {
    const value = doc.toJS({ maxAliasCount: maxAliases });
    checkSize(value, r.limits);
    return { value };
  } catch (e) {
    const m = (e as Error).message;
    if (e instanceof TooBig) r.err(rootLine, `this document ${m}`);
    else if (/Excessive alias count/.test(m)) {
      const fix = 'write the values out or raise --max-yaml-aliases';
      r.err(rootLine, `this document expands its YAML aliases more than ${maxAliases} times per anchor (an alias bomb?); ${fix}`);
    } else if (/Unresolved alias/.test(m)) {
      const alias = firstUnresolvedAlias(root);
      const line = alias?.range ? r.lineAt(alias.range[0] ?? 0) : rootLine;
      const fix = "an anchor must be defined before its alias in the same document (anchors do not cross '---')";
      r.err(line, `YAML syntax error at line ${line}: unknown alias "*${alias?.source ?? '?'}"; ${fix}`);
    } else if (e instanceof RangeError && /call stack/.test(m)) r.err(rootLine, 'this document is nested too deeply (thousands of levels); flatten it');
    else r.err(rootLine, `cannot read this document: ${m.slice(0, 200)}`);
    return undefined;
  }
}

/**
 * JSON files (what `kubectl get -o json` writes, often one List of every object) skip the YAML
 * reader: one scan (json-scan.ts) finds the List's items, their lines and duplicate keys; the
 * List's wrapper is checked with its items left out, and each item is parsed with JSON.parse
 * only when the loader reaches it, so a 50 MB List never exists as one object tree (the peak is
 * the text and one item). Field lines are found on demand from the one object's text. Returns
 * undefined when the text is not JSON the scan can place, so the YAML reader reports it with
 * its line; an item that does not parse is reported the same way, at its own lines.
 */
function parseJsonFast(
  file: string,
  text: string,
  findings: Finding[],
  limits: ManifestLimits,
  /** Read from this version of a file, which the items are read from again. */
  reread?: { version: FileVersion; onTextGone?: (bytes: number) => void },
): Iterable<RawObject> | undefined {
  const { maxObjectBytes } = limits;
  const scan = scanJson(text);
  const n = scan.itemStarts.length;
  if (scan.itemEnds.length !== n) return undefined;
  const wrapper = jsonWrapper(text, scan);
  if (!isRecord(wrapper)) return undefined;
  const kind = wrapper['kind'];
  const items = wrapper['items'];
  const isList = typeof kind === 'string' && kind.endsWith('List') && Array.isArray(items);
  if (n > 0 && (!isList || (items as unknown[]).length !== n)) return undefined;
  // Not text.search(/\S/): V8 keeps the subject of the last regex match, which would keep the
  // whole text alive after the reader let it go. The wrapper parsed, so only JSON's whitespace
  // comes before the root.
  let root = 0;
  for (let c = text.charCodeAt(0); c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = text.charCodeAt(++root));
  const offsets = [root, ...scan.duplicates.map((d) => d.first), ...scan.duplicates.map((d) => d.at), ...scan.itemStarts];
  const order = offsets.map((o, i) => [o, i] as const).sort((a, b) => a[0] - b[0]);
  const sortedLines = linesOf(
    text,
    order.map((x) => x[0]),
  );
  const lineOf: number[] = [];
  order.forEach(([, i], k) => {
    lineOf[i] = sortedLines[k]!;
  });
  const rootLine = lineOf[0]!;
  const nd = scan.duplicates.length;
  const duplicates = scan.duplicates.map((d, k): Finding => {
    const message = `duplicate key ${jsonExcerpt(d.key)} (first at line ${lineOf[1 + k]}); ${DUPLICATE_FIX}`;
    return { file, line: lineOf[1 + nd + k]!, severity: 'warning', message };
  });
  const itemKind = isList && kind !== 'List' ? (kind as string).slice(0, -'List'.length) : undefined;
  const apiVersion = typeof wrapper['apiVersion'] === 'string' ? wrapper['apiVersion'] : undefined;
  const list: JsonList = { file, starts: scan.itemStarts, ends: scan.itemEnds, lines: lineOf.slice(1 + 2 * nd), maxObjectBytes, itemKind, apiVersion };
  // Read from a file: the items are read again from it a window at a time, and the text goes
  // before the first item is read, not after the last.
  if (isList && reread && n > 0) return itemsFromFile(list, duplicates, reread.version, findings, limits, reread.onTextGone);
  for (const f of duplicates) findings.push(f);
  if (!isList) {
    if (text.length > maxObjectBytes) {
      findings.push({
        file,
        line: rootLine,
        severity: 'error',
        message: `this document is larger than ${maxObjectBytes} bytes once its aliases are expanded; shrink it or raise --max-manifest-object-bytes`,
      });
      return [];
    }
    return [
      { file, line: rootLine, obj: wrapper, positions: new Positions(rootLine, { text, start: root, end: text.length, firstLine: rootLine, json: true }) },
    ];
  }
  return jsonListItems(list, () => [text, 0], findings);
}

/**
 * The List's wrapper with every item replaced by null: valid JSON exactly when the text outside
 * the items is (each item is checked when parsed); undefined when it is not.
 */
function jsonWrapper(text: string, scan: JsonScan): unknown {
  const n = scan.itemStarts.length;
  try {
    if (n === 0) return JSON.parse(text);
    const pieces = [text.slice(0, scan.itemStarts[0])];
    for (let i = 0; i < n; i++) {
      const after = i + 1 < n ? text.slice(scan.itemEnds[i], scan.itemStarts[i + 1]) : text.slice(scan.itemEnds[i]);
      if (i + 1 < n && !/^\s*,\s*$/.test(after)) return undefined;
      pieces.push('null', after);
    }
    return JSON.parse(pieces.join(''));
  } catch {
    return undefined;
  }
}

/** A JSON List's items: where each starts and ends, and its first line. */
interface JsonList {
  readonly file: string;
  readonly starts: readonly number[];
  readonly ends: readonly number[];
  readonly lines: readonly number[];
  readonly maxObjectBytes: number;
  /** The kind and apiVersion of a `*List`, which its items inherit. */
  readonly itemKind: string | undefined;
  readonly apiVersion: string | undefined;
}

/**
 * The List's items, each parsed when the loader reaches it. `textOf(start, end)` gives a text
 * holding the item and the offset its first character has in the file.
 */
function jsonListItems(list: JsonList, textOf: (start: number, end: number) => [string, number], findings: Finding[]): Iterable<RawObject> {
  const { file, starts, ends, lines, maxObjectBytes, itemKind, apiVersion } = list;
  /** Line starts in the file's whole text (items read from memory), found forward item by item. */
  let lineStarts: { text: string; counter: LineCounter } | undefined;
  /**
   * Where the line holding `start` starts in `text`. Not a search back from each broken item: on
   * a List written on one line that runs over the whole text before it, every time.
   */
  const lineStartOf = (text: string, start: number, base: number): number => {
    if (base !== 0) return text.lastIndexOf('\n', start - 1) + 1; // a window of the file: the item alone
    if (lineStarts?.text !== text) lineStarts = { text, counter: new LineCounter(text, 1) };
    return lineStarts.counter.startOf(start);
  };
  return (function* items(): Generator<RawObject> {
    for (let j = 0; j < starts.length; j++) {
      const line = lines[j]!;
      if (ends[j]! - starts[j]! > maxObjectBytes) {
        findings.push({
          file,
          line,
          severity: 'error',
          message: `this document is larger than ${maxObjectBytes} bytes once its aliases are expanded; shrink it or raise --max-manifest-object-bytes`,
        });
        continue;
      }
      const [text, base] = textOf(starts[j]!, ends[j]!);
      const start = starts[j]! - base;
      const end = ends[j]! - base;
      let item: unknown;
      try {
        item = JSON.parse(start === 0 && end === text.length ? text : text.slice(start, end));
      } catch {
        // Not JSON: the YAML reader names the line and column (shifted to this item's lines).
        const local: Finding[] = [];
        parseManifestText(`${file}#item`, text.slice(start, end), local);
        // The item was read alone: its first line starts at the item's column in the file.
        const lineStart = lineStartOf(text, start, base);
        const itemColumn = lineStart > 0 || base === 0 ? start - lineStart + 1 : undefined;
        for (const f of local) findings.push(inFile(f, file, line, itemColumn));
        if (!local.some((f) => f.severity === 'error'))
          findings.push({ file, line, severity: 'error', message: 'this List item is not valid JSON; fix its syntax' });
        continue;
      }
      if (item === null || item === undefined) continue;
      yield {
        file,
        line,
        obj: item,
        positions: new Positions(line, { text, start, end, firstLine: line, json: true }),
        ...(itemKind !== undefined ? { listKind: itemKind } : {}),
        ...(itemKind !== undefined && apiVersion !== undefined ? { listApiVersion: apiVersion } : {}),
      };
    }
  })();
}

/**
 * A finding about a List item read alone, placed in its file: the item's first line is the file's
 * `line`, starting at `column` (undefined when not known, and the column is then left out).
 */
function inFile(f: Finding, file: string, line: number, column: number | undefined): Finding {
  const at = f.line + line - 1;
  const col = f.column === undefined || (f.line === 1 && column === undefined) ? undefined : f.line === 1 ? f.column + column! - 1 : f.column;
  const place = col !== undefined ? `line ${at}, column ${col}` : `line ${at}`;
  const message = f.message.replace(/^YAML syntax error at line \d+, column \d+:/, `YAML syntax error at ${place}:`);
  const { column: _, ...rest } = f;
  return { ...rest, file, line: at, ...(col !== undefined ? { column: col } : {}), message };
}

/** Bytes read again per read(2) of a List's file: 1 MiB, a few hundred items. */
const REREAD_WINDOW = 1 << 20;

/**
 * The items of a JSON List read again from its file, front to back, a window of bytes at a time
 * (offsets in the text are offsets in the file: one byte per character). The file must be the
 * version that was scanned (`version`, its size the text's length); one that changed since is
 * read and parsed again whole, and one that changes while its items are read is an error, as
 * what was read may mix two writings. The scan's findings (`duplicates`) are reported once the
 * file is known to be that version.
 */
function* itemsFromFile(
  list: JsonList,
  duplicates: readonly Finding[],
  version: FileVersion,
  findings: Finding[],
  limits: ManifestLimits,
  onTextGone?: (bytes: number) => void,
): Generator<RawObject> {
  const { file } = list;
  onTextGone?.(Number(version.size));
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    yield* rereadWhole(file, findings, limits);
    return;
  }
  try {
    if (!sameVersion(fstatSync(fd, { bigint: true }), version)) {
      yield* rereadWhole(file, findings, limits);
      return;
    }
    for (const f of duplicates) findings.push(f);
    let window = Buffer.allocUnsafe(REREAD_WINDOW);
    let from = 0;
    let to = 0;
    yield* jsonListItems(
      list,
      (start, end) => {
        if (end > to) {
          if (end - start > window.length) window = Buffer.allocUnsafe(end - start);
          let got = 0;
          for (let n = -1; n !== 0 && got < window.length; got += n) n = readSync(fd, window, got, window.length - got, start + got);
          from = start;
          to = start + got;
        }
        // A new string of the item's bytes alone (latin1: one byte, one character).
        return [window.toString('latin1', start - from, Math.min(end, to) - from), start];
      },
      findings,
    );
    if (!sameVersion(fstatSync(fd, { bigint: true }), version)) {
      findings.push({
        file,
        line: 0,
        severity: 'error',
        message: 'changed while it was being read, so what was read may mix two versions of it; load it again',
      });
    }
  } finally {
    closeSync(fd);
  }
}

/** A file that changed after it was scanned, read and parsed again from the start. */
function* rereadWhole(file: string, findings: Finding[], limits: ManifestLimits): Generator<RawObject> {
  const text = readManifestFile(file, findings, limits.maxFileBytes);
  if (text !== undefined) yield* parseManifestText(file, text, findings, limits);
}

/**
 * A manifest file's objects, read from disk, as parseManifestText reads them. With `onTextGone`
 * (a reader that collects its heap then), an ASCII JSON List's text goes once scanned: its items
 * are read again from the file when reached, so the text and the model built from it are never
 * held at once. That costs about 5% of the load, worth it only when the dead text is collected
 * then: V8 may otherwise keep it until the load ends.
 */
export function readManifestObjects(
  file: string,
  findings: Finding[],
  limits: Partial<ManifestLimits> = {},
  /** Told the text's size when it has gone, before the first item is read. */
  onTextGone?: (bytes: number) => void,
  /** Given the file's text as read (load.ts keeps it for the next load: admission history). */
  onText?: (text: string) => void,
): Iterable<RawObject> {
  const all = { ...defaultManifestLimits, ...limits };
  const reread = onTextGone !== undefined && JSON_FILE.test(file);
  // The version read: the same before and after reading it (else the text is read from memory).
  const before = reread ? versionOf(file) : undefined;
  const text = readManifestFile(file, findings, all.maxFileBytes);
  if (text === undefined) return [];
  onText?.(text);
  const version = before && versionOf(file);
  if (before && version && sameVersion(before, version)) {
    // Offsets in the text are offsets in the file only with one byte per character (ASCII, what
    // kubectl writes); any other text is read from memory.
    const bytes = Buffer.byteLength(text);
    if (bytes === text.length && version.size === BigInt(bytes)) {
      const fast = parseJsonFast(file, text, findings, all, { version, onTextGone });
      if (fast) return fast;
      return parseWithPackage(file, text, findings, all);
    }
  }
  return parseManifestText(file, text, findings, all);
}

function firstUnresolvedAlias(root: YamlNode): { source: string; range?: readonly number[] | null } | undefined {
  const anchors = new Set<string>();
  let found: { source: string; range?: readonly number[] | null } | undefined;
  const visit = (n: unknown): void => {
    if (found || n === null || typeof n !== 'object') return;
    if (yaml().isAlias(n)) {
      if (!anchors.has(n.source)) found = n;
      return;
    }
    const anchor = (n as { anchor?: string }).anchor;
    if (yaml().isPair(n)) {
      visit(n.key);
      visit(n.value);
      return;
    }
    if (anchor) anchors.add(anchor);
    if (yaml().isMap(n) || yaml().isSeq(n)) for (const it of n.items) visit(it);
  };
  visit(root);
  return found;
}
