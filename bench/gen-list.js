#!/usr/bin/env node
// Writes one `kubectl get -A -o json`-style List: SERVICES Services and as many EndpointSlices
// with ENDPOINTS ready endpoints each, in NAMESPACES namespaces, with the fields a real API server
// returns and DNS never reads (uid, resourceVersion, annotations, owner references, status), so
// the loader is measured on what users feed it. managedFields only with --managed-fields (kubectl
// hides them by default since 1.21). With --pods, one Pod per endpoint as well.
// Also writes OUT.names.json: { hits: [...], namespaces: [...] } for the query generators.
// Usage: node bench/gen-list.js OUT.json SERVICES ENDPOINTS [NAMESPACES] [--pods] [--managed-fields]
import fs from 'node:fs';

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const withPods = process.argv.includes('--pods');
const withManaged = process.argv.includes('--managed-fields');
const [out, servicesArg, endpointsArg, nsArg] = args;
if (!out || !servicesArg || !endpointsArg) {
  console.error('usage: node bench/gen-list.js OUT.json SERVICES ENDPOINTS [NAMESPACES] [--pods] [--managed-fields]');
  process.exit(2);
}
const services = Number(servicesArg);
const perService = Number(endpointsArg);
const namespaces = Number(nsArg ?? Math.max(1, Math.round(services / 100)));

const uid = (n) => `${(n * 2654435761 >>> 0).toString(16).padStart(8, '0')}-1f2e-4d3c-8b7a-${n.toString(16).padStart(12, '0')}`;
const created = '2026-11-02T10:04:05Z';
const managed = (manager) => !withManaged ? undefined : [
  { manager, operation: 'Update', apiVersion: 'v1', time: created, fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'f:ports': {} } } },
];
// 10.96.0.0/12 for services, 10.128.0.0/9 for endpoints: room for 100k+ of each.
const svcIp = (i) => `10.${96 + ((i >> 16) & 15)}.${(i >> 8) & 255}.${i & 255}`;
const podIp = (i) => `10.${128 + ((i >> 16) & 127)}.${(i >> 8) & 255}.${i & 255}`;

const fd = fs.openSync(out, 'w');
fs.writeSync(fd, '{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":[\n');
let first = true;
const emit = (obj) => {
  fs.writeSync(fd, (first ? '' : ',\n') + JSON.stringify(obj));
  first = false;
};
for (let n = 0; n < namespaces; n++) {
  emit({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `ns-${n}`, uid: uid(1e7 + n), resourceVersion: String(100 + n), creationTimestamp: created, labels: { 'kubernetes.io/metadata.name': `ns-${n}` } }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } });
}
const hits = [];
let ep = 1;
for (let s = 0; s < services; s++) {
  const ns = `ns-${s % namespaces}`;
  const name = `svc-${s}`;
  hits.push(`${name}.${ns}`);
  emit({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name, namespace: ns, uid: uid(s), resourceVersion: String(1000 + s), creationTimestamp: created,
      labels: { app: name, 'app.kubernetes.io/managed-by': 'Helm' },
      annotations: { 'meta.helm.sh/release-name': name, 'meta.helm.sh/release-namespace': ns },
      managedFields: managed('helm'),
    },
    spec: {
      clusterIP: svcIp(s + 16), clusterIPs: [svcIp(s + 16)], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack',
      internalTrafficPolicy: 'Cluster', sessionAffinity: 'None', type: 'ClusterIP',
      selector: { app: name },
      ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 }, { name: 'metrics', port: 9090, protocol: 'TCP', targetPort: 9090 }],
    },
    status: { loadBalancer: {} },
  });
  const endpoints = [];
  for (let e = 0; e < perService; e++, ep++) {
    const podName = `${name}-7d9f8b6c5-${e.toString(36).padStart(5, 'x')}`;
    endpoints.push({
      addresses: [podIp(ep)],
      conditions: { ready: true, serving: true, terminating: false },
      nodeName: `node-${ep % 200}`,
      targetRef: { kind: 'Pod', name: podName, namespace: ns, uid: uid(5e6 + ep) },
      zone: `zone-${ep % 3}`,
    });
    if (withPods) {
      emit({
        apiVersion: 'v1', kind: 'Pod',
        metadata: { name: podName, namespace: ns, uid: uid(5e6 + ep), resourceVersion: String(2e6 + ep), creationTimestamp: created, labels: { app: name, 'pod-template-hash': '7d9f8b6c5' }, managedFields: managed('kubelet') },
        spec: { containers: [{ name: 'main', image: 'nginx:1.27', ports: [{ containerPort: 8080, name: 'http', protocol: 'TCP' }] }], nodeName: `node-${ep % 200}`, dnsPolicy: 'ClusterFirst', restartPolicy: 'Always' },
        status: { phase: 'Running', podIP: podIp(ep), podIPs: [{ ip: podIp(ep) }], conditions: [{ type: 'Ready', status: 'True' }] },
      });
    }
  }
  emit({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${name}-abcde`, namespace: ns, uid: uid(2e6 + s), resourceVersion: String(3e6 + s), creationTimestamp: created, generateName: `${name}-`,
      labels: { 'kubernetes.io/service-name': name, 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' },
      annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': created },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name, uid: uid(s), controller: true, blockOwnerDeletion: true }],
      managedFields: managed('kube-controller-manager'),
    },
    addressType: 'IPv4',
    endpoints,
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }, { name: 'metrics', port: 9090, protocol: 'TCP' }],
  });
}
fs.writeSync(fd, '\n]}\n');
fs.closeSync(fd);
fs.writeFileSync(`${out}.names.json`, JSON.stringify({ hits, namespaces: Array.from({ length: namespaces }, (_, n) => `ns-${n}`) }));
console.log(JSON.stringify({ out, bytes: fs.statSync(out).size, namespaces, services, endpoints: ep - 1, pods: withPods ? ep - 1 : 0 }));
