// The read-only view of one manifest file, its linked line highlighted and focused.
import type { ManifestResponse } from '../types.js';
import { el, getJson, show, visible } from './dom.js';

export async function manifestView(main: HTMLElement, params: URLSearchParams): Promise<void> {
  const file = params.get('file') ?? '';
  const line = Number(params.get('line') ?? '0');
  const data = await getJson<ManifestResponse>(`/api/manifest?file=${encodeURIComponent(file)}`);
  const list = el('ol', { class: 'source', id: 'manifest-lines' });
  let target: HTMLElement | undefined;
  data.lines.forEach((text, i) => {
    const li = el('li', { id: `L${i + 1}` }, visible(text) || '\u00a0');
    if (i + 1 === line) {
      li.classList.add('hl');
      li.setAttribute('aria-current', 'location');
      li.setAttribute('tabindex', '-1');
      target = li;
    }
    list.appendChild(li);
  });
  show(main, el('h2', {}, visible(data.file), line > 0 ? `:${line}` : ''), el('p', {}, el('a', { href: '/#records' }, 'Back to the records')), list);
  target?.scrollIntoView({ block: 'center' });
  target?.focus();
}
