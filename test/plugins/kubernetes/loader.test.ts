// The kubernetes plugin's view of the manifest feed, loaded on the feed's loader thread (the
// compiled worker in dist/, as the server runs it): the store it hands over equals an in-thread
// build, a change to one file is read alone and gives the store a fresh load gives, and closing
// the feed stops a load still running instead of waiting for it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../helpers/server.js';
import { quietFor } from '../../helpers/wait.js';

const dist = (p: string): string => path.join(repoRoot, 'dist', p);
type Feed = typeof import('../../../src/cluster/feed-thread.js');
type View = typeof import('../../../src/plugins/kubernetes/view.js');
type Setup = typeof import('../../../src/plugins/kubernetes/config.js');
type Store = typeof import('../../../src/plugins/kubernetes/store.js');
type Load = typeof import('../../../src/cluster/load.js');
type Model = typeof import('../../../src/cluster/model/model.js');
type PluginMod = typeof import('../../../src/plugins/kubernetes/plugin.js');

let dir: string;
let list: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'clusterdns-loader-'));
  list = path.join(dir, 'cluster.json');
  execFileSync(process.execPath, [path.join(repoRoot, 'bench/gen-list.js'), list, '2000', '10']);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('kubernetes view on the feed loader thread', () => {
  const directive = {
    name: 'kubernetes',
    args: ['cluster.local', 'in-addr.arpa'],
    file: 'Corefile',
    line: 1,
    block: [{ name: 'pods', args: ['insecure'], file: 'Corefile', line: 2 }],
  };
  const zones = ['cluster.local.', 'in-addr.arpa.'];
  const viewArgs = { directive, zones, localAddresses: [], retainModel: false, chunkWeight: 500 };

  // Five loads of 2,000 Services on the thread and four fresh ones here to compare: about 12 s
  // alone, three times that beside other test files on two CPUs.
  it('hands over the store an in-thread build makes, then a one-file change read alone', { timeout: 90_000 }, async () => {
    const { FeedThread } = (await import(dist('cluster/feed-thread.js'))) as Feed;
    const { kubernetesView } = (await import(dist('plugins/kubernetes/view.js'))) as View;
    const { parseKubernetes } = (await import(dist('plugins/kubernetes/config.js'))) as Setup;
    const { KubernetesStore } = (await import(dist('plugins/kubernetes/store.js'))) as Store;
    const { loadManifests } = (await import(dist('cluster/load.js'))) as Load;
    const { defaultClusterOptions } = (await import(dist('cluster/model/model.js'))) as Model;
    const { KubernetesPlugin } = (await import(dist('plugins/kubernetes/plugin.js'))) as PluginMod;
    const cfg = parseKubernetes(directive, zones);
    const feed = new FeedThread({ paths: [dir], cluster: defaultClusterOptions });
    try {
      expect(feed.threaded).toBe(true);
      const counts: number[] = [];
      const sub = feed.subscribe(kubernetesView(cfg, { ...viewArgs, countRecords: true }), {
        onView: () => undefined,
        onAfter: (n) => void counts.push(n as number),
      });
      const first = await feed.refresh();
      expect(first.full).toBe(true);
      const { value } = await sub.current();
      const here = KubernetesStore.fromModel(loadManifests([dir], defaultClusterOptions).model, cfg);
      expect(value.store.parts()).toEqual(here.parts());
      expect(value.store.reverse('10.128.0.5')).toEqual(here.reverse('10.128.0.5'));
      // The count the thread makes after the handover is what a zone transfer of the zone lists.
      const plugin = new KubernetesPlugin(cfg, here, { lookup: () => Promise.reject(new Error('no lookups')), localAddresses: () => [] });
      await expect.poll(() => counts.length).toBe(1);
      expect(counts[0]).toBe(plugin.transfer('cluster.local.')!.length - 1);

      writeFileSync(
        path.join(dir, 'new.yaml'),
        'apiVersion: v1\nkind: Service\nmetadata:\n  name: added\n  namespace: default\nspec:\n  ports:\n  - port: 80\n',
      );
      const second = await feed.refresh();
      expect(second.full).toBe(false);
      expect(second.reread).toBe(1);
      const next = await sub.current();
      expect(next.summary.gen).toBe(second.gen);
      const fresh = KubernetesStore.fromModel(loadManifests([dir], defaultClusterOptions).model, cfg);
      expect(next.value.store.parts()).toEqual(fresh.parts());
      expect(next.value.store.services.has('default/added') || [...next.value.store.services.keys()].some((k) => k.includes('added'))).toBe(true);
      // Unchanged files: no load, the same view.
      const third = await feed.refresh();
      expect(third.gen).toBe(second.gen);
      expect((await sub.current()).value).toBe(next.value);

      // A changed EndpointSlice: the slice image is built again, not taken from the last build.
      const slice = (ip: string): string =>
        `apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: added-1\n  namespace: default\n  labels:\n    kubernetes.io/service-name: added\naddressType: IPv4\nendpoints:\n- addresses: [${ip}]\nports:\n- port: 80\n`;
      for (const ip of ['10.200.0.1', '10.200.0.2']) {
        writeFileSync(path.join(dir, 'new-slice.yaml'), slice(ip));
        await feed.refresh();
        const built = await sub.current();
        expect(built.value.store.parts()).toEqual(KubernetesStore.fromModel(loadManifests([dir], defaultClusterOptions).model, cfg).parts());
        expect(built.value.store.reverse(ip)).toEqual(['10-200-0-' + ip.split('.')[3] + '.added.default.svc']);
      }
    } finally {
      feed.close();
      rmSync(path.join(dir, 'new.yaml'), { force: true });
      rmSync(path.join(dir, 'new-slice.yaml'), { force: true });
    }
  });

  it('stops a running load when the feed closes', async () => {
    const { FeedThread } = (await import(dist('cluster/feed-thread.js'))) as Feed;
    const { kubernetesView } = (await import(dist('plugins/kubernetes/view.js'))) as View;
    const { parseKubernetes } = (await import(dist('plugins/kubernetes/config.js'))) as Setup;
    const { defaultClusterOptions } = (await import(dist('cluster/model/model.js'))) as Model;
    const cfg = parseKubernetes(directive, zones);
    const feed = new FeedThread({ paths: [list], cluster: defaultClusterOptions });
    feed.subscribe(kubernetesView(cfg, { ...viewArgs, countRecords: false }), { onView: () => undefined });
    const started = Date.now();
    const loading = feed.refresh();
    // A load of 2,000 Services takes far longer than this: the close lands in the middle of it.
    await quietFor(20, 'the load to be under way');
    feed.close();
    await expect(loading).rejects.toThrow(/manifest feed closed/);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
