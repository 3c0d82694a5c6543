// The kubernetes plugin's off-thread loader (the compiled worker in dist/, as the server runs
// it): the data it hands over equals an in-thread build, and closing the plugin stops a load
// still running instead of waiting for it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../helpers/server.js';

const dist = (p: string): string => path.join(repoRoot, 'dist', p);
type Loader = typeof import('../../src/plugins/kubernetes/loader.js');
type Setup = typeof import('../../src/plugins/kubernetes/setup.js');
type Store = typeof import('../../src/plugins/kubernetes/store.js');
type Load = typeof import('../../src/cluster/load.js');
type Model = typeof import('../../src/cluster/model.js');
type PluginMod = typeof import('../../src/plugins/kubernetes/plugin.js');

let dir: string;
let list: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-loader-'));
  list = path.join(dir, 'cluster.json');
  execFileSync(process.execPath, [path.join(repoRoot, 'bench/gen-list.js'), list, '2000', '10']);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('kubernetes loader thread', () => {
  const directive = { name: 'kubernetes', args: ['cluster.local', 'in-addr.arpa'], file: 'Corefile', line: 1, block: [{ name: 'pods', args: ['insecure'], file: 'Corefile', line: 2 }] };
  const zones = ['cluster.local.', 'in-addr.arpa.'];

  // reclaimEvery 0: a first load; 100: a load beside a serving store, collecting as it reads.
  it.each([0, 100])('hands over the same store an in-thread build makes (reclaimEvery %i)', async (reclaimEvery) => {
    const { loadOffThread } = (await import(dist('plugins/kubernetes/loader.js'))) as Loader;
    const { parseKubernetes } = (await import(dist('plugins/kubernetes/setup.js'))) as Setup;
    const { KubernetesStore } = (await import(dist('plugins/kubernetes/store.js'))) as Store;
    const { loadManifests } = (await import(dist('cluster/load.js'))) as Load;
    const { defaultClusterOptions } = (await import(dist('cluster/model.js'))) as Model;
    const cfg = parseKubernetes(directive, zones);
    const data = await loadOffThread({ paths: [list], cluster: defaultClusterOptions, directive, zones, localAddresses: [], retainModel: false, countRecords: true, chunkWeight: 500, reclaimEvery }, cfg);
    expect(data.thread).toBe('worker');
    const here = KubernetesStore.fromModel(loadManifests([list], defaultClusterOptions).model, cfg);
    expect(data.store.parts()).toEqual(here.parts());
    expect(data.store.reverse('10.128.0.5')).toEqual(here.reverse('10.128.0.5'));
    // The count the worker makes after the handover is what a zone transfer of the zone lists.
    const { KubernetesPlugin } = (await import(dist('plugins/kubernetes/plugin.js'))) as PluginMod;
    const plugin = new KubernetesPlugin(cfg, here, { lookup: () => Promise.reject(new Error('no lookups')), localAddresses: () => [] });
    expect(await data.records).toBe(plugin.transfer('cluster.local.')!.length - 1);
    expect(await data.records).toBeGreaterThan(2000 * 3);
  });

  it('stops a running load when its plugin closes', async () => {
    const { loadOffThread } = (await import(dist('plugins/kubernetes/loader.js'))) as Loader;
    const { parseKubernetes } = (await import(dist('plugins/kubernetes/setup.js'))) as Setup;
    const { defaultClusterOptions } = (await import(dist('cluster/model.js'))) as Model;
    const cfg = parseKubernetes(directive, zones);
    const closing = new AbortController();
    const started = Date.now();
    const loading = loadOffThread({ paths: [list], cluster: defaultClusterOptions, directive, zones, localAddresses: [], retainModel: false, countRecords: false, chunkWeight: 500, reclaimEvery: 0 }, cfg, closing.signal);
    setTimeout(() => closing.abort(), 20);
    await expect(loading).rejects.toThrow(/closed before its data loaded/);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
