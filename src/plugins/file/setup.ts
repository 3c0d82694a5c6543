// `file DBFILE [ZONES...] { reload DURATION; fallthrough [ZONES...] }` -> a validated FileConfig
// (CoreDNS's plugin/file/setup.go rules), and the registration: load the zone file for each
// origin, start the reload loop. A zone that does not load stops the server with the file, line
// and reason.
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { Directive } from '../../chain/corefile.js';
import { OptionReader } from '../../chain/option-reader.js';
import type { PluginDefinition } from '../../chain/registry.js';
import { CorefileError } from '../../chain/corefile.js';
import { ZoneFileError } from '../../dns/zonefile.js';
import { isSubdomain } from '../../pkg/names.js';
import { FilePlugin, loadZones, type Loaded } from './plugin.js';
import { FileSet } from './set.js';
import type { FileConfig } from './config.js';

function parseFile(d: Directive, blockZones: readonly string[]): FileConfig {
  const r: OptionReader = OptionReader.of(d).arity(1, Infinity, 'file DBFILE [ZONES...]', 'file db.example.org example.org');
  const db = r.arg(0)!;
  // Relative to the Corefile, as the kubernetes plugin's manifests, so a repository's Corefile
  // and zone files travel together (CoreDNS: relative to the `root` plugin's directory or cwd).
  const file = isAbsolute(db) || !existsSync(d.file) ? resolve(db) : resolve(dirname(d.file), db);
  const zones = r.zones(1, blockZones);
  if (new Set(zones).size !== zones.length) r.fail(`zone listed twice (${zones.join(' ')})`);
  const cfg: FileConfig = { file, zones, reloadMs: 60_000 };
  r.block(
    {
      reload: (o) => {
        cfg.reloadMs = o.arity(1, 1, 'reload DURATION', 'reload 30s').duration(0, '', { examples: '30s, 1m30s or 0 to disable' });
      },
      fallthrough: (o) => {
        cfg.fallthrough = o.fallthrough();
      },
      // Accepted and ignored by CoreDNS since 1.7 ("remove soon"); kept for old Corefiles.
      upstream: () => undefined,
    },
    { unsupported: { reload_by_mtime: 'the zone file is reloaded when its SOA serial changes' } },
  );
  return cfg;
}

/**
 * Zones of a file directive outside its server block: CoreDNS loads them all the same
 * (OriginsFromArgsOrServerBlock), but no query for them reaches the plugin. Worth a warning.
 */
function zonesOutsideBlock(cfg: FileConfig, blockZones: readonly string[]): string[] {
  return cfg.zones.filter((z) => !blockZones.some((b) => isSubdomain(z, b)));
}

/** The zones of `cfg`, or a CorefileError at the zone file's line (the directive's when unreadable). */
function loadZonesOrFail(d: Directive, cfg: FileConfig): Loaded {
  try {
    return loadZones(cfg);
  } catch (err) {
    if (err instanceof ZoneFileError) {
      // Line 0 means the file as a whole (unreadable): point at the directive instead.
      if (err.line === 0) throw new CorefileError(d.file, d.line, `file: ${err.message.replace(/^.*?:0: /, `${err.file}: `)}`);
      throw new CorefileError(err.file, err.line, err.reason);
    }
    throw err;
  }
}

export const filePlugin: PluginDefinition = {
  name: 'file',
  setup(d, ctx) {
    const cfg = parseFile(d, ctx.zones);
    const loaded = loadZonesOrFail(d, cfg);
    const log = ctx.log.child({ plugin: 'file' });
    for (const z of zonesOutsideBlock(cfg, ctx.zones)) {
      const why = `file zone ${z} is not inside the server block's zones (${ctx.zones.join(' ')}); queries for it never reach the plugin`;
      log.warn({ file: d.file, line: d.line }, why);
    }
    const plugin = new FilePlugin(cfg, loaded, { log, dataChanged: ctx.invalidate, metrics: ctx.metrics });
    for (const [origin, zone] of loaded.zones) {
      log.info({ zone: origin, file: cfg.file, serial: zone.serial, records: zone.records.length, reload: cfg.reloadMs / 1000 }, 'zone loaded');
    }
    ctx.metrics.recordLoad({ plugin: 'file', zones: cfg.zones, records: plugin.records().length });
    plugin.startReload();
    return plugin;
  },
  // One zone file per line, several lines per block, as in CoreDNS.
  setupAll(ds, ctx) {
    const built: FilePlugin[] = [];
    try {
      for (const d of ds) built.push(filePlugin.setup(d, ctx) as FilePlugin);
    } catch (err) {
      // The zones loaded so far have their reload loops running: stop them.
      for (const p of built) p.close();
      throw err;
    }
    return new FileSet(built);
  },
};
