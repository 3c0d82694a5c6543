// Loads kubernetes-models' precompiled validators synchronously, each on the first object of its
// kind, so the loader stays synchronous and a process pays only for the kinds its manifests use
// (Service ~50 ms the first time, most of it @kubernetes-models/validate's formats, shared by all;
// Pod's tree ~40 ms more).
//
// The validators are ES modules only. Node >= 20.19 loads an ES module with require() (no
// top-level await in them), which is what this does, by absolute file path since the package's
// exports offer only the "import" condition. An older Node cannot: there the kinds DNS reads are
// imported up front with top-level await (below), and any other kind is known but not validated.

import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { packageKind } from './package-kinds.js';
import type { AjvValidate } from './types.js';

const require = createRequire(import.meta.url);
const canRequireEsm = (process.features as { require_module?: boolean }).require_module === true;
const loaded = new Map<string, AjvValidate | null>();

/** The validator in `schemaFile`, or undefined when it cannot be loaded synchronously. */
export function precompiledValidator(schemaFile: string): AjvValidate | undefined {
  let v = loaded.get(schemaFile);
  if (v === undefined) {
    if (!canRequireEsm) return undefined;
    try {
      const mod = require(schemaFile) as { validate?: unknown };
      v = typeof mod.validate === 'function' ? (mod.validate as AjvValidate) : null;
    } catch {
      v = null; // a broken install: the kind stays known, its objects unvalidated
    }
    loaded.set(schemaFile, v);
  }
  return v ?? undefined;
}

/** Whether `schemaFile`'s validator can be had synchronously (always, where require() loads ESM). */
export function hasPrecompiled(schemaFile: string): boolean {
  return canRequireEsm || loaded.get(schemaFile) != null;
}

/** The kinds the loader reads into DNS data, preloaded where require() cannot load ES modules. */
const DNS_KINDS: readonly (readonly [string, string, string])[] = [
  ['', 'v1', 'Service'],
  ['', 'v1', 'Endpoints'],
  ['', 'v1', 'Pod'],
  ['', 'v1', 'Namespace'],
  ['', 'v1', 'Node'],
  ['discovery.k8s.io', 'v1', 'EndpointSlice'],
  ['apps', 'v1', 'Deployment'],
  ['apps', 'v1', 'ReplicaSet'],
  ['apps', 'v1', 'StatefulSet'],
  ['apps', 'v1', 'DaemonSet'],
  ['batch', 'v1', 'Job'],
  ['batch', 'v1', 'CronJob'],
  ['networking.k8s.io', 'v1', 'Ingress'],
  ['gateway.networking.k8s.io', 'v1', 'Gateway'],
  ['gateway.networking.k8s.io', 'v1', 'HTTPRoute'],
  ['gateway.networking.k8s.io', 'v1', 'GRPCRoute'],
  ['gateway.networking.k8s.io', 'v1', 'TLSRoute'],
];

if (!canRequireEsm) {
  await Promise.all(
    DNS_KINDS.map(async ([g, v, k]) => {
      const pk = packageKind(g, v, k);
      if (pk === undefined) return;
      try {
        const mod = (await import(pathToFileURL(pk.schemaFile).href)) as { validate?: AjvValidate };
        loaded.set(pk.schemaFile, mod.validate ?? null);
      } catch {
        loaded.set(pk.schemaFile, null);
      }
    }),
  );
}
