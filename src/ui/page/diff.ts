// The Diff view: `clusterdns diff --output json` (from /api/diff) as tables, one per namespace,
// one row per record set added, removed or changed (old -> new data, TTL, the object and its
// file:line), then the findings that appear and disappear. A file:line is relative to its side's
// tree (OLD for a removed set or a finding that disappears): it links to the manifest view when
// /api/diff-sources says the page serves that file (NEW's always, OLD's only when they are
// loaded too), and is text with a title saying why otherwise.
import type { DiffChange, DiffFinding, DiffResponse, DiffSourcesResponse, InfoResponse } from '../types.js';
import { el, getJson, show, visible } from './dom.js';

const SIGN = { added: '+', removed: '-', changed: '~' } as const;

type Side = 'old' | 'new';

/** A side's file:line: a link to the manifest view when the page serves the file, else text saying why not. */
function sourceOf(sources: DiffSourcesResponse, labels: { old: string; new: string }, side: Side, file: string, line: number): HTMLElement {
  const text = `${visible(file)}:${line}`;
  const served = Object.hasOwn(sources[side], file) ? sources[side][file] : undefined;
  if (served !== undefined) return el('a', { class: 'src', href: `/manifest?file=${encodeURIComponent(served)}&line=${line}` }, text);
  const why =
    side === 'old'
      ? `In OLD (${visible(labels.old)}): this page serves only the manifests it loads, NEW's, so OLD's files are not shown.`
      : 'Not a manifest file this page serves.';
  return el('span', { class: 'unserved', title: why }, text);
}

function dataCell(side: DiffChange['old']): HTMLTableCellElement {
  return el('td', { class: 'data' }, side ? visible(side.data.join('\n')) : '');
}

function ttlText(c: DiffChange): string {
  if (c.old && c.new && c.old.ttl !== c.new.ttl) return `${c.old.ttl} -> ${c.new.ttl}`;
  return String((c.new ?? c.old)?.ttl ?? '');
}

function changeRow(c: DiffChange, src: (side: Side, file: string, line: number) => HTMLElement): HTMLTableRowElement {
  const object = c.object ? `${c.object.kind} ${c.object.namespace ? `${c.object.namespace}/` : ''}${c.object.name}` : '';
  return el(
    'tr',
    { class: `change change-${c.change}`, 'data-change': c.change },
    el('td', { 'aria-label': c.change, title: c.change }, SIGN[c.change]),
    el('td', { class: 'name' }, visible(c.name)),
    el('td', {}, c.type),
    dataCell(c.old),
    dataCell(c.new),
    el('td', {}, ttlText(c)),
    el('td', { class: 'object' }, visible(object)),
    el('td', { class: 'src mono' }, c.source ? src(c.change === 'removed' ? 'old' : 'new', c.source.file, c.source.line) : ''),
  );
}

function findingItem(f: DiffFinding, src: (file: string, line: number) => HTMLElement): HTMLLIElement {
  // A finding of no file (a usage error) has no place to show.
  const where = f.file === '' ? '' : el('span', { class: 'mono muted' }, src(f.file, f.line));
  return el('li', { class: `sev-${f.severity}` }, `${f.severity} [${f.code}] `, visible(f.message), ' ', where);
}

function findingsSection(title: string, id: string, list: readonly DiffFinding[], src: (file: string, line: number) => HTMLElement): HTMLElement[] {
  if (list.length === 0) return [];
  return [el('h3', {}, title), el('ul', { id, class: 'findings' }, ...list.map((f) => findingItem(f, src)))];
}

export async function diffView(main: HTMLElement): Promise<void> {
  const res = await fetch('/api/diff', { headers: { accept: 'application/json' } });
  if (res.status === 404) {
    show(main, el('h2', {}, 'Diff'), el('p', { id: 'diff-empty' }, 'No diff: this page was started with one manifest tree.'));
    return;
  }
  const body = (await res.json()) as DiffResponse | { error: string };
  if (!res.ok || 'error' in body) throw new Error('error' in body ? body.error : `${res.status}`);
  const d = body;
  const sources = await getJson<DiffSourcesResponse>('/api/diff-sources');
  const src = (side: Side, file: string, line: number): HTMLElement => sourceOf(sources, d, side, file, line);
  const s = d.summary;
  const summary = `${s.added} added, ${s.removed} removed, ${s.changed} changed; findings: ${s.findingsAppeared} appeared, ${s.findingsDisappeared} disappeared`;
  const table = el('table', { id: 'diff-table' });
  table.appendChild(
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        ...['', 'name', 'type', 'old', 'new', 'TTL', 'object', 'source'].map((h) =>
          el('th', { scope: 'col' }, h === '' ? el('span', { class: 'skip' }, 'change') : h),
        ),
      ),
    ),
  );
  for (const ns of d.namespaces) {
    const body = el('tbody', { 'data-namespace': ns.namespace });
    body.appendChild(el('tr', { class: 'ns' }, el('th', { colspan: '8', scope: 'rowgroup' }, ns.namespace === '' ? '(no namespace)' : visible(ns.namespace))));
    for (const c of ns.changes) body.appendChild(changeRow(c, src));
    table.appendChild(body);
  }
  show(
    main,
    el('h2', {}, 'Diff'),
    el('p', { class: 'mono' }, `${visible(d.old)} -> ${visible(d.new)}`),
    el('p', { id: 'diff-summary' }, summary),
    d.namespaces.length > 0 ? table : el('p', {}, 'No record set changed.'),
    ...findingsSection('Findings that appear', 'findings-appeared', d.findings.appeared, (file, line) => src('new', file, line)),
    ...findingsSection('Findings that disappear', 'findings-disappeared', d.findings.disappeared, (file, line) => src('old', file, line)),
  );
}

/** The note in the header when the page has a diff: which tree Records and Resolve show. */
export async function treeNote(note: HTMLElement): Promise<void> {
  const info = await getJson<InfoResponse>('/api/info');
  if (info.diff) note.textContent = `Records and Resolve show NEW (${visible(info.diff.new)}); Diff compares it with OLD (${visible(info.diff.old)}).`;
}
