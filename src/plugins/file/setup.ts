// `file DBFILE [ZONES...] { reload DURATION; fallthrough [ZONES...] }` -> a validated FileConfig
// (CoreDNS's plugin/file/setup.go rules).
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { Directive } from '../../chain/corefile.js';
import { forEachOption } from '../../chain/options.js';
import { zoneArgs } from '../../chain/zones.js';
import { parseGoDuration } from '../../pkg/duration.js';
import { CorefileError, excerpt } from '../../chain/corefile.js';
import { isSubdomain } from '../../pkg/names.js';

export interface FileConfig {
  /** Absolute path of the zone file. */
  file: string;
  /** Origins the file is loaded for, lowercased and fully qualified. */
  zones: string[];
  /** Milliseconds between checks of the file for changes; 0 disables (CoreDNS default 1m). */
  reloadMs: number;
  /** undefined: no fallthrough; []: every zone; else the listed zones. */
  fallthrough?: string[];
}

const OPTIONS = ['reload', 'fallthrough', 'upstream'];

export function parseFile(d: Directive, blockZones: readonly string[]): FileConfig {
  const fail = (line: number, reason: string): never => {
    throw new CorefileError(d.file, line, reason);
  };
  const [db, ...rest] = d.args;
  if (!db) fail(d.line, 'file needs the zone file: file DBFILE [ZONES...]');
  // Relative to the Corefile, as the kubernetes plugin's manifests, so a repository's Corefile
  // and zone files travel together (CoreDNS: relative to the `root` plugin's directory or cwd).
  const file = isAbsolute(db!) || !existsSync(d.file) ? resolve(db!) : resolve(dirname(d.file), db!);
  const zones = rest.length > 0 ? zoneArgs(rest, d) : [...blockZones];
  if (new Set(zones).size !== zones.length) fail(d.line, `file: zone listed twice (${zones.join(' ')})`);
  const cfg: FileConfig = { file, zones, reloadMs: 60_000 };
  forEachOption(d.block, (o) => {
    switch (o.name) {
      case 'reload': {
        if (o.args.length !== 1) fail(o.line, 'file reload: usage: reload DURATION (e.g. 30s, 1m; 0 disables)');
        const ms = parseGoDuration(o.args[0]!);
        if (ms === undefined || ms < 0) fail(o.line, `file reload: "${excerpt(o.args[0]!)}" is not a duration (e.g. 30s, 1m30s, 0 to disable)`);
        cfg.reloadMs = ms!;
        break;
      }
      case 'fallthrough':
        cfg.fallthrough = zoneArgs(o.args, o);
        break;
      case 'reload_by_mtime':
        fail(o.line, 'file reload_by_mtime is not supported: the zone file is reloaded when its SOA serial changes');
        break;
      case 'upstream':
        // Accepted and ignored by CoreDNS since 1.7 ("remove soon"); kept for old Corefiles.
        break;
      default:
        fail(o.line, `unknown file option "${excerpt(o.name)}"; valid options: ${OPTIONS.join(', ')}`);
    }
  });
  return cfg;
}

/**
 * Zones of a file directive outside its server block: CoreDNS loads them all the same
 * (OriginsFromArgsOrServerBlock), but no query for them reaches the plugin. Worth a warning.
 */
export function zonesOutsideBlock(cfg: FileConfig, blockZones: readonly string[]): string[] {
  return cfg.zones.filter((z) => !blockZones.some((b) => isSubdomain(z, b)));
}
