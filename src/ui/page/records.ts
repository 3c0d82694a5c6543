// The Records view: namespaces, their objects (with manifest links and findings) and records, in
// one table a search box filters; arrow keys move between rows, Enter opens a row's manifest.
import type { RecordsResponse, UiFinding, UiObject } from '../types.js';
import { el, getJson, show, sourceLink, visible } from './dom.js';

function findingsList(findings: readonly UiFinding[]): HTMLElement | undefined {
  if (findings.length === 0) return undefined;
  return el(
    'ul',
    { class: 'findings' },
    ...findings.map((f) => el('li', { class: `sev-${f.severity}` }, `${f.severity} [${f.code}] `, visible(f.message), ' ', sourceLink(f))),
  );
}

function objectRows(ns: string, o: UiObject): HTMLTableRowElement[] {
  const label = `${o.kind} ${ns === '' ? '' : `${ns}/`}${o.name}`;
  const head = el(
    'tr',
    { class: 'obj', 'data-row': '', 'data-search': `${ns} ${o.kind} ${o.name}`.toLowerCase() },
    el('td', { colspan: '4' }, el('span', { class: 'kind' }, o.kind), ' ', visible(o.name), ' ', sourceLink(o.source), findingsList(o.findings)),
  );
  head.setAttribute('aria-label', label);
  const rows = [head];
  for (const r of o.records) {
    rows.push(
      el(
        'tr',
        { class: 'rec', 'data-row': '', 'data-search': `${r.name} ${r.type} ${r.data}`.toLowerCase() },
        el('td', { class: 'name' }, visible(r.name)),
        el('td', {}, r.type),
        el('td', {}, r.ttl),
        el('td', { class: 'data' }, visible(r.data)),
      ),
    );
  }
  return rows;
}

/** Shows the rows matching `query` (every word somewhere in the row or its object), hides the rest. */
function filter(table: HTMLTableElement, query: string): number {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  let shown = 0;
  for (const tbody of Array.from(table.tBodies)) {
    let nsShown = false;
    let objRow: HTMLTableRowElement | undefined;
    let objMatch = false;
    let objHasShown = false;
    const closeObject = (): void => {
      if (objRow) {
        objRow.hidden = !(objMatch || objHasShown);
        if (!objRow.hidden) nsShown = true;
      }
    };
    const nsText = tbody.getAttribute('data-search') ?? '';
    for (const row of Array.from(tbody.rows)) {
      if (row.classList.contains('obj')) {
        closeObject();
        objRow = row;
        objMatch = words.every((w) => `${nsText} ${row.dataset['search']}`.includes(w));
        objHasShown = false;
      } else if (row.classList.contains('rec')) {
        const text = `${nsText} ${objRow?.dataset['search'] ?? ''} ${row.dataset['search']}`;
        row.hidden = !words.every((w) => text.includes(w));
        if (!row.hidden) {
          objHasShown = true;
          shown++;
        }
      }
    }
    closeObject();
    tbody.hidden = !nsShown && words.length > 0;
  }
  return shown;
}

/** Arrow keys, Home and End move the focus between the visible rows; Enter opens the row's manifest link. */
function keyboard(table: HTMLTableElement): void {
  const rows = (): HTMLTableRowElement[] =>
    Array.from(table.querySelectorAll<HTMLTableRowElement>('tr[data-row]')).filter((r) => !r.hidden && !(r.parentElement as HTMLElement).hidden);
  const focusRow = (r: HTMLTableRowElement | undefined): void => {
    if (!r) return;
    for (const x of table.querySelectorAll('tr[tabindex="0"]')) x.setAttribute('tabindex', '-1');
    r.setAttribute('tabindex', '0');
    r.focus();
  };
  table.addEventListener('keydown', (e) => {
    const current = (e.target as HTMLElement).closest('tr');
    if (!current?.hasAttribute('data-row')) return;
    const list = rows();
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
  for (const ns of data.namespaces) {
    const tbody = el('tbody', { 'data-search': ns.name.toLowerCase() });
    tbody.appendChild(
      el(
        'tr',
        { class: 'ns', 'data-row': '' },
        el('th', { colspan: '4', scope: 'rowgroup' }, ns.name === '' ? '(no namespace)' : `namespace ${visible(ns.name)}`, ' ', sourceLink(ns.source)),
      ),
    );
    for (const o of ns.objects) for (const r of objectRows(ns.name, o)) tbody.appendChild(r);
    table.appendChild(tbody);
  }
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
  // The table is one tab stop (its rows, by the arrow keys), not one per link.
  for (const a of Array.from(table.querySelectorAll('a'))) a.setAttribute('tabindex', '-1');
  keyboard(table);
  const apply = (): void => {
    keep.query = search.value;
    count.textContent = `${filter(table, search.value)} shown`;
    const rows = Array.from(table.querySelectorAll<HTMLTableRowElement>('tr[data-row]'));
    const first = rows.find((r) => !r.hidden && !(r.parentElement as HTMLElement).hidden);
    for (const r of rows) r.setAttribute('tabindex', r === first ? '0' : '-1');
  };
  search.addEventListener('input', apply);
  apply();
}
