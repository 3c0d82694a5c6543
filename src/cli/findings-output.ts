// The formats `clusterdns check --output` writes: text lines for people, JSON for scripts and
// SARIF 2.1.0 for code-scanning services that annotate pull requests. Every format holds the same
// findings in the same order, with paths relative to the current directory.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FindingObject } from '../cluster/check.js';
import type { Finding } from '../cluster/model/finding.js';
import { codeDescription } from './finding-codes.js';

export type OutputFormat = 'text' | 'json' | 'sarif';
export const OUTPUT_FORMATS: readonly OutputFormat[] = ['text', 'json', 'sarif'];

export type { FindingObject };

/** A finding as reported: every one has a code and a path relative to the current directory. */
export interface ReportFinding {
  readonly file: string;
  readonly line: number;
  readonly column?: number;
  readonly severity: Finding['severity'];
  readonly code: string;
  readonly message: string;
  readonly object?: FindingObject;
}

export interface Summary {
  readonly errors: number;
  readonly warnings: number;
  readonly infos: number;
}

/** Bumped when a field of the JSON output changes meaning or goes away (new fields do not). */
export const JSON_OUTPUT_VERSION = 1;

/**
 * Names that are not paths: the built-in Corefile, "<model>" for findings about what no file
 * holds. They are printed as they are and get no SARIF location.
 */
const isPseudoPath = (file: string): boolean => file === '' || file.startsWith('(') || file.startsWith('<');

/**
 * `file` relative to `cwd` ("." for cwd itself) with '/' separators, as a repository checkout
 * names its files; absolute when outside `cwd`, where a chain of "../" would name it less clearly
 * (and code scanning could not place it anyway).
 */
export function relativePath(file: string, cwd = process.cwd()): string {
  if (isPseudoPath(file)) return file;
  const abs = path.resolve(cwd, file);
  const rel = path.relative(cwd, abs);
  if (rel === '') return '.';
  if (rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) return abs;
  return rel.split(path.sep).join('/');
}

/** Severity first would split a file's findings; file, line, column, then severity and code. */
const SEVERITY_RANK: Record<Finding['severity'], number> = { error: 0, warning: 1, info: 2 };

export function compareFindings(a: ReportFinding, b: ReportFinding): number {
  if (a.file !== b.file) return a.file < b.file ? -1 : 1;
  return (
    a.line - b.line ||
    (a.column ?? 0) - (b.column ?? 0) ||
    SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity] ||
    (a.code < b.code ? -1 : a.code > b.code ? 1 : 0) ||
    (a.message < b.message ? -1 : a.message > b.message ? 1 : 0)
  );
}

export function summarize(findings: readonly ReportFinding[]): Summary {
  let errors = 0;
  let warnings = 0;
  let infos = 0;
  for (const f of findings) {
    if (f.severity === 'error') errors++;
    else if (f.severity === 'warning') warnings++;
    else infos++;
  }
  return { errors, warnings, infos };
}

/** "file:line:col", "file:line", or "file" for a finding about a whole path (line 0). */
export function placeText(f: Pick<ReportFinding, 'file' | 'line' | 'column'>): string {
  if (f.line <= 0) return f.file;
  return f.column !== undefined && f.column > 0 ? `${f.file}:${f.line}:${f.column}` : `${f.file}:${f.line}`;
}

/** One line per finding, then the counts (and `note`, e.g. that no manifests were given). */
export function formatText(findings: readonly ReportFinding[], summary: Summary, note = ''): string {
  const lines = findings.map((f) => `${placeText(f)}: ${f.severity}: ${f.message} [${f.code}]`);
  const infos = summary.infos > 0 ? `, ${summary.infos} info(s)` : '';
  lines.push(`${summary.errors} error(s), ${summary.warnings} warning(s)${infos}${note}`);
  return `${lines.join('\n')}\n`;
}

/** The JSON document: keys in a fixed order, absent fields left out (never null). */
export function formatJson(findings: readonly ReportFinding[], summary: Summary): string {
  const doc = {
    version: JSON_OUTPUT_VERSION,
    findings: findings.map((f) => ({
      file: f.file,
      line: f.line,
      ...(f.column !== undefined ? { column: f.column } : {}),
      severity: f.severity,
      code: f.code,
      message: f.message,
      ...(f.object ? { object: { kind: f.object.kind, namespace: f.object.namespace, name: f.object.name } } : {}),
    })),
    summary: { errors: summary.errors, warnings: summary.warnings, infos: summary.infos },
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}

const SARIF_LEVEL: Record<Finding['severity'], 'error' | 'warning' | 'note'> = { error: 'error', warning: 'warning', info: 'note' };

/** A path as a URI reference: a relative one percent-encoded segment by segment, an absolute one a file: URI. */
const uriOf = (file: string): string => (path.isAbsolute(file) ? pathToFileURL(file).href : file.split('/').map(encodeURIComponent).join('/'));

/**
 * A SARIF 2.1.0 log (OASIS, sarif-v2.1.0): one run, the rules being the codes that occur (a code
 * has the severity of its first finding as its default level), one result per finding. Locations
 * are relative URIs (file: URIs outside the current directory); code-scanning services read them
 * against the repository root, so run the check from there.
 */
export function formatSarif(findings: readonly ReportFinding[], toolVersion: string): string {
  const ruleIndex = new Map<string, number>();
  const rules: { id: string; shortDescription: { text: string }; defaultConfiguration: { level: string } }[] = [];
  for (const f of [...findings].sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0))) {
    if (ruleIndex.has(f.code)) continue;
    ruleIndex.set(f.code, rules.length);
    rules.push({ id: f.code, shortDescription: { text: codeDescription(f.code) }, defaultConfiguration: { level: SARIF_LEVEL[f.severity] } });
  }
  const results = findings.map((f) => {
    const region = f.line > 0 ? { region: { startLine: f.line, ...(f.column !== undefined && f.column > 0 ? { startColumn: f.column } : {}) } } : {};
    const locations = isPseudoPath(f.file) ? [] : [{ physicalLocation: { artifactLocation: { uri: uriOf(f.file) }, ...region } }];
    return {
      ruleId: f.code,
      ruleIndex: ruleIndex.get(f.code)!,
      level: SARIF_LEVEL[f.severity],
      message: { text: f.message },
      ...(locations.length > 0 ? { locations } : {}),
    };
  });
  const log = {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: { driver: { name: 'clusterdns', version: toolVersion, rules } },
        // Columns as the text shows them: characters of the line (a tab is one).
        columnKind: 'utf16CodeUnits',
        results,
      },
    ],
  };
  return `${JSON.stringify(log, null, 2)}\n`;
}
