// The defaults of the manifest feed's persisted image (feed-image.ts), apart from it so that the
// command line reads them without loading the feed.
import { homedir } from 'node:os';
import path from 'node:path';

/** Default byte budget of the image directory: the least recently used images go past it. */
export const DEFAULT_IMAGE_BUDGET_BYTES = 1024 * 1024 * 1024;

/** `${XDG_CACHE_HOME:-$HOME/.cache}/clusterdns` (a relative XDG_CACHE_HOME is ignored, as the spec says). */
export function defaultImageDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env['XDG_CACHE_HOME'];
  const cache = xdg && path.isAbsolute(xdg) ? xdg : path.join(env['HOME'] || homedir(), '.cache');
  return path.join(cache, 'clusterdns');
}
