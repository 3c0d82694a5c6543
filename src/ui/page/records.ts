// The Records view: namespaces, their objects (with manifest links and findings) and records, in
// one table a search box filters; arrow keys move between rows, Enter opens a row's manifest.
// The search runs on the data and draws at most ROW_LIMIT record rows: a 10k-Service cluster
// has over 100k records, more rows than a browser lays out in reasonable time.
import type { RecordsResponse, UiFinding, UiObject, UiRecord } from '../types.js';
import { el, getJson, show, sourceLink, visible } from './dom.js';

const ROW_LIMIT = 2000;

function findingsList(findings: readonly UiFinding[]): HTMLElement | undefined {
  if (findings.length === 0) return undefined;
  return el(
    'ul',
    { class: 'findings' },
    ...findings.map((f) => el('li', { class: `sev-${f.severity}` }, `${f.severity} [${f.code}] `, visible(f.message), ' ', sourceLink(f))),
  );
}

function objectRow(ns: string, o: UiObject): HTMLTableRowElement {
  return el(
    'tr',
    { class: 'obj', 'data-row': '', 'aria-label': `${o.kind} ${ns === '' ? '' : `${ns}/`}${o.name}` },
    el('td', { colspan: '4' }, el('span', { class: 'kind' }, o.kind), ' ', visible(o.name), ' ', sourceLink(o.source), findingsList(o.findings)),
  );
}

function recordRow(r: UiRecord): HTMLTableRowElement {
  return el(
    'tr',
    { class: 'rec', 'data-row': '' },
    el('td', { class: 'name' }, visible(r.name)),
    el('td', {}, r.type),
    el('td', {}, r.ttl),
    el('td', { class: 'data' }, visible(r.data)),
  );
}

/** The data with the lowercased text each search word is looked for in, made once per load. */
interface Indexed {
  ns: RecordsResponse['namespaces'][number];
  objects: { o: UiObject; text: string; records: { r: UiRecord; text: string }[] }[];
}

function index(data: RecordsResponse): Indexed[] {
  return data.namespaces.map((ns) => ({
    ns,
    objects: ns.objects.map((o) => {
      const text = `${ns.name} ${o.kind} ${o.name}`.toLowerCase();
      return { o, text, records: o.records.map((r) => ({ r, text: `${text} ${r.name} ${r.type} ${r.data}`.toLowerCase() })) };
    }),
  }));
}

/**
 * Draws the namespaces, objects and records matching `query` (every word somewhere in a record's
 * row, its object or namespace; an object matching alone is drawn without records), up to
 * ROW_LIMIT records. Returns the records matching and drawn.
 */
function draw(table: HTMLTableElement, data: Indexed[], query: string): { matched: number; drawn: number } {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  for (const b of Array.from(table.tBodies)) b.remove();
  let matched = 0;
  let drawn = 0;
  for (const { ns, objects } of data) {
    let tbody: HTMLTableSectionElement | undefined;
    for (const { o, text, records } of objects) {
      const recs = records.filter((x) => words.every((w) => x.text.includes(w)));
      if (recs.length === 0 && !words.every((w) => text.includes(w))) continue;
      matched += recs.length;
      if (drawn >= ROW_LIMIT) continue;
      if (!tbody) {
        tbody = el(
          'tbody',
          {},
          el(
            'tr',
            { class: 'ns', 'data-row': '' },
            el('th', { colspan: '4', scope: 'rowgroup' }, ns.name === '' ? '(no namespace)' : `namespace ${visible(ns.name)}`, ' ', sourceLink(ns.source)),
          ),
        );
        table.appendChild(tbody);
      }
      tbody.appendChild(objectRow(ns.name, o));
      for (const x of recs.slice(0, ROW_LIMIT - drawn)) tbody.appendChild(recordRow(x.r));
      drawn += Math.min(recs.length, ROW_LIMIT - drawn);
    }
  }
  // The table is one tab stop (its first row; the arrow keys move on), not one per link.
  for (const a of Array.from(table.querySelectorAll('a'))) a.setAttribute('tabindex', '-1');
  const rows = table.querySelectorAll('tr[data-row]');
  rows.forEach((r, i) => {
    r.setAttribute('tabindex', i === 0 ? '0' : '-1');
  });
  return { matched, drawn };
}

/** Arrow keys, Home and End move the focus between the rows; Enter opens the row's manifest link. */
function keyboard(table: HTMLTableElement): void {
  const focusRow = (r: HTMLTableRowElement | undefined): void => {
    if (!r) return;
    for (const x of table.querySelectorAll('tr[tabindex="0"]')) x.setAttribute('tabindex', '-1');
    r.setAttribute('tabindex', '0');
    r.focus();
  };
  table.addEventListener('keydown', (e) => {
    const current = (e.target as HTMLElement).closest('tr');
    if (!current?.hasAttribute('data-row')) return;
    const list = Array.from(table.querySelectorAll<HTMLTableRowElement>('tr[data-row]'));
    const i = list.indexOf(current as HTMLTableRowElement);
    if (e.key === 'ArrowDown') focusRow(list[Math.min(list.length - 1, i + 1)]);
    else if (e.key === 'ArrowUp') focusRow(list[Math.max(0, i - 1)]);
    else if (e.key === 'Home') focusRow(list[0]);
    else if (e.key === 'End') focusRow(list[list.length - 1]);
    else if (e.key === 'Enter' && e.target === current) {
      // A record row opens its object's manifest: the nearest row above it with a link.
      let r: Element | null = current;
      while (r && !r.querySelector('a.src')) r = r.previousElementSibling;
      (r?.querySelector('a.src') as HTMLAnchorElement | null)?.click();
    } else return;
    e.preventDefault();
  });
}

export async function recordsView(main: HTMLElement, keep: { query: string }): Promise<void> {
  const data = await getJson<RecordsResponse>('/api/records');
  const indexed = index(data);
  const { errors, warnings, infos } = data.summary;
  const search = el('input', { type: 'search', id: 'records-search', autocomplete: 'off', placeholder: 'name, type, data, object...' });
  search.value = keep.query;
  const count = el('span', { id: 'records-count', role: 'status', class: 'muted' });
  const table = el(
    'table',
    { id: 'records-table', 'aria-describedby': 'records-help' },
    el('caption', { class: 'muted' }, `${data.recordCount} records in ${data.zones.join(' ')}`),
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', { scope: 'col' }, 'Name'),
        el('th', { scope: 'col' }, 'Type'),
        el('th', { scope: 'col' }, 'TTL'),
        el('th', { scope: 'col' }, 'Data'),
      ),
    ),
  );
  const loose = data.findings.length > 0 ? [el('h3', {}, 'Other findings'), findingsList(data.findings)] : [];
  show(
    main,
    el('h2', {}, 'Records'),
    el('p', { class: 'muted' }, `clusterdns check: ${errors} errors, ${warnings} warnings, ${infos} notes`),
    el('div', { class: 'controls' }, el('label', { for: 'records-search' }, 'Search records '), search, ' ', count),
    el('p', { id: 'records-help', class: 'muted' }, 'Arrow keys move between rows; Enter opens the manifest.'),
    table,
    ...loose,
  );
  keyboard(table);
  let pending: number | undefined;
  const apply = (): void => {
    keep.query = search.value;
    const { matched, drawn } = draw(table, indexed, search.value);
    count.textContent = drawn < matched ? `${matched} match; the first ${drawn} shown: narrow the search` : `${matched} shown`;
  };
  search.addEventListener('input', () => {
    // One draw per pause in the typing, not per key, on a large cluster.
    if (pending !== undefined) clearTimeout(pending);
    pending = window.setTimeout(apply, indexed.length > 50 ? 150 : 0);
  });
  apply();
}
