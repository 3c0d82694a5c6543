// Building the DOM: every value is a text node or an attribute (never HTML parsed from data), so
// whatever a manifest holds (`<script>`, quotes, control characters) is shown as written.

export type Child = Node | string | number | undefined | false;

/** An element with attributes (set with setAttribute) and children (strings become text nodes). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) e.setAttribute(k, v);
  append(e, ...children);
  return e;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === undefined || c === false) continue;
    parent.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

/** Control characters shown as visible escapes: a manifest value may hold any of them. */
export function visible(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The link to a manifest file's line, as the read-only manifest view shows it. */
export function sourceLink(source: { file: string; line: number } | undefined): HTMLElement | undefined {
  if (!source || source.file === '' || source.file.startsWith('(') || source.file.startsWith('<')) return undefined;
  const href = `/manifest?file=${encodeURIComponent(source.file)}&line=${source.line}`;
  return el('a', { href, class: 'src' }, `${visible(source.file)}:${source.line}`);
}

export async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url, { headers: { accept: 'application/json' } });
  const body = (await res.json()) as T | { error: string };
  if (!res.ok) throw new Error((body as { error?: string }).error ?? `${res.status}`);
  return body as T;
}

/** Replaces the contents of `main` with `children`. */
export function show(main: HTMLElement, ...children: Child[]): void {
  main.replaceChildren();
  append(main, ...children);
}
