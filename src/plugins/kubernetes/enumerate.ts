// Every (name, type) the kubernetes plugin holds records for, so `clusterdns records` can ask
// the real query path for each and print exactly what the server answers. Pod names under
// `pods insecure` are unbounded (any IP) and so are not listed; `pods verified` lists the pods.
import type { ListedQuestion } from '../../chain/plugin.js';
import { ipToReverseName, isIPv4 } from '../../pkg/ip.js';
import { isReverse, isSubdomain } from '../../pkg/names.js';
import type { KubernetesConfig } from './setup.js';
import type { KubernetesStore } from './store.js';

export interface Question {
  name: string;
  type: string;
}

/** The questions with the zone each belongs to: the longest of the plugin's zones holding it. */
export function listQuestions(cfg: KubernetesConfig, store: KubernetesStore): ListedQuestion[] {
  // Longest zone first, found once: a 100k-endpoint cluster asks hundreds of thousands of names.
  const longestFirst = [...cfg.zones].sort((a, b) => b.length - a.length);
  const questions = enumerateQuestions(cfg, store);
  const out: ListedQuestion[] = new Array(questions.length);
  for (let i = 0; i < questions.length; i++) {
    const q = questions[i]!;
    out[i] = { name: q.name, type: q.type, zone: longestFirst.find((z) => isSubdomain(q.name, z))! };
  }
  return out;
}

export function enumerateQuestions(cfg: KubernetesConfig, store: KubernetesStore): Question[] {
  const out: Question[] = [];
  const forward = cfg.zones.filter((z) => !isReverse(z));
  const reverseZones = cfg.zones.filter((z) => !forward.includes(z));
  const ips = new Set<string>();
  for (const zone of forward) {
    const at = (rel: string): string => (zone === '.' ? `${rel}.` : `${rel}.${zone}`);
    out.push({ name: zone, type: 'SOA' }, { name: zone, type: 'NS' }, { name: at('dns-version'), type: 'TXT' });
    out.push({ name: at('ns.dns'), type: 'A' }, { name: at('ns.dns'), type: 'AAAA' });
    if (cfg.multicluster.includes(zone)) {
      for (const si of store.imports.values()) {
        const base = `${si.name}.${si.namespace}.svc`;
        out.push({ name: at(base), type: 'A' }, { name: at(base), type: 'AAAA' }, { name: at(base), type: 'SRV' });
        for (const slice of store.importSlicesOf(si.namespace, si.name)) {
          for (const a of slice.addresses) out.push({ name: at(`${a.name}.${slice.cluster ?? ''}.${base}`), type: isIPv4(a.ip) ? 'A' : 'AAAA' });
        }
      }
      continue;
    }
    for (const svc of store.services.values()) {
      if (!store.namespaceExposed(svc.namespace)) continue;
      const base = `${svc.name}.${svc.namespace}.svc`;
      if (svc.type === 'ExternalName') {
        out.push({ name: at(base), type: 'CNAME' });
        continue;
      }
      out.push({ name: at(base), type: 'A' }, { name: at(base), type: 'AAAA' }, { name: at(base), type: 'SRV' });
      const slices = store.slicesOf(svc.namespace, svc.name);
      const ports = svc.headless ? slices.flatMap((s) => s.ports) : svc.ports;
      const named = new Set(ports.filter((p) => p.name !== '').map((p) => `_${p.name.toLowerCase()}._${p.protocol.toLowerCase()}`));
      for (const p of named) out.push({ name: at(`${p}.${base}`), type: 'SRV' });
      for (const slice of slices) {
        for (const a of slice.addresses) {
          out.push({ name: at(`${a.name}.${base}`), type: isIPv4(a.ip) ? 'A' : 'AAAA' });
          ips.add(a.ip);
        }
      }
      if (!svc.headless) for (const ip of svc.clusterIPs) ips.add(ip);
    }
    if (cfg.pods === 'verified') {
      for (const pod of store.verifiedPods()) {
        const label = pod.podIP!.includes(':') ? pod.podIP!.replaceAll(':', '-') : pod.podIP!.replaceAll('.', '-');
        out.push({ name: at(`${label}.${pod.namespace}.pod`), type: isIPv4(pod.podIP!) ? 'A' : 'AAAA' });
      }
    }
  }
  for (const ip of ips) {
    const name = ipToReverseName(ip);
    if (reverseZones.some((z) => isSubdomain(name, z))) out.push({ name, type: 'PTR' });
  }
  for (const zone of reverseZones) out.push({ name: zone, type: 'SOA' });
  return out;
}
