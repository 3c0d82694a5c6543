// The Resolve view: pick a pod (or a namespace, libc and resolv.conf options), type a name, see
// each query the stub resolver sends, what it got, the result and the fixes. The form's values
// live in the location's hash, so a reload of the data runs the same walk again.
import type { PodsResponse, ResolveResponse } from '../types.js';
import { el, getJson, show, visible } from './dom.js';

const TYPES = ['A', 'AAAA', 'SRV', 'TXT', 'PTR', 'MX', 'CNAME', 'NS', 'SOA', 'CAA'];
const FIELDS = ['pod', 'namespace', 'libc', 'options', 'name', 'type'] as const;

function field(id: string, label: string, control: HTMLElement): HTMLElement {
  control.id = id;
  // The label beside its control, not around it: a label holding a select takes its options into its name.
  return el('div', { class: 'field' }, el('label', { for: id }, label), control);
}

function select(values: readonly (readonly [string, string])[], chosen: string): HTMLSelectElement {
  const s = el('select');
  for (const [value, text] of values) {
    const o = el('option', { value }, text);
    if (value === chosen) o.selected = true;
    s.appendChild(o);
  }
  return s;
}

function walkTable(r: ResolveResponse): HTMLElement {
  const table = el(
    'table',
    { id: 'walk' },
    el('caption', { class: 'muted' }, 'Queries sent, in order'),
    el('thead', {}, el('tr', {}, ...['#', 'Query', 'Type', 'Search domain', 'Answer'].map((h) => el('th', { scope: 'col' }, h)))),
  );
  const body = el('tbody', { class: 'timeline' });
  r.queries.forEach((q, i) => {
    const answer = q.outcome === 'answer' ? q.answers.join(', ') : q.outcome === 'other' ? q.rcode : q.outcome;
    body.appendChild(
      el(
        'tr',
        { class: `query outcome-${q.outcome}` },
        el('td', {}, i + 1),
        el('td', { class: 'name' }, visible(q.name), q.malformed ? ' (malformed packet)' : ''),
        el('td', {}, q.type),
        el('td', { class: 'mono' }, q.searchDomain === '' ? '(as typed)' : visible(q.searchDomain)),
        el('td', { class: `outcome outcome-${q.outcome}` }, visible(answer)),
      ),
    );
  });
  if (r.queries.length === 0) body.appendChild(el('tr', {}, el('td', { colspan: '5' }, 'No query sent')));
  table.appendChild(body);
  return table;
}

function resultOf(r: ResolveResponse): HTMLElement[] {
  const res = r.result;
  const src = res.source === 'hosts' ? ' (from the hosts file)' : res.source === 'numeric' ? ' (numeric address)' : '';
  const out: HTMLElement[] = [
    el(
      'p',
      { class: 'result', id: 'walk-result' },
      `Result: ${res.status}`,
      res.error ? ` (${res.error})` : '',
      res.answers.length > 0 ? ` ${visible(res.answers.join(' '))}` : '',
      src,
    ),
    el(
      'p',
      { class: 'muted' },
      `${r.queries.length} ${r.queries.length === 1 ? 'query' : 'queries'}, ${r.roundTrips} round ${r.roundTrips === 1 ? 'trip' : 'trips'}`,
      r.withoutAutopath ? `; ${r.withoutAutopath.queries} without autopath` : '',
    ),
  ];
  if (r.fixes.length > 0) out.push(el('h3', {}, 'Fixes'), el('ul', { id: 'walk-fixes' }, ...r.fixes.map((f) => el('li', {}, visible(f)))));
  return out;
}

export async function resolveView(main: HTMLElement, params: URLSearchParams): Promise<void> {
  const pods = await getJson<PodsResponse>('/api/pods');
  const v = (k: (typeof FIELDS)[number]): string => params.get(k) ?? '';
  const pod = select(
    [
      ['', '(a new pod, in the namespace below)'],
      ...pods.pods.map((p) => [`${p.namespace}/${p.name}`, `${p.namespace}/${p.name}${p.derived ? ' (derived)' : ''}`] as const),
    ],
    v('pod'),
  );
  const namespace = select(
    pods.namespaces.map((n) => [n, n] as const),
    v('namespace') || 'default',
  );
  const libc = select(
    pods.libcs.map((l) => [l, l] as const),
    v('libc') || 'glibc',
  );
  const options = el('input', { type: 'text', placeholder: 'e.g. ndots:2', autocomplete: 'off' });
  options.value = v('options');
  const name = el('input', { type: 'text', required: '', autocomplete: 'off', spellcheck: 'false' });
  name.value = v('name');
  const type = select([['', 'A+AAAA (getaddrinfo)'], ...TYPES.map((t) => [t, t] as const)], v('type'));
  const form = el(
    'form',
    { class: 'controls', id: 'resolve-form' },
    field('resolve-pod', 'Pod', pod),
    field('resolve-namespace', 'Namespace (new pod)', namespace),
    field('resolve-libc', 'libc', libc),
    field('resolve-options', "resolv.conf options (instead of the pod's)", options),
    field('resolve-name', 'Name', name),
    field('resolve-type', 'Type', type),
    el('button', { type: 'submit' }, 'Resolve'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const q = new URLSearchParams();
    const values: Record<(typeof FIELDS)[number], string> = {
      pod: pod.value,
      namespace: pod.value === '' ? namespace.value : '',
      libc: libc.value,
      options: options.value,
      name: name.value,
      type: type.value,
    };
    for (const k of FIELDS) if (values[k] !== '') q.set(k, values[k]);
    location.hash = `resolve?${q.toString()}`;
  });
  // The namespace is that of a new pod: a chosen pod has its own.
  const syncNamespace = (): void => {
    namespace.disabled = pod.value !== '';
  };
  pod.addEventListener('change', syncNamespace);
  syncNamespace();
  const out = el('section', { id: 'walk-out', 'aria-live': 'polite' });
  show(main, el('h2', {}, 'Resolve'), form, out);
  if (v('name') === '') {
    name.focus();
    return;
  }
  const q = new URLSearchParams();
  for (const k of FIELDS) if (v(k) !== '') q.set(k, v(k));
  try {
    const r = await getJson<ResolveResponse>(`/api/resolve?${q.toString()}`);
    const conf = el(
      'details',
      {},
      el('summary', {}, `resolv.conf of ${visible(r.from)}`),
      el('pre', {}, visible(r.resolvConf)),
      el('p', { class: 'muted' }, visible(r.parsed)),
    );
    out.replaceChildren(
      el('p', { id: 'walk-call' }, `${r.libc} ${visible(r.call)}, from ${visible(r.from)}`),
      conf,
      ...r.notes.map((n) => el('p', { class: 'muted' }, `note: ${visible(n)}`)),
      walkTable(r),
      ...resultOf(r),
    );
  } catch (e) {
    out.replaceChildren(el('p', { class: 'sev-error', role: 'alert' }, visible((e as Error).message)));
  }
}
