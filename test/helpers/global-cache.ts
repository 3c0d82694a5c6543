// Vitest global setup: the whole run's XDG_CACHE_HOME is a temporary directory, removed at the
// end, so no server a test starts reads or writes the user's ~/.cache (serve keeps its manifest
// images there by default). startServer gives each server a directory of its own inside it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export default function setup(): () => void {
  const dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-test-cache-'));
  process.env.XDG_CACHE_HOME = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
