#!/usr/bin/env node
// Writes a synthetic cluster: N namespaces, each with Deployments + ClusterIP Services and one
// StatefulSet + headless Service, so the control-plane emulation derives the pods.
// Usage: node bench/gen-cluster.js OUT_DIR SERVICES PODS [NAMESPACES]
import fs from 'node:fs';
import path from 'node:path';

const [outDir, servicesArg, podsArg, nsArg] = process.argv.slice(2);
if (!outDir || !servicesArg || !podsArg) {
  console.error('usage: node bench/gen-cluster.js OUT_DIR SERVICES PODS [NAMESPACES]');
  process.exit(2);
}
const services = Number(servicesArg);
const pods = Number(podsArg);
const namespaces = Number(nsArg ?? Math.max(1, Math.round(services / 50)));
const replicas = Math.max(0, Math.round(pods / services));

fs.mkdirSync(outDir, { recursive: true });
for (let n = 0; n < namespaces; n++) {
  const ns = `team-${n}`;
  const docs = [`apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${ns}\n  labels:\n    team: t${n % 7}\n`];
  for (let s = n; s < services; s += namespaces) {
    const app = `app-${s}`;
    const stateful = s % 10 === 0;
    docs.push(
      `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${app}\n  namespace: ${ns}\nspec:\n${stateful ? '  clusterIP: None\n' : ''}  selector:\n    app: ${app}\n  ports:\n  - name: http\n    port: 80\n    targetPort: web\n`,
      `apiVersion: apps/v1\nkind: ${stateful ? 'StatefulSet' : 'Deployment'}\nmetadata:\n  name: ${app}\n  namespace: ${ns}\nspec:\n${stateful ? `  serviceName: ${app}\n` : ''}  replicas: ${replicas}\n  selector:\n    matchLabels:\n      app: ${app}\n  template:\n    metadata:\n      labels:\n        app: ${app}\n    spec:\n      containers:\n      - name: main\n        image: nginx:1.27\n        ports:\n        - name: web\n          containerPort: 8080\n`,
    );
  }
  fs.writeFileSync(path.join(outDir, `${ns}.yaml`), docs.join('---\n'));
}
console.log(JSON.stringify({ outDir, namespaces, services, replicas, pods: services * replicas }));
