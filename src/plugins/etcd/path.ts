// SkyDNS key layout (CoreDNS plugin/etcd/msg/path.go): a name's labels reversed under a prefix,
// `a.b.skydns.local.` -> `/skydns/local/skydns/b/a`.

/** Labels of a fully qualified name, leftmost first; [] for the root. */
function labels(name: string): string[] {
  const trimmed = name.endsWith('.') ? name.slice(0, -1) : name;
  return trimmed === '' ? [] : trimmed.split('.');
}

/** Joins path segments as Go's path.Join does for these inputs: no doubled or trailing slashes. */
function join(prefix: string, segs: readonly string[]): string {
  const head = '/' + prefix.replace(/^\/+|\/+$/g, '');
  const parts = segs.filter((s) => s !== '');
  return parts.length === 0 ? head : `${head}/${parts.join('/')}`;
}

/** The etcd key of a name (msg.Path). `prefix` is the plugin's `path`, with or without slashes. */
export function namePath(name: string, prefix: string): string {
  return join(prefix, labels(name).reverse());
}

/**
 * msg.PathWithWildcard: the key of a name cut before its first `*` or `any` label, and whether
 * it was cut (the caller then filters the subtree by the name's labels).
 */
export function pathWithWildcard(name: string, prefix: string): { path: string; star: boolean } {
  const l = labels(name).reverse();
  const i = l.findIndex((x) => x === '*' || x === 'any');
  if (i < 0) return { path: join(prefix, l), star: false };
  return { path: join(prefix, l.slice(0, i)), star: true };
}

/** msg.Domain: the name of a key, the first segment (the prefix) dropped; fully qualified. */
export function keyDomain(key: string): string {
  const l = key.split('/');
  if (l[l.length - 1] === '') l.pop();
  // l[0] is '' (leading slash), l[1] the prefix's first segment.
  const segs = l.slice(2).reverse();
  return segs.length === 0 ? '.' : segs.join('.') + '.';
}
