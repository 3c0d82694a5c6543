// Where a `manifests` path written in a Corefile points, for every reader of it: the kubernetes
// and k8s_gateway plugins and `clusterdns check`.
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';

/**
 * A `manifests` path as every command reads it: relative to the directory of the Corefile (or
 * imported file) it is written in, so a repository's Corefile and manifests travel together.
 * Paths of a Corefile given as text (no file on disk) stay as written.
 */
export function manifestPath(p: string, corefile: string): string {
  return isAbsolute(p) || !existsSync(corefile) ? p : resolve(dirname(corefile), p);
}
