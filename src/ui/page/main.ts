// The page: picks the view from the location (/manifest, or the hash of /), draws it, and draws it
// again when the server says the manifests changed (server-sent events on /api/events).
import type { ChangeEvent } from '../types.js';
import { diffView, treeNote } from './diff.js';
import { el, show, visible } from './dom.js';
import { manifestView } from './manifest.js';
import { recordsView } from './records.js';
import { resolveView } from './resolve.js';

const main = document.getElementById('main') as HTMLElement;
const status = document.getElementById('status') as HTMLElement;
const keep = { query: '' };

type View = 'records' | 'resolve' | 'diff' | 'manifest';

function current(): { view: View; params: URLSearchParams } {
  if (location.pathname === '/manifest') return { view: 'manifest', params: new URLSearchParams(location.search) };
  const hash = location.hash.slice(1);
  const q = hash.indexOf('?');
  const name = q < 0 ? hash : hash.slice(0, q);
  const params = new URLSearchParams(q < 0 ? '' : hash.slice(q + 1));
  return { view: name === 'resolve' || name === 'diff' ? name : 'records', params };
}

async function draw(): Promise<void> {
  const { view, params } = current();
  for (const v of ['records', 'resolve', 'diff'] as const) {
    const a = document.getElementById(`nav-${v}`);
    if (v === view) a?.setAttribute('aria-current', 'page');
    else a?.removeAttribute('aria-current');
  }
  document.title = `clusterdns: ${view}`;
  try {
    if (view === 'manifest') await manifestView(main, params);
    else if (view === 'resolve') await resolveView(main, params);
    else if (view === 'diff') await diffView(main);
    else await recordsView(main, keep);
  } catch (e) {
    show(main, el('p', { class: 'sev-error', role: 'alert' }, visible((e as Error).message)));
  }
}

function live(): void {
  const events = new EventSource('/api/events');
  let seen: number | undefined;
  const time = (): string => new Date().toLocaleTimeString();
  events.addEventListener('hello', (e) => {
    const d = JSON.parse((e as MessageEvent<string>).data) as ChangeEvent;
    // Reconnected after a reload this page missed: draw again.
    if (seen !== undefined && d.generation !== seen) void draw();
    seen = d.generation;
    status.textContent = 'live';
  });
  events.addEventListener('change', (e) => {
    const d = JSON.parse((e as MessageEvent<string>).data) as ChangeEvent;
    seen = d.generation;
    if (!d.ok) {
      status.textContent = `manifests changed at ${time()} but did not load; showing the last good data`;
      return;
    }
    status.textContent = `updated at ${time()}`;
    void draw();
  });
  events.addEventListener('error', () => {
    status.textContent = 'disconnected; retrying';
  });
}

window.addEventListener('hashchange', () => void draw());
const note = document.getElementById('tree');
if (note) void treeNote(note).catch(() => {});
void draw();
live();
