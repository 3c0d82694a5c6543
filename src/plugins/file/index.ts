// Registers the file plugin: parse its directive, load the zone file for each origin, start the
// reload loop. A zone that does not load stops the server with the file, line and reason.
import type { PluginDefinition } from '../../chain/registry.js';
import { recordLoad } from '../../metrics/index.js';
import { CorefileError } from '../../chain/corefile.js';
import { ZoneFileError } from '../../dns/zonefile.js';
import { FilePlugin, loadZones, type Loaded } from './plugin.js';
import { parseFile, zonesOutsideBlock } from './setup.js';
import { FileSet } from './set.js';

export const filePlugin: PluginDefinition = {
  name: 'file',
  setup(d, ctx) {
    const cfg = parseFile(d, ctx.zones);
    let loaded: Loaded;
    try {
      loaded = loadZones(cfg);
    } catch (err) {
      if (err instanceof ZoneFileError) {
        // Line 0 means the file as a whole (unreadable): point at the directive instead.
        if (err.line === 0) throw new CorefileError(d.file, d.line, `file: ${err.message.replace(/^.*?:0: /, `${err.file}: `)}`);
        throw new CorefileError(err.file, err.line, err.reason);
      }
      throw err;
    }
    const log = ctx.log.child({ plugin: 'file' });
    for (const z of zonesOutsideBlock(cfg, ctx.zones)) {
      log.warn({ file: d.file, line: d.line }, `file zone ${z} is not inside the server block's zones (${ctx.zones.join(' ')}); queries for it never reach the plugin`);
    }
    const plugin = new FilePlugin(cfg, loaded, { log, dataChanged: ctx.invalidate });
    for (const [origin, zone] of loaded.zones) {
      log.info({ zone: origin, file: cfg.file, serial: zone.serial, records: zone.records.length, reload: cfg.reloadMs / 1000 }, 'zone loaded');
    }
    recordLoad({ plugin: 'file', zones: cfg.zones, records: plugin.records().length });
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
