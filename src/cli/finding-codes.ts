// The codes `clusterdns check` reports: the one a finding made without a code gets (the loader's
// older findings, Corefile errors), and a short description of each code for SARIF's rules.
import type { Finding } from '../cluster/model/finding.js';

/**
 * A code for a finding that carries none, from what its message says. Findings made where a
 * code is known carry their own; this is the fallback, so that every finding has one.
 */
export function fallbackCode(f: Pick<Finding, 'file' | 'line' | 'severity' | 'message'>): string {
  const m = f.message;
  if (/^YAML syntax error\b/.test(m)) return 'yaml-syntax';
  if (/^YAML: /.test(m)) return 'yaml-warning';
  if (/^duplicate key\b/.test(m)) return 'duplicate-key';
  if (/\blarger than \d+ bytes\b|\bmore than \d+ times per anchor\b|\bnested too deeply\b/.test(m)) return 'manifest-too-large';
  if (f.line === 0 && /^(manifest path|cannot read)\b/.test(m)) return 'manifest-unreadable';
  return f.severity === 'error' ? 'manifest-error' : f.severity === 'warning' ? 'manifest-warning' : 'manifest-info';
}

/** What each code means, for SARIF's rules (a code not listed is described by its name). */
const DESCRIPTIONS: Readonly<Record<string, string>> = {
  'corefile-error': 'The Corefile cannot be read or a plugin rejects its options',
  'corefile-unknown-plugin': 'The Corefile names a plugin clusterdns does not have',
  'corefile-unbalanced-braces': "A '{' in the Corefile is never closed, or a '}' closes nothing",
  'yaml-syntax': 'A manifest is not valid YAML or JSON',
  'yaml-warning': 'The YAML reader warns about a manifest',
  'duplicate-key': 'A JSON manifest repeats a key (the last one wins)',
  'manifest-too-large': 'A manifest is over a size, alias or nesting limit',
  'manifest-unreadable': 'A manifest path cannot be read',
  'manifest-error': 'The API server would reject this object: it is not served',
  'manifest-warning': 'The object is accepted but something about it is bad for DNS',
  'manifest-info': 'Worth knowing about a manifest; never a failure',
  'kind-unused': 'Objects of a kind DNS does not use (skipped)',
  'status-filled': 'A status clusterdns filled in as a controller would',
  'status-pending': 'A status the manifest writes without an address: pending, DNS answers nothing for it',
  'selector-no-pods': "A Service's selector matches no pods, so it has no endpoints",
  'target-port-undeclared': 'A named targetPort no container of the selected pods declares',
  'invalid-dns-label': 'A name that is not a DNS label cannot be resolved',
  'externalname-ip': 'An ExternalName Service whose externalName is an IP address',
  'headless-no-ready-endpoints': 'A headless Service without ready endpoints answers NXDOMAIN',
  'unnamed-port': 'A port without a name gets no SRV record',
  'name-too-long': 'A name longer than 63 characters cannot be a DNS label',
  'deprecated-api-version': 'A removed apiVersion, read as its current one',
  'host-claimed-twice': 'A host claimed by two Ingresses or routes',
  'route-parent-missing': "A route's parent Gateway is missing",
  'route-parent-rejects': "A route's parent Gateway does not accept it",
  'route-no-parent': 'A route names no parent Gateway',
  'ingress-no-controller': 'An Ingress whose class has no controller',
  'gateway-class-missing': 'A Gateway whose GatewayClass is missing',
  'loadbalancer-pool-exhausted': 'The LoadBalancer address pool has no free address',
};

export function codeDescription(code: string): string {
  return DESCRIPTIONS[code] ?? code.replace(/-/g, ' ');
}
