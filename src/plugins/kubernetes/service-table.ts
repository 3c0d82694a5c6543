// The kubernetes store's Services as one text: each lean Service as JSON, back to back, with
// their keys. 10k Services as objects cost the serving thread about 35 ms of structured-clone
// work on every reload, and the garbage collector the copying of them into the old generation;
// as text they arrive as two strings and one offset array, and a Service becomes an object only
// when a query (or a listing) first asks for it, once per store.
import type { Service } from '../../cluster/model/model.js';

/** The Services of a store: plain data, so it crosses threads with its offsets transferred. */
export interface ServiceImage {
  /** Keys (`name.namespace`) in the model's order, each followed by '\n'. */
  keys: string;
  /** Service i is JSON.parse(json.slice(at[i], at[i + 1])), without labels, annotations, source. */
  json: string;
  at: Int32Array;
}

/** What the store's objects carry instead of labels, annotations and a source (shared, frozen). */
export const NO_STRINGS: Readonly<Record<string, string>> = Object.freeze({});
export const NO_SOURCE = Object.freeze({ file: '', line: 0 });

/**
 * Encodes Services, in the given order, as the store keeps them: what DNS reads. Labels,
 * annotations and the selector were used to filter and to build endpoints, and the source to
 * report; they are dropped so 10k Services cost what DNS needs.
 */
export function encodeServices(entries: Iterable<readonly [string, Service]>): ServiceImage {
  const keys: string[] = [];
  const texts: string[] = [];
  const at: number[] = [0];
  let end = 0;
  for (const [k, svc] of entries) {
    // A key holds no newline: it is a Service's name and namespace, both DNS labels.
    keys.push(k);
    const { labels: _l, annotations: _a, selector: _sel, source: _s, ...rest } = svc;
    const text = JSON.stringify(rest);
    texts.push(text);
    end += text.length;
    at.push(end);
  }
  return { keys: keys.length === 0 ? '' : keys.join('\n') + '\n', json: texts.join(''), at: Int32Array.from(at) };
}

/** The buffers of an image, to transfer instead of copy. */
export function serviceImageBuffers(image: ServiceImage): ArrayBuffer[] {
  return [image.at.buffer as ArrayBuffer];
}

/** Services read from an image: a Map in every way a reader sees, decoding on first use. */
export class ServiceTable implements ReadonlyMap<string, Service> {
  private readonly index = new Map<string, number>();
  private readonly keyList: string[];
  private readonly decoded: (Service | undefined)[];

  constructor(private readonly image: ServiceImage) {
    this.keyList = image.keys === '' ? [] : image.keys.slice(0, -1).split('\n');
    this.decoded = new Array<Service | undefined>(this.keyList.length);
    // A key given twice keeps its first position and service, as Map.set on a new key would
    // keep the first insertion order (the encoder never writes a key twice).
    for (let i = 0; i < this.keyList.length; i++) if (!this.index.has(this.keyList[i]!)) this.index.set(this.keyList[i]!, i);
  }

  get size(): number {
    return this.index.size;
  }

  get(key: string): Service | undefined {
    const i = this.index.get(key);
    return i === undefined ? undefined : this.at(i);
  }

  has(key: string): boolean {
    return this.index.has(key);
  }

  *entries(): MapIterator<[string, Service]> {
    for (const [k, i] of this.index) yield [k, this.at(i)];
  }

  *keys(): MapIterator<string> {
    yield* this.index.keys();
  }

  *values(): MapIterator<Service> {
    for (const i of this.index.values()) yield this.at(i);
  }

  [Symbol.iterator](): MapIterator<[string, Service]> {
    return this.entries();
  }

  forEach(f: (value: Service, key: string, map: ReadonlyMap<string, Service>) => void): void {
    for (const [k, v] of this.entries()) f(v, k, this);
  }

  private at(i: number): Service {
    let svc = this.decoded[i];
    if (svc === undefined) {
      const r = JSON.parse(this.image.json.slice(this.image.at[i]!, this.image.at[i + 1]!)) as Omit<Service, 'labels' | 'annotations' | 'selector' | 'source'>;
      // Every Service gets the same fields in the same order (absent ones undefined), so the
      // query path's reads of them see one object shape: JSON.parse's shapes follow each
      // text's keys, and property reads across many shapes measured 2 us a query slower.
      // Typed with every key of Service required, so a field added to Service fails to build
      // here until it is carried.
      const full: { [K in keyof Required<Service>]: Service[K] | undefined } = {
        name: r.name,
        namespace: r.namespace,
        labels: NO_STRINGS,
        annotations: NO_STRINGS,
        source: NO_SOURCE,
        type: r.type,
        clusterIPs: r.clusterIPs,
        headless: r.headless,
        externalName: r.externalName,
        ports: r.ports,
        publishNotReadyAddresses: r.publishNotReadyAddresses,
        ipFamilies: r.ipFamilies,
        externalIPs: r.externalIPs,
        loadBalancer: r.loadBalancer,
        // Dropped by encodeServices: used to build endpoints, never read by DNS.
        selector: undefined,
      };
      svc = full as Service;
      this.decoded[i] = svc;
    }
    return svc;
  }
}
