// The kubernetes plugin's view of the manifest feed: built in the feed's loader thread from each
// load's model (the service slices and reverse index as one image whose buffers are moved, the
// Services as one text, the rest in chunks), and put together on the serving thread a part at a
// time, so the serving thread never indexes a large cluster in one go.
import type { Directive } from '../../chain/corefile.js';
import type { ClusterModel } from '../../cluster/model/model.js';
import type { ViewInput, ViewOutput, ViewPart } from '../../cluster/feed-protocol.js';
import type { ViewAssembler, ViewSpec } from '../../cluster/feed-thread.js';
import { emptyResponse } from '../../chain/plugin.js';
import { Rcode } from '../../dns/records.js';
import { parseKubernetes, type KubernetesConfig } from './config.js';
import { StoreAssembler, storeImage, type KubernetesStore, type SliceImageCache, type StoreParts } from './store.js';
import type { SliceImage } from './slice-image.js';
import { serviceImageBuffers, type ServiceImage } from './service-table.js';
import { chunkParts } from './chunks.js';
import { countRecords, KubernetesPlugin } from './plugin.js';

export interface KubernetesViewArgs {
  /** The plugin's directive without its place (file, line): blocks written alike share a view. */
  readonly directive: Directive;
  readonly zones: readonly string[];
  /** Non-loopback bound addresses, for the NS records the records count includes. */
  readonly localAddresses: readonly string[];
  readonly retainModel: boolean;
  /** Count the records (clusterdns_records_loaded) after handing the store over. */
  readonly countRecords: boolean;
  /** Rough size of one chunk (entries, an endpoint address counting as one). */
  readonly chunkWeight: number;
}

type Part =
  | { readonly type: 'image'; readonly image: SliceImage }
  | { readonly type: 'services'; readonly services: ServiceImage }
  | { readonly type: 'chunk'; readonly parts: Partial<StoreParts> }
  | { readonly type: 'model'; readonly model: ClusterModel };

export interface KubernetesView {
  readonly store: KubernetesStore;
}

/**
 * The last slice image of each view (keyed by its args, the same object for every build of one
 * view): kept in the loader thread, so it is copied to the serving thread rather than moved.
 */
const lastImages = new WeakMap<object, SliceImageCache>();

/** Runs in the loader thread. */
export function buildView(input: ViewInput, rawArgs: unknown): ViewOutput {
  const args = rawArgs as KubernetesViewArgs;
  const cfg = parseKubernetes(args.directive, [...args.zones]);
  const { model } = input;
  const { parts, image, services, cache } = storeImage(model, cfg, lastImages.get(args));
  lastImages.set(args, cache);
  let after: (() => unknown) | undefined;
  if (args.countRecords) {
    // The Services' offsets go to the serving thread, so the count reads a copy of them.
    const servicesCopy: ServiceImage = structuredClone(services);
    // The records gauge counts what a zone transfer of each forward zone lists (SOA once).
    after = () => {
      const a = new StoreAssembler(cfg);
      a.add(parts);
      a.addServices(servicesCopy);
      a.addImage(image);
      const store = a.finish();
      const localAddresses = [...args.localAddresses];
      return countRecords(new KubernetesPlugin(cfg, store, { lookup: async () => emptyResponse(Rcode.SERVFAIL), localAddresses: () => localAddresses }, []));
    };
  }
  function* all(): Generator<ViewPart> {
    yield { part: { type: 'image', image } satisfies Part };
    yield { part: { type: 'services', services } satisfies Part, transfer: serviceImageBuffers(services) };
    for (const chunk of chunkParts(parts, args.chunkWeight)) yield { part: { type: 'chunk', parts: chunk } satisfies Part };
    if (args.retainModel) yield { part: { type: 'model', model } satisfies Part };
  }
  return { parts: all(), ...(after ? { after } : {}) };
}

/** Takes the parts on the serving thread: typed arrays read in place, Services decoded when first asked for. */
function assembler(cfg: KubernetesConfig): ViewAssembler<KubernetesView> {
  const a = new StoreAssembler(cfg);
  let model: ClusterModel | undefined;
  return {
    add(raw) {
      const p = raw as Part;
      if (p.type === 'image') a.addImage(p.image);
      else if (p.type === 'services') a.addServices(p.services);
      else if (p.type === 'chunk') a.add(p.parts);
      else model = p.model;
    },
    finish: () => ({ store: a.finish(model) }),
  };
}

/** The directive as plain data without places, nested blocks included. */
function placeless(d: Directive): Directive {
  return JSON.parse(JSON.stringify(d, (k, v) => (k === 'file' || k === 'line' ? undefined : v))) as Directive;
}

export function kubernetesView(cfg: KubernetesConfig, args: Omit<KubernetesViewArgs, 'directive'> & { directive: Directive }): ViewSpec<KubernetesView> {
  return {
    module: new URL('./view.js', import.meta.url).href,
    build: buildView,
    args: { ...args, directive: placeless(args.directive) } satisfies KubernetesViewArgs,
    assemble: () => assembler(cfg),
  };
}
