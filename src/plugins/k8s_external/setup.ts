// `k8s_external [ZONE...] { apex APEX; ttl TTL; headless; fallthrough [ZONE...] }`, parsed as
// CoreDNS's plugin/k8s_external/setup.go does.
import type { Directive } from '../../chain/corefile.js';
import { CorefileError } from '../../chain/corefile.js';
import { zoneArgs } from '../../chain/zones.js';

export interface K8sExternalConfig {
  /** Zones answered, lowercased and fully qualified (the block's when none are given). */
  zones: string[];
  /** Label(s) under each zone where the name server records live (default `dns`). */
  apex: string;
  ttl: number;
  headless: boolean;
  /** undefined: no fallthrough; []: every zone; else the listed zones. */
  fallthrough?: string[];
}

const OPTIONS = ['apex', 'ttl', 'headless', 'fallthrough'];

export function parseK8sExternal(d: Directive, blockZones: readonly string[]): K8sExternalConfig {
  const fail = (line: number, reason: string): never => {
    throw new CorefileError(d.file, line, `k8s_external: ${reason}`);
  };
  const cfg: K8sExternalConfig = { zones: d.args.length > 0 ? zoneArgs(d.args, d) : [...blockZones], apex: 'dns', ttl: 5, headless: false };
  for (const o of d.block ?? []) {
    switch (o.name) {
      case 'ttl': {
        if (o.args.length === 0) fail(o.line, 'ttl needs a value in seconds (0 to 3600)');
        const t = Number(o.args[0]);
        if (!/^-?\d+$/.test(o.args[0]!)) fail(o.line, `ttl "${o.args[0]}" is not an integer`);
        if (t < 0 || t > 3600) fail(o.line, `ttl must be in range [0, 3600]: ${t}`);
        cfg.ttl = t;
        break;
      }
      case 'apex':
        if (o.args.length === 0) fail(o.line, 'apex needs a name, e.g. apex dns');
        cfg.apex = o.args[0]!.toLowerCase().replace(/\.$/, '');
        break;
      case 'headless':
        cfg.headless = true;
        break;
      case 'fallthrough':
        cfg.fallthrough = zoneArgs(o.args, o);
        break;
      default:
        fail(o.line, `unknown property '${o.name}'; valid options: ${OPTIONS.join(', ')}`);
    }
  }
  return cfg;
}
