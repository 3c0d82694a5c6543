// `hosts [FILE [ZONES...]] { INLINE; ttl SECONDS; no_reverse; reload DURATION; fallthrough [ZONES...] }`
// -> a validated HostsConfig, following CoreDNS's plugin/hosts/setup.go.
import fs from 'node:fs';
import path from 'node:path';
import type { Directive } from '../../chain/corefile.js';
import { CorefileError } from '../../chain/corefile.js';
import { OptionReader } from '../../chain/option-reader.js';
import type { PluginDefinition } from '../../chain/registry.js';
import { canonicalIp } from '../../pkg/ip.js';
import { HostsPlugin } from './plugin.js';
import type { HostsConfig } from './config.js';

function parseHostsDirective(d: Directive, blockZones: readonly string[]): HostsConfig {
  const r = OptionReader.of(d);
  const file = r.arg(0);
  const cfg: HostsConfig = {
    // Relative to the Corefile, as the file plugin's zone files (CoreDNS: `root` or the cwd).
    path: file === undefined ? '/etc/hosts' : path.isAbsolute(file) || !fs.existsSync(d.file) ? path.resolve(file) : path.resolve(path.dirname(d.file), file),
    // Normalised as CoreDNS's OriginsFromArgsOrServerBlock: a CIDR means its reverse zones.
    origins: r.zones(1, blockZones),
    inline: [],
    ttl: 3600,
    autoReverse: true,
    reloadMs: 5000,
  };
  r.block(
    {
      ttl: (o) => {
        cfg.ttl = o.arity(1, 1, 'ttl SECONDS', 'ttl 3600').ttl(0, { min: 1, max: 65535 });
      },
      no_reverse: (o) => {
        o.noArgs();
        cfg.autoReverse = false;
      },
      reload: (o) => {
        cfg.reloadMs = o.arity(1, 1, 'reload DURATION', 'reload 10s').duration(0, '', { examples: '300ms, 5s or 0 to disable' });
      },
      fallthrough: (o) => {
        cfg.fallthrough = o.fallthrough();
      },
    },
    {
      // Before `fallthrough`, other lines are inline hosts entries (CoreDNS). clusterdns also
      // rejects a line that is neither an option nor `IP NAME...`, instead of ignoring a typo.
      other: (o) => {
        if (cfg.fallthrough !== undefined || !canonicalIp(o.name.replace(/%.*$/, '')) || o.count === 0) return false;
        o.noBlock();
        cfg.inline.push([o.name, ...o.args].join(' '));
        return true;
      },
      otherLines: 'a hosts entry `IP NAME...` before fallthrough',
    },
  );
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
