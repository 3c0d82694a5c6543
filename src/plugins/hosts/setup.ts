// `hosts [FILE [ZONES...]] { INLINE; ttl SECONDS; no_reverse; reload DURATION; fallthrough [ZONES...] }`
// -> a validated HostsConfig, following CoreDNS's plugin/hosts/setup.go.
import fs from 'node:fs';
import path from 'node:path';
import type { Directive } from '../../chain/corefile.js';
import { forEachOption } from '../../chain/options.js';
import { CorefileError, excerpt } from '../../chain/corefile.js';
import { zoneArgs } from '../../chain/zones.js';
import type { PluginDefinition } from '../../chain/registry.js';
import { canonicalIp } from '../../pkg/ip.js';
import { parseGoDuration } from '../../pkg/duration.js';
import { HostsPlugin } from './plugin.js';

export interface HostsConfig {
  /** The hosts file (default /etc/hosts; a relative path is relative to the Corefile). */
  path: string;
  /** Zones answered (lowercased, fully qualified); PTR queries are answered for any zone. */
  origins: string[];
  /** Inline entries from the block, one hosts line each. */
  inline: string[];
  ttl: number;
  autoReverse: boolean;
  /** 0 disables the periodic re-read (default 5 s). */
  reloadMs: number;
  /** undefined: no fallthrough; []: every zone; else the listed zones. */
  fallthrough?: string[];
}

const OPTIONS = ['ttl', 'no_reverse', 'reload', 'fallthrough'];

function parseHostsDirective(d: Directive, blockZones: readonly string[]): HostsConfig {
  const fail = (reason: string, at: Directive = d): never => {
    throw new CorefileError(at.file, at.line, `hosts: ${reason}`);
  };
  const [file, ...zones] = d.args;
  const cfg: HostsConfig = {
    // Relative to the Corefile, as the file plugin's zone files (CoreDNS: `root` or the cwd).
    path: file === undefined ? '/etc/hosts' : path.isAbsolute(file) || !fs.existsSync(d.file) ? path.resolve(file) : path.resolve(path.dirname(d.file), file),
    // Normalised as CoreDNS's OriginsFromArgsOrServerBlock: a CIDR means its reverse zones.
    origins: zones.length > 0 ? zoneArgs(zones, d) : [...blockZones],
    inline: [],
    ttl: 3600,
    autoReverse: true,
    reloadMs: 5000,
  };
  forEachOption(d.block, (o) => {
    switch (o.name) {
      case 'ttl': {
        if (o.args.length !== 1) fail('ttl needs a time in seconds', o);
        const n = Number(o.args[0]);
        if (!/^\d+$/.test(o.args[0]!) || n <= 0 || n > 65535) fail(`ttl "${excerpt(o.args[0]!)}" is invalid: give seconds from 1 to 65535`, o);
        cfg.ttl = n;
        break;
      }
      case 'no_reverse':
        if (o.args.length > 0) fail('no_reverse takes no arguments', o);
        cfg.autoReverse = false;
        break;
      case 'reload': {
        if (o.args.length !== 1) fail('reload needs a duration (zero seconds to disable), e.g. reload 10s', o);
        const ms = parseGoDuration(o.args[0]!);
        if (ms === undefined) fail(`invalid duration for reload "${excerpt(o.args[0]!)}" (e.g. 300ms, 5s, 1h)`, o);
        if (ms! < 0) fail(`invalid negative duration for reload "${excerpt(o.args[0]!)}"`, o);
        cfg.reloadMs = ms!;
        break;
      }
      case 'fallthrough':
        cfg.fallthrough = zoneArgs(o.args, o);
        break;
      default: {
        // Before `fallthrough`, other lines are inline hosts entries (CoreDNS). clusterdns also
        // rejects a line that is neither an option nor `IP NAME...`, instead of ignoring a typo.
        if (cfg.fallthrough !== undefined) fail(`unknown property "${excerpt(o.name)}" (inline entries must come before fallthrough); valid options: ${OPTIONS.join(', ')}`, o);
        if (!canonicalIp(o.name.replace(/%.*$/, '')) || o.args.length === 0) {
          fail(`"${excerpt([o.name, ...o.args].join(' '))}" is neither an option (${OPTIONS.join(', ')}) nor a hosts entry "IP NAME..."`, o);
        }
        if (o.block) fail(`a hosts entry takes no block`, o);
        cfg.inline.push([o.name, ...o.args].join(' '));
      }
    }
  });
  return cfg;
}

export const hostsPlugin: PluginDefinition = {
  name: 'hosts',
  setup(d, ctx) {
    const cfg = parseHostsDirective(d, ctx.zones);
    const log = ctx.log.child({ plugin: 'hosts' });
    try {
      if (fs.statSync(cfg.path).isDirectory()) log.warn({ file: cfg.path }, `hosts file ${cfg.path} is a directory`);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') log.warn({ file: cfg.path }, `hosts file does not exist: ${cfg.path}`);
      else throw new CorefileError(d.file, d.line, `hosts: unable to access hosts file "${cfg.path}": ${(err as Error).message}`);
    }
    const plugin = new HostsPlugin(cfg, { log, dataChanged: ctx.invalidate });
    log.info({ file: cfg.path, zones: cfg.origins, entries: plugin.entries }, 'hosts loaded');
    return plugin;
  },
};
