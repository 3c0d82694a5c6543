#!/usr/bin/env node
// Writes a k8s_gateway edge in block YAML, as generators write it: one Gateway taking HTTPRoutes
// from every namespace (with a status address) and ROUTES HTTPRoutes of HOSTS hostnames each
// (`h<i>.r<route>.example.com`); with INGRESSES, that many Ingresses of one host each
// (`i<n>.example.com`) with a load-balancer address in their status. Used by bench/edge.js,
// bench/edge-serve.js and the edge hostile tests.
// Usage: node bench/gen-edge.js OUT|- ROUTES HOSTS [INGRESSES]
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** One Gateway taking routes from every namespace, and `n` HTTPRoutes of `h` hostnames each, as YAML. */
export function edgeManifests(n, h) {
  const parts = [
    `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: web
  namespace: default
spec:
  gatewayClassName: eg
  listeners:
    - name: http
      port: 80
      protocol: HTTP
      allowedRoutes:
        namespaces:
          from: All
status:
  addresses:
    - type: IPAddress
      value: 198.51.100.20
`,
  ];
  for (let r = 0; r < n; r++) {
    const names = [];
    for (let i = 0; i < h; i++) names.push(`    - h${i}.r${r}.example.com`);
    parts.push(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: r${r}
  namespace: default
spec:
  parentRefs:
    - name: web
  hostnames:
${names.join('\n')}
`);
  }
  return parts.join('---\n');
}

/** `n` Ingresses of one host each (`i<k>.example.com`), each with a load-balancer IP in its status, as YAML. */
export function ingressManifests(n) {
  const parts = [];
  for (let k = 0; k < n; k++) {
    parts.push(`apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: i${k}
  namespace: default
spec:
  ingressClassName: nginx
  rules:
    - host: i${k}.example.com
status:
  loadBalancer:
    ingress:
      - ip: 10.200.${(k >> 8) & 255}.${k & 255}
`);
  }
  return parts.join('---\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [out, routes, hosts, ingresses] = process.argv.slice(2);
  if (!out || !routes || !hosts) {
    console.error('usage: node bench/gen-edge.js OUT|- ROUTES HOSTS [INGRESSES]');
    process.exit(2);
  }
  let text = edgeManifests(Number(routes), Number(hosts));
  if (Number(ingresses ?? 0) > 0) text += `---\n${ingressManifests(Number(ingresses))}`;
  if (out === '-') process.stdout.write(text);
  else writeFileSync(out, text);
}
