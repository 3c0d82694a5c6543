// `clusterdns diff`, the output: terminal text (coloured when asked), JSON for scripts, and
// Markdown for a pull-request comment. Every format holds the same changes in the same order.
import type { DiffResult, RecordChange } from './diff-compute.js';
import type { Walk } from './diff-walk.js';
import { placeText, type ReportFinding } from './findings-output.js';

/** Bumped when a field of the JSON output changes meaning or goes away (new fields do not). */
export const DIFF_JSON_VERSION = 1;

const MARK = { added: '+', removed: '-', changed: '~' } as const;

const ANSI = { added: '32', removed: '31', changed: '33', dim: '2', bold: '1' } as const;

export function summaryText(r: DiffResult): string {
  const s = r.summary;
  return `record sets: ${s.added} added, ${s.removed} removed, ${s.changed} changed; findings: ${s.findingsAppeared} appeared, ${s.findingsDisappeared} disappeared`;
}

const nsTitle = (ns: string): string => (ns === '' ? 'no namespace (zone apex, Corefile)' : `namespace ${ns}`);

/** A record set's data and TTL, as one line shows them. */
function dataText(c: RecordChange): string {
  const join = (d: readonly string[]): string => d.join(', ');
  if (c.change === 'added') return `${join(c.new!.data)} (TTL ${c.new!.ttl})`;
  if (c.change === 'removed') return `${join(c.old!.data)} (TTL ${c.old!.ttl})`;
  const ttl = c.old!.ttl === c.new!.ttl ? `${c.new!.ttl}` : `${c.old!.ttl} -> ${c.new!.ttl}`;
  return `${join(c.old!.data)} -> ${join(c.new!.data)} (TTL ${ttl})`;
}

/** "Service shop/api (shop.yaml:4)", or undefined when no object is known. */
function originText(c: RecordChange): string | undefined {
  if (!c.object) return undefined;
  const o = c.object;
  const at = c.source ? ` (${placeText(c.source)})` : '';
  return `${o.kind} ${o.namespace === '' ? '' : `${o.namespace}/`}${o.name}${at}`;
}

const findingText = (f: ReportFinding): string => `${placeText(f)}: ${f.severity}: ${f.message} [${f.code}]`;

/** Terminal text; `color` wraps marks in ANSI colours. */
export function formatDiffText(r: DiffResult, walks: readonly Walk[], color: boolean): string {
  const paint = (code: string, s: string): string => (color ? `\x1b[${code}m${s}\x1b[0m` : s);
  const lines = [`diff ${r.old} ${r.new}: ${summaryText(r)}`];
  for (const ns of r.namespaces) {
    lines.push('', paint(ANSI.bold, nsTitle(ns.namespace)));
    for (const c of ns.changes) {
      lines.push(paint(ANSI[c.change], `  ${MARK[c.change]} ${c.name} ${c.type} ${dataText(c)}`));
      const origin = originText(c);
      if (origin) lines.push(paint(ANSI.dim, `      ${origin}`));
    }
  }
  const { appeared, disappeared } = r.findings;
  if (appeared.length > 0) {
    lines.push('', paint(ANSI.bold, 'findings appeared'));
    for (const f of appeared) lines.push(paint(ANSI.added, `  + ${findingText(f)}`));
  }
  if (disappeared.length > 0) {
    lines.push('', paint(ANSI.bold, 'findings disappeared'));
    for (const f of disappeared) lines.push(paint(ANSI.removed, `  - ${findingText(f)}`));
  }
  for (const w of walks) {
    if (w === walks[0]) lines.push('', paint(ANSI.bold, `resolve from ${w.from} (${w.libc})`));
    if (!w.differs) {
      lines.push(`  = ${w.name}: ${w.new.result} (${queries(w.new.queries.length)})`);
      continue;
    }
    lines.push(paint(ANSI.changed, `  ~ ${w.name}: ${w.old.result} (${queries(w.old.queries.length)}) -> ${w.new.result} (${queries(w.new.queries.length)})`));
    lines.push('      before:', ...w.old.queries.map((q, i) => paint(ANSI.removed, `        ${i + 1}. ${q}`)));
    lines.push('      after:', ...w.new.queries.map((q, i) => paint(ANSI.added, `        ${i + 1}. ${q}`)));
  }
  return `${lines.join('\n')}\n`;
}

const queries = (n: number): string => `${n} ${n === 1 ? 'query' : 'queries'}`;

/** The JSON document: keys in a fixed order, absent fields left out. */
export function formatDiffJson(r: DiffResult, walks: readonly Walk[]): string {
  const doc = {
    version: DIFF_JSON_VERSION,
    old: r.old,
    new: r.new,
    summary: r.summary,
    namespaces: r.namespaces.map((ns) => ({
      namespace: ns.namespace,
      changes: ns.changes.map((c) => ({
        change: c.change,
        zone: c.zone,
        name: c.name,
        type: c.type,
        ...(c.old ? { old: { ttl: c.old.ttl, data: c.old.data } } : {}),
        ...(c.new ? { new: { ttl: c.new.ttl, data: c.new.data } } : {}),
        ...(c.object ? { object: c.object } : {}),
        ...(c.source ? { source: { file: c.source.file, line: c.source.line } } : {}),
      })),
    })),
    findings: r.findings,
    ...(walks.length > 0 ? { walks } : {}),
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/**
 * Text for a Markdown table cell: one line, with the characters Markdown (or its inline HTML)
 * would read as markup escaped, so a value from a manifest shows as written and cannot break the
 * table. Line-start markup (lists, headings) cannot occur inside a row.
 */
export function mdCell(s: string): string {
  return oneLine(s).replace(/[\\`*_[\]<>&|~]/g, (c) => (c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '&' ? '&amp;' : `\\${c}`));
}

/** A value as a code span in a table cell (names, data, paths), or as escaped text when it holds a backtick. */
export function mdCode(s: string): string {
  const line = oneLine(s);
  return line.includes('`') || line === '' ? mdCell(line) : `\`${line.replace(/\|/g, '\\|')}\``;
}

const oneLine = (s: string): string => s.replace(/[\x00-\x1f\x7f]+/g, ' ');

/** Record set rows a Markdown diff shows by default: about 40 KB, under the 64 KiB a GitHub comment holds. */
export const DEFAULT_MAX_ROWS = 200;

/**
 * Markdown for a pull-request comment: a summary line, then a table per namespace, at most
 * `maxRows` record set rows in all (0: no limit); the summary counts every change.
 */
export function formatDiffMarkdown(r: DiffResult, walks: readonly Walk[], maxRows = DEFAULT_MAX_ROWS): string {
  const lines = [`**clusterdns diff** ${mdCode(r.old)} → ${mdCode(r.new)}: ${mdCell(summaryText(r))}`];
  let left = maxRows > 0 ? maxRows : Number.POSITIVE_INFINITY;
  let hidden = 0;
  for (const ns of r.namespaces) {
    if (left <= 0) {
      hidden += ns.changes.length;
      continue;
    }
    lines.push('', `#### ${mdCell(nsTitle(ns.namespace))}`, '', '| | name | type | old | new | TTL | object | source |', '|---|---|---|---|---|---|---|---|');
    for (const c of ns.changes) {
      if (left <= 0) {
        hidden++;
        continue;
      }
      left--;
      const ttl = c.old && c.new && c.old.ttl !== c.new.ttl ? `${c.old.ttl} → ${c.new.ttl}` : `${(c.new ?? c.old)!.ttl}`;
      const o = c.object;
      const cells = [
        MARK[c.change] === '-' ? '−' : MARK[c.change],
        mdCode(c.name),
        c.type,
        c.old ? c.old.data.map(mdCode).join('<br>') : '',
        c.new ? c.new.data.map(mdCode).join('<br>') : '',
        ttl,
        o ? mdCell(`${o.kind} ${o.namespace === '' ? '' : `${o.namespace}/`}${o.name}`) : '',
        c.source ? mdCode(placeText(c.source)) : '',
      ];
      lines.push(`| ${cells.join(' | ')} |`);
    }
  }
  if (hidden > 0)
    lines.push('', `_${hidden} more record set${hidden === 1 ? '' : 's'} not shown (--max-rows ${maxRows}): \`clusterdns diff\` lists them all._`);
  const { appeared, disappeared } = r.findings;
  if (appeared.length + disappeared.length > 0) {
    lines.push('', '#### findings', '', '| | severity | code | message | source |', '|---|---|---|---|---|');
    const row = (mark: string, f: ReportFinding): string => `| ${mark} | ${f.severity} | ${mdCell(f.code)} | ${mdCell(f.message)} | ${mdCode(placeText(f))} |`;
    for (const f of appeared) lines.push(row('+', f));
    for (const f of disappeared) lines.push(row('−', f));
  }
  if (walks.length > 0) {
    lines.push('', `#### resolve from ${mdCell(walks[0]!.from)} (${mdCell(walks[0]!.libc)})`, '', '| | name | before | after |', '|---|---|---|---|');
    for (const w of walks) {
      const side = (s: Walk['old']): string => `${mdCell(s.result)} (${queries(s.queries.length)})`;
      lines.push(`| ${w.differs ? '~' : '='} | ${mdCode(w.name)} | ${side(w.old)} | ${side(w.new)} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}
