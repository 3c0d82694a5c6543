// `k8s_gateway [ZONE...] { resources ...; ingressClasses ...; gatewayClasses ...; ttl TTL; apex APEX;
// secondary NS; fallthrough [ZONE...]; manifests PATH...; kubeconfig ... }`, parsed as the
// k8s_gateway plugin's setup.go (github.com/k8s-gateway/k8s_gateway) does.
import type { Directive } from '../../chain/corefile.js';
import { CorefileError } from '../../chain/corefile.js';
import { zoneArgs } from '../../chain/zones.js';
import { parseGoDuration } from '../../pkg/duration.js';
import { manifestPath } from '../kubernetes/setup.js';

export const RESOURCES = ['HTTPRoute', 'TLSRoute', 'GRPCRoute', 'Ingress', 'Service', 'DNSEndpoint'] as const;
export type Resource = (typeof RESOURCES)[number];

export interface K8sGatewayConfig {
  zones: string[];
  /** Looked up in this order; the first resource with a match answers. */
  resources: Resource[];
  ingressClasses: string[];
  gatewayClasses: string[];
  /** TTL of A, AAAA and TXT answers (default 60); SOA and NS always use 60. */
  ttl: number;
  /** Name (below each zone) of this server's own records; default `dns1.kube-system`. */
  apex: string;
  secondary: string;
  fallthrough?: string[];
  manifests?: string[];
  watchMs: number;
}

const OPTIONS = ['resources', 'ingressClasses', 'gatewayClasses', 'ttl', 'apex', 'secondary', 'fallthrough', 'manifests', 'watch', 'kubeconfig'];

export function parseK8sGateway(d: Directive, blockZones: readonly string[]): K8sGatewayConfig {
  const fail = (line: number, reason: string): never => {
    throw new CorefileError(d.file, line, `k8s_gateway: ${reason}`);
  };
  const cfg: K8sGatewayConfig = {
    zones: d.args.length > 0 ? zoneArgs(d.args, d) : [...blockZones],
    resources: ['Ingress', 'Service'],
    ingressClasses: [],
    gatewayClasses: [],
    ttl: 60,
    apex: 'dns1.kube-system',
    secondary: '',
    watchMs: 2000,
  };
  for (const o of d.block ?? []) {
    const need = (usage: string): void => {
      if (o.args.length === 0) fail(o.line, `${o.name} needs an argument; usage: ${usage}`);
    };
    switch (o.name) {
      case 'resources':
        need(`resources ${RESOURCES.join('|')}...`);
        for (const r of o.args) {
          if (!(RESOURCES as readonly string[]).includes(r)) fail(o.line, `unknown resource "${r}"; supported: ${RESOURCES.join(', ')}`);
        }
        cfg.resources = [...new Set(o.args)] as Resource[];
        break;
      case 'ingressClasses':
        need('ingressClasses CLASS...');
        cfg.ingressClasses = [...o.args];
        break;
      case 'gatewayClasses':
        need('gatewayClasses CLASS...');
        cfg.gatewayClasses = [...o.args];
        break;
      case 'ttl': {
        need('ttl SECONDS (0 to 3600)');
        const t = Number(o.args[0]);
        if (!/^-?\d+$/.test(o.args[0]!)) fail(o.line, `ttl "${o.args[0]}" is not an integer`);
        if (t < 0 || t > 3600) fail(o.line, `ttl must be in range [0, 3600]: ${t}`);
        cfg.ttl = t;
        break;
      }
      case 'apex':
        need('apex NAME (e.g. exdns-k8s-gateway.kube-system)');
        cfg.apex = o.args[0]!.toLowerCase().replace(/\.$/, '');
        break;
      case 'secondary':
        need('secondary NAME');
        cfg.secondary = o.args[0]!.toLowerCase().replace(/\.$/, '');
        break;
      case 'fallthrough':
        cfg.fallthrough = zoneArgs(o.args, o);
        break;
      case 'manifests':
        need('manifests PATH...');
        cfg.manifests = [...(cfg.manifests ?? []), ...o.args.map((p) => manifestPath(p, o.file))];
        break;
      case 'watch': {
        need('watch DURATION (e.g. 2s; 0 disables)');
        const ms = parseGoDuration(o.args[0]!);
        if (ms === undefined || ms < 0) fail(o.line, `watch: "${o.args[0]}" is not a duration; write e.g. 500ms, 2s or 0`);
        cfg.watchMs = ms!;
        break;
      }
      case 'kubeconfig':
        // The API-server connection: accepted for Corefile compatibility; clusterdns reads manifests.
        need('kubeconfig FILE [CONTEXT]');
        break;
      default:
        fail(o.line, `unknown property '${o.name}'; valid options: ${OPTIONS.join(', ')}`);
    }
  }
  return cfg;
}
