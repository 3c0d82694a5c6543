#!/usr/bin/env node
// Cost of k8s_gateway's data on a large edge (from dist/): one Gateway, ROUTES HTTPRoutes of
// HOSTS hostnames each (route attachment had been quadratic in the host names),
// and one route with 64k hostnames. For each case: the manifest load (read, admission and the
// edge model's route attachment) and the host index built from it, in ms.
// Usage: node bench/edge.js [ROUTES=4000] [HOSTS=16] [ONE_ROUTE_HOSTS=65536] [--dist DIR]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './lib.js';
import { edgeManifests } from './gen-edge.js';

const args = process.argv.slice(2);
const distAt = args.indexOf('--dist');
const dist = distAt >= 0 ? path.resolve(args.splice(distAt, 2)[1]) : path.join(ROOT, 'dist');
const routes = Number(args[0] ?? 4000);
const hosts = Number(args[1] ?? 16);
const oneRouteHosts = Number(args[2] ?? 65536);

const { loadManifests } = await import(pathToFileURL(path.join(dist, 'cluster/load.js')).href);
const hostsModule = await import(pathToFileURL(path.join(dist, 'plugins/k8s_gateway/hosts.js')).href);

const cfg = {
  zones: ['example.com.'],
  resources: ['HTTPRoute'],
  ingressClasses: [],
  gatewayClasses: [],
  ttl: 60,
  apex: 'dns1.kube-system',
  secondary: '',
  watchMs: 0,
};

function run(label, n, h) {
  const dir = mkdtempSync(path.join(tmpdir(), 'edge-bench-'));
  try {
    const file = path.join(dir, 'routes.yaml');
    writeFileSync(file, edgeManifests(n, h));
    let t = performance.now();
    const { model } = loadManifests([file]);
    const loadMs = performance.now() - t;
    t = performance.now();
    // Older builds had no indexHosts: the index was a class built from the model.
    if (hostsModule.indexHosts) hostsModule.indexHosts(model, cfg);
    else new hostsModule.HostIndex(model, cfg);
    const indexMs = performance.now() - t;
    const served = model.edge.routeHosts.length;
    console.log(`${label}: ${n} routes x ${h} hostnames: ${served} route hosts; load ${loadMs.toFixed(0)} ms, index ${indexMs.toFixed(0)} ms`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

run('many routes', routes, hosts);
run('one route', 1, oneRouteHosts);
