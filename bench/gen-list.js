#!/usr/bin/env node
// Writes one `kubectl get -A -o json`-style List: SERVICES Services and as many EndpointSlices
// with ENDPOINTS ready endpoints each, in NAMESPACES namespaces, with the fields a real API server
// returns and DNS never reads (uid, resourceVersion, annotations, owner references, status), so
// the loader is measured on what users feed it. managedFields only with --managed-fields (kubectl
// hides them by default since 1.21). With --pods, one Pod per endpoint as well.
// With --yaml, the List as `kubectl get -A -o yaml` prints it (sigs.k8s.io/yaml over go-yaml v2:
// keys sorted, 2-space indentation, sequences at their key's column, strings quoted only where a
// plain scalar would read as something else), and the fields `kubectl apply` and the API server
// add that JSON benches leave out: a `kubectl.kubernetes.io/last-applied-configuration` literal
// block on Namespaces and Services and, with --managed-fields, fieldsV1 with `f:`, `.` and
// `k:{...}` keys. --kubectl adds those fields to the JSON output too (the same List as --yaml);
// without it or --yaml the JSON is what it always was, so other benches' inputs do not change.
// The JSON is written one item a line; --compact writes it all on one line (`jq -c`), --pretty
// indented 4 spaces a level (`kubectl get -o json`): the same List, in other bytes.
// Also writes OUT.names.json: { hits: [...], namespaces: [...] } for the query generators.
// Usage: node bench/gen-list.js OUT SERVICES ENDPOINTS [NAMESPACES] [--pods] [--managed-fields]
//          [--yaml | --kubectl] [--compact | --pretty]
import fs from 'node:fs';

const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const withPods = process.argv.includes('--pods');
const withManaged = process.argv.includes('--managed-fields');
const asYaml = process.argv.includes('--yaml');
const asKubectl = asYaml || process.argv.includes('--kubectl');
const compact = process.argv.includes('--compact');
const pretty = process.argv.includes('--pretty');
const [out, servicesArg, endpointsArg, nsArg] = args;
if (!out || !servicesArg || !endpointsArg) {
  console.error('usage: node bench/gen-list.js OUT SERVICES ENDPOINTS [NAMESPACES] [--pods] [--managed-fields] [--yaml | --kubectl] [--compact | --pretty]');
  process.exit(2);
}
const services = Number(servicesArg);
const perService = Number(endpointsArg);
const namespaces = Number(nsArg ?? Math.max(1, Math.round(services / 100)));

const uid = (n) => `${((n * 2654435761) >>> 0).toString(16).padStart(8, '0')}-1f2e-4d3c-8b7a-${n.toString(16).padStart(12, '0')}`;
const created = '2026-11-02T10:04:05Z';
const managed = (manager, fields) =>
  !withManaged
    ? undefined
    : [
        {
          manager,
          operation: 'Update',
          apiVersion: 'v1',
          time: created,
          fieldsType: 'FieldsV1',
          fieldsV1: asKubectl && fields ? fields : { 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'f:ports': {} } },
        },
      ];
// What the API server records per field manager: `f:NAME` per field, `.` for the field itself,
// `k:{...}` for a list item by its merge keys (JSON of them, keys sorted).
const fieldSet = (obj) => {
  const out = { '.': {} };
  for (const [k, v] of Object.entries(obj)) out[`f:${k}`] = typeof v === 'object' && v !== null && !Array.isArray(v) ? fieldSet(v) : {};
  return out;
};
const portFields = (ports, keys) => {
  const out = { '.': {} };
  for (const p of ports) out[`k:${JSON.stringify(Object.fromEntries(keys.map((k) => [k, p[k]])))}`] = fieldSet(p);
  return out;
};
// The last-applied-configuration annotation: the applied manifest as compact JSON with sorted keys
// (Go's encoding of a map) and a final newline, which kubectl prints as a `|` block.
const sortedJson = (v) =>
  Array.isArray(v)
    ? `[${v.map(sortedJson).join(',')}]`
    : typeof v === 'object' && v !== null
      ? `{${Object.keys(v)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${sortedJson(v[k])}`)
          .join(',')}}`
      : JSON.stringify(v);
const lastApplied = (manifest) => (!asKubectl ? undefined : { 'kubectl.kubernetes.io/last-applied-configuration': `${sortedJson(manifest)}\n` });
const podFields = (ip) => ({
  'f:status': {
    'f:conditions': { 'k:{"type":"Ready"}': { '.': {}, 'f:status': {}, 'f:type': {} } },
    'f:phase': {},
    'f:podIP': {},
    'f:podIPs': { '.': {}, [`k:{"ip":"${ip}"}`]: { '.': {}, 'f:ip': {} } },
  },
});
// 10.96.0.0/12 for services, 10.128.0.0/9 for endpoints: room for 100k+ of each.
const svcIp = (i) => `10.${96 + ((i >> 16) & 15)}.${(i >> 8) & 255}.${i & 255}`;
const podIp = (i) => `10.${128 + ((i >> 16) & 127)}.${(i >> 8) & 255}.${i & 255}`;

// go-yaml v2's key order: by character, except that runs of digits compare as numbers and a
// letter sorts after anything else at the first difference.
const isLetter = (c) => /\p{L}/u.test(c);
const isDigit = (c) => c >= '0' && c <= '9';
const keyLess = (a, b) => {
  const ar = [...a];
  const br = [...b];
  for (let i = 0; i < ar.length && i < br.length; i++) {
    if (ar[i] === br[i]) continue;
    const al = isLetter(ar[i]);
    const bl = isLetter(br[i]);
    if (al && bl) return ar[i] < br[i];
    if (al || bl) return bl;
    let an = 0;
    let bn = 0;
    if (ar[i] === '0' || br[i] === '0') {
      for (let j = i - 1; j >= 0 && isDigit(ar[j]); j--) {
        if (ar[j] !== '0') {
          an = 1;
          bn = 1;
          break;
        }
      }
    }
    let ai = i;
    let bi = i;
    for (; ai < ar.length && isDigit(ar[ai]); ai++) an = an * 10 + Number(ar[ai]);
    for (; bi < br.length && isDigit(br[bi]); bi++) bn = bn * 10 + Number(br[bi]);
    if (an !== bn) return an < bn;
    if (ai !== bi) return ai < bi;
    return ar[i] < br[i];
  }
  return ar.length < br.length;
};
const sortKeys = (keys) => keys.sort((a, b) => (keyLess(a, b) ? -1 : keyLess(b, a) ? 1 : 0));
// Strings go-yaml v2 would read back as another type (timestamps too) are double-quoted; those a
// plain scalar cannot hold (indicators, ': ', ' #', edge spaces) are single-quoted; several lines
// are a literal block.
const NOT_STRING =
  /^(?:|~|null|Null|NULL|[yYnN]|yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|<<|[-+]?(?:0b[01_]+|0x[0-9a-fA-F_]+|0[0-7_]+|[0-9][0-9_]*|[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?|(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?)|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt ].*)?)$/;
const NOT_PLAIN = /^(?:[-?:](?:\s|$)|[,[\]{}#&*!|>'"%@`])|^(?:---|\.\.\.)|:(?:\s|$)|\s#|^\s|\s$|[^\x20-\x7e]/;
const scalarYaml = (v) => {
  if (v === null) return 'null';
  if (typeof v !== 'string') return String(v);
  if (NOT_STRING.test(v)) return JSON.stringify(v);
  return NOT_PLAIN.test(v) ? `'${v.replaceAll("'", "''")}'` : v;
};
const isMapping = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
const defined = (o) => sortKeys(Object.keys(o).filter((k) => o[k] !== undefined));
/** `v` as the value after "key:" or "-", indented `ind` (the key's column). */
const yamlValue = (v, ind, inSeq) => {
  if (typeof v === 'string' && v.includes('\n')) {
    const chomp = !v.endsWith('\n') ? '-' : v.endsWith('\n\n') ? '+' : '';
    const body = v.endsWith('\n') ? v.slice(0, -1) : v;
    const pad = ' '.repeat(ind + 2);
    return ` |${chomp}\n${body
      .split('\n')
      .map((l) => (l === '' ? '' : pad + l))
      .join('\n')}\n`;
  }
  if (Array.isArray(v)) return v.length === 0 ? ' []\n' : `\n${yamlSeq(v, ind)}`;
  if (isMapping(v)) {
    const keys = defined(v);
    if (keys.length === 0) return ' {}\n';
    return inSeq ? ` ${yamlMap(v, ind + 2, keys).slice(ind + 2)}` : `\n${yamlMap(v, ind + 2, keys)}`;
  }
  return ` ${scalarYaml(v)}\n`;
};
const yamlMap = (o, ind, keys = defined(o)) => keys.map((k) => `${' '.repeat(ind)}${scalarYaml(k)}:${yamlValue(o[k], ind, false)}`).join('');
// Sequences sit at their key's column ("- " style); a mapping item starts on the dash's line.
const yamlSeq = (a, ind) =>
  a.map((e) => `${' '.repeat(ind)}-${Array.isArray(e) && e.length > 0 ? ` ${yamlSeq(e, ind + 2).slice(ind + 2)}` : yamlValue(e, ind, true)}`).join('');

const fd = fs.openSync(out, 'w');
// The JSON layouts: what opens the List, goes between items, closes it; how an item is written.
const PRETTY_ITEM = '        '; // items sit two levels in: { "items": [ ...
const layout = compact
  ? { open: '{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":[', between: ',', close: ']}\n', item: (o) => JSON.stringify(o) }
  : pretty
    ? {
        open: '{\n    "apiVersion": "v1",\n    "items": [\n',
        between: ',\n',
        close: '\n    ],\n    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n',
        item: (o) => PRETTY_ITEM + JSON.stringify(o, null, 4).replaceAll('\n', `\n${PRETTY_ITEM}`),
      }
    : {
        open: '{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":[\n',
        between: ',\n',
        close: '\n]}\n',
        item: (o) => JSON.stringify(o),
      };
fs.writeSync(fd, asYaml ? 'apiVersion: v1\nitems:\n' : layout.open);
let first = true;
const emit = (obj) => {
  fs.writeSync(fd, asYaml ? yamlSeq([obj], 0) : (first ? '' : layout.between) + layout.item(obj));
  first = false;
};
for (let n = 0; n < namespaces; n++) {
  const annotations = lastApplied({ apiVersion: 'v1', kind: 'Namespace', metadata: { annotations: {}, name: `ns-${n}` } });
  emit({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: `ns-${n}`,
      uid: uid(1e7 + n),
      resourceVersion: String(100 + n),
      creationTimestamp: created,
      labels: { 'kubernetes.io/metadata.name': `ns-${n}` },
      annotations,
    },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  });
}
const hits = [];
let ep = 1;
for (let s = 0; s < services; s++) {
  const ns = `ns-${s % namespaces}`;
  const name = `svc-${s}`;
  hits.push(`${name}.${ns}`);
  const labels = { app: name, 'app.kubernetes.io/managed-by': 'Helm' };
  const ports = [
    { name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 },
    { name: 'metrics', port: 9090, protocol: 'TCP', targetPort: 9090 },
  ];
  const applied = lastApplied({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { annotations: {}, labels, name, namespace: ns },
    spec: { ports, selector: { app: name } },
  });
  const annotations = { 'meta.helm.sh/release-name': name, 'meta.helm.sh/release-namespace': ns, ...applied };
  const fields = {
    'f:metadata': { 'f:annotations': fieldSet(annotations), 'f:labels': fieldSet(labels) },
    'f:spec': { 'f:ports': portFields(ports, ['port', 'protocol']), 'f:selector': {} },
  };
  emit({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name,
      namespace: ns,
      uid: uid(s),
      resourceVersion: String(1000 + s),
      creationTimestamp: created,
      labels,
      annotations,
      managedFields: managed('helm', fields),
    },
    spec: {
      clusterIP: svcIp(s + 16),
      clusterIPs: [svcIp(s + 16)],
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      internalTrafficPolicy: 'Cluster',
      sessionAffinity: 'None',
      type: 'ClusterIP',
      selector: { app: name },
      ports,
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
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: podName,
          namespace: ns,
          uid: uid(5e6 + ep),
          resourceVersion: String(2e6 + ep),
          creationTimestamp: created,
          labels: { app: name, 'pod-template-hash': '7d9f8b6c5' },
          managedFields: managed('kubelet', podFields(podIp(ep))),
        },
        spec: {
          containers: [{ name: 'main', image: 'nginx:1.27', ports: [{ containerPort: 8080, name: 'http', protocol: 'TCP' }] }],
          nodeName: `node-${ep % 200}`,
          dnsPolicy: 'ClusterFirst',
          restartPolicy: 'Always',
        },
        status: { phase: 'Running', podIP: podIp(ep), podIPs: [{ ip: podIp(ep) }], conditions: [{ type: 'Ready', status: 'True' }] },
      });
    }
  }
  const sliceFields = {
    'f:addressType': {},
    'f:endpoints': {},
    'f:metadata': {
      'f:annotations': { '.': {}, 'f:endpoints.kubernetes.io/last-change-trigger-time': {} },
      'f:generateName': {},
      'f:labels': { '.': {}, 'f:endpointslice.kubernetes.io/managed-by': {}, 'f:kubernetes.io/service-name': {} },
      'f:ownerReferences': { '.': {}, [`k:{"uid":"${uid(s)}"}`]: {} },
    },
    'f:ports': {},
  };
  emit({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${name}-abcde`,
      namespace: ns,
      uid: uid(2e6 + s),
      resourceVersion: String(3e6 + s),
      creationTimestamp: created,
      generateName: `${name}-`,
      labels: { 'kubernetes.io/service-name': name, 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' },
      annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': created },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name, uid: uid(s), controller: true, blockOwnerDeletion: true }],
      managedFields: managed('kube-controller-manager', sliceFields),
    },
    addressType: 'IPv4',
    endpoints,
    ports: [
      { name: 'http', port: 8080, protocol: 'TCP' },
      { name: 'metrics', port: 9090, protocol: 'TCP' },
    ],
  });
}
fs.writeSync(fd, asYaml ? 'kind: List\nmetadata:\n  resourceVersion: ""\n' : layout.close);
fs.closeSync(fd);
fs.writeFileSync(`${out}.names.json`, JSON.stringify({ hits, namespaces: Array.from({ length: namespaces }, (_, n) => `ns-${n}`) }));
console.log(JSON.stringify({ out, bytes: fs.statSync(out).size, namespaces, services, endpoints: ep - 1, pods: withPods ? ep - 1 : 0 }));
