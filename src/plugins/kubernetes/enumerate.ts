// Every (name, type) the kubernetes plugin holds records for, so `clusterdns records` can ask
// the real query path for each and print exactly what the server answers. Pod names under
// `pods insecure` are unbounded (any IP) and so are not listed; `pods verified` lists the pods.
import type { ListedQuestion } from '../../chain/plugin.js';
import { ipToReverseName, isIPv4 } from '../../pkg/ip.js';
import { isReverse, isSubdomain } from '../../pkg/names.js';
import type { KubernetesConfig } from './config.js';
import type { KubernetesStore } from './store.js';

export interface Question {
  name: string;
  type: string;
}

/** The questions with the zone each belongs to: the longest of the plugin's zones holding it. */
export function listQuestions(cfg: KubernetesConfig, store: KubernetesStore): ListedQuestion[] {
  return [...questions(cfg, store)];
}

export function enumerateQuestions(cfg: KubernetesConfig, store: KubernetesStore): Question[] {
  const out: Question[] = [];
  for (const q of questions(cfg, store)) out.push({ name: q.name, type: q.type });
  return out;
}

/**
 * listQuestions one question at a time: a 100k-endpoint cluster asks hundreds of thousands of
 * names, which `clusterdns records` answers as they come instead of holding them all.
 */
export function* questions(cfg: KubernetesConfig, store: KubernetesStore): Generator<ListedQuestion, void, undefined> {
  const longestFirst = [...cfg.zones].sort((a, b) => b.length - a.length);
  const longest = (name: string): string => longestFirst.find((z) => isSubdomain(name, z))!;
  const forward = cfg.zones.filter((z) => !isReverse(z));
  const reverseZones = cfg.zones.filter((z) => !forward.includes(z));
  const ips = new Set<string>();
  for (const zone of forward) {
    const at = (rel: string): string => (zone === '.' ? `${rel}.` : `${rel}.${zone}`);
    // Every name below is inside `zone`: it is their zone unless another zone lies inside it.
    const nested = cfg.zones.some((z) => z !== zone && isSubdomain(z, zone));
    const q = (name: string, type: string): ListedQuestion => ({ name, type, zone: nested ? longest(name) : zone });
    yield q(zone, 'SOA');
    yield q(zone, 'NS');
    yield q(at('dns-version'), 'TXT');
    const ns = at('ns.dns');
    yield q(ns, 'A');
    yield q(ns, 'AAAA');
    if (cfg.multicluster.includes(zone)) {
      for (const si of store.imports.values()) {
        const base = `${si.name}.${si.namespace}.svc`;
        const name = at(base);
        yield q(name, 'A');
        yield q(name, 'AAAA');
        yield q(name, 'SRV');
        for (const slice of store.importSlicesOf(si.namespace, si.name)) {
          for (const a of slice.addresses) yield q(at(`${a.name}.${slice.cluster ?? ''}.${base}`), isIPv4(a.ip) ? 'A' : 'AAAA');
        }
      }
      continue;
    }
    for (const svc of store.services.values()) {
      if (!store.namespaceExposed(svc.namespace)) continue;
      // at(`${label}.${base}`) is `${label}.${name}` for every label.
      const name = at(`${svc.name}.${svc.namespace}.svc`);
      if (svc.type === 'ExternalName') {
        yield q(name, 'CNAME');
        continue;
      }
      yield q(name, 'A');
      yield q(name, 'AAAA');
      yield q(name, 'SRV');
      const slices = store.slicesOf(svc.namespace, svc.name);
      const ports = svc.headless ? slices.flatMap((s) => s.ports) : svc.ports;
      const named = new Set<string>();
      for (const p of ports) if (p.name !== '') named.add(`_${p.name.toLowerCase()}._${p.protocol.toLowerCase()}`);
      for (const p of named) yield q(`${p}.${name}`, 'SRV');
      for (const slice of slices) {
        for (const a of slice.addresses) {
          yield q(`${a.name}.${name}`, isIPv4(a.ip) ? 'A' : 'AAAA');
          ips.add(a.ip);
        }
      }
      if (!svc.headless) for (const ip of svc.clusterIPs) ips.add(ip);
    }
    if (cfg.pods === 'verified') {
      for (const pod of store.verifiedPods()) {
        const label = pod.podIP!.includes(':') ? pod.podIP!.replaceAll(':', '-') : pod.podIP!.replaceAll('.', '-');
        yield q(at(`${label}.${pod.namespace}.pod`), isIPv4(pod.podIP!) ? 'A' : 'AAAA');
      }
    }
  }
  for (const ip of ips) {
    const name = ipToReverseName(ip);
    if (reverseZones.some((z) => isSubdomain(name, z))) yield { name, type: 'PTR', zone: longest(name) };
  }
  for (const zone of reverseZones) yield { name: zone, type: 'SOA', zone: longest(zone) };
}
