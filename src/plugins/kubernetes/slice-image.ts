// The kubernetes store's endpoint slices as a compact image: typed-array columns and one string
// holding every text they need. 100k endpoints as objects are ~33 MiB of small objects the
// serving thread must receive (structured clone), rebuild and, at the next reload, collect; as an
// image they are a few MiB in about twenty buffers, built by the loader thread, handed over by
// transfer (no copy) and read in place. A service's slices become objects only when asked for,
// once per store. The reverse (PTR) index is part of the image: sorted keys, binary search.
import type { EndpointPort, EndpointSlice } from '../../cluster/model/model.js';
import { canonicalIp } from '../../pkg/ip.js';

/** A ready endpoint address with the name CoreDNS gives it. */
export interface EndpointAddress {
  ip: string;
  name: string;
  zone?: string;
}

/** A slice reduced to what DNS uses: its ports and ready addresses. */
export interface ReadySlice {
  ports: readonly EndpointPort[];
  addresses: EndpointAddress[];
  /** multicluster: the source cluster id. */
  cluster?: string;
  /** Position of the slice among the model's EndpointSlices (reverse answers keep that order). */
  order?: number;
}

/**
 * The image: plain data, so it crosses threads by structured clone with its buffers transferred.
 * A "group" is the slices of one service. Strings are indexes into `text` (see `at`); -1 is none.
 */
export interface SliceImage {
  /** Every string, back to back: string i is text.slice(at[i], at[i + 1]). */
  text: string;
  at: Int32Array;
  /** Per group, in the order of its first slice in the model: the service key `name.namespace`. */
  groupKey: Int32Array;
  /** Groups + 1 entries: group g's slices are groupFirst[g] to groupFirst[g + 1] - 1. */
  groupFirst: Int32Array;
  /** Group numbers sorted by key (binary search). */
  groupsByKey: Int32Array;
  /** Per slice, grouped, each group's in model order: its order (-1 unset), ports, addresses. */
  sliceOrder: Int32Array;
  slicePort: Int32Array;
  slicePortCount: Int32Array;
  sliceAddr: Int32Array;
  sliceAddrCount: Int32Array;
  /** Per port (identical port lists are stored once): name, protocol, number. */
  portName: Int32Array;
  portProtocol: Int32Array;
  portNumber: Int32Array;
  /**
   * Per address, in the order they were added: IP as written, endpoint name (DASHED: the IP
   * dashed, the name of most endpoints, made when read instead of stored), zone, group.
   */
  addrIp: Int32Array;
  addrName: Int32Array;
  addrZone: Int32Array;
  addrGroup: Int32Array;
  /** Reverse index of IPv4 endpoints: sorted addresses, the endpoint (address) of each. */
  v4Key: Uint32Array;
  v4Addr: Int32Array;
  /** The same for every other endpoint IP (IPv6, canonical form): sorted key strings. */
  otherKey: Int32Array;
  otherAddr: Int32Array;
}

/** Endpoint name: hostname, else (endpoint_pod_names) the pod name if shorter than 64, else the dashed IP. */
export function endpointName(ip: string, hostname: string | undefined, targetRefName: string | undefined, podNames: boolean): string {
  if (hostname) return hostname;
  if (podNames && targetRefName && targetRefName.length < 64) return targetRefName;
  return dashedIp(ip);
}

/** An address's name when it has no hostname or pod name to go by: its IP, dashed. */
function dashedIp(ip: string): string {
  if (ip.includes('.')) return ip.replaceAll('.', '-');
  // IPv6: a trailing '-' (from '::' at the end) gets a 0 so the label stays valid.
  const dashed = ip.replaceAll(':', '-');
  return dashed.endsWith('-') ? dashed + '0' : dashed;
}

/**
 * A dotted quad in the one form IPv4 is written canonically (no leading zeros, no signs) as a
 * number, else -1. Only that form maps to a number, so two different strings never share one:
 * a lookup by number finds exactly what a lookup by the string would.
 */
export function ipv4Number(s: string): number {
  if (s.length < 7 || s.length > 15) return -1;
  let n = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || dots === 3) return -1;
      n = n * 256 + part;
      part = 0;
      digits = 0;
      dots++;
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && part === 0) return -1;
      part = part * 10 + (c - 48);
      if (++digits > 3 || part > 255) return -1;
    } else return -1;
  }
  if (dots !== 3 || digits === 0) return -1;
  return n * 256 + part;
}

/** The reverse index key of an endpoint IP, as the store has always looked it up. */
function reverseKey(ip: string): string {
  // Loading accepted only canonical IPv4 (no leading zeros); IPv6 may be written many ways.
  return ip.includes(':') ? (canonicalIp(ip) ?? ip) : ip;
}

/** addrName of an endpoint named by its dashed IP. */
const DASHED = -2;

/** 2^21: an IPv4 key (32 bits) and an address number below this fit a double's 53 bits exactly. */
const ADDRESS_BITS_MAX = 2 ** 21;

/** An Int32 column that grows as it is filled. */
class Column {
  private a = new Int32Array(64);
  length = 0;
  push(v: number): void {
    if (this.length === this.a.length) {
      const b = new Int32Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.length++] = v;
  }
  get(i: number): number {
    return this.a[i]!;
  }
  /** The values in a buffer of their own (what is transferred holds nothing else). */
  done(): Int32Array {
    return this.a.slice(0, this.length);
  }
}

/** Builds an image from slices added one at a time, in model order or grouped by service. */
export class SliceImageBuilder {
  private readonly strings: string[] = [];
  private readonly interned = new Map<string, number>();
  private readonly groups = new Map<string, number>();
  private readonly groupKeys: string[] = [];
  private readonly portLists = new Map<string, number>();
  private readonly portListOf = new WeakMap<readonly EndpointPort[], number>();
  private readonly portName = new Column();
  private readonly portProtocol = new Column();
  private readonly portNumber = new Column();
  /** Per slice, in the order added. */
  private readonly sGroup = new Column();
  private readonly sOrder = new Column();
  private readonly sPort = new Column();
  private readonly sPortCount = new Column();
  private readonly sAddr = new Column();
  private readonly addrIp = new Column();
  private readonly addrName = new Column();
  private readonly addrZone = new Column();
  private readonly addrGroup = new Column();
  /** Per address: the IPv4 key (-1 when not IPv4), else the string of the other key. */
  private readonly addrV4: number[] = [];
  private readonly addrOther = new Column();
  private group = -1;
  /** Slice orders never went down: an address's number alone ranks it (see finish). */
  private monotone = true;
  private lastRank = 0;

  /** A string that recurs (zones, port names, keys): stored once. */
  private intern(s: string): number {
    let i = this.interned.get(s);
    if (i === undefined) {
      i = this.strings.push(s) - 1;
      this.interned.set(s, i);
    }
    return i;
  }

  /** A string that seldom recurs (IPs, endpoint names): not worth a map entry. */
  private add(s: string): number {
    return this.strings.push(s) - 1;
  }

  private ports(ports: readonly EndpointPort[]): number {
    const known = this.portListOf.get(ports);
    if (known !== undefined) return known;
    let sig = '';
    for (const p of ports) sig += `${p.name}\0${p.protocol}\0${p.port}\0`;
    let start = this.portLists.get(sig);
    if (start === undefined) {
      start = this.portName.length;
      for (const p of ports) {
        this.portName.push(this.intern(p.name));
        this.portProtocol.push(this.intern(p.protocol));
        this.portNumber.push(p.port);
      }
      this.portLists.set(sig, start);
    }
    this.portListOf.set(ports, start);
    return start;
  }

  /** Starts a slice of service `key`; its addresses follow with `address`. */
  slice(key: string, ports: readonly EndpointPort[], order: number | undefined): void {
    let g = this.groups.get(key);
    if (g === undefined) {
      g = this.groupKeys.push(key) - 1;
      this.groups.set(key, g);
    }
    this.group = g;
    this.sGroup.push(g);
    this.sOrder.push(order ?? -1);
    const rank = Math.max(0, order ?? 0);
    if (rank < this.lastRank) this.monotone = false;
    this.lastRank = rank;
    this.sPort.push(this.ports(ports));
    this.sPortCount.push(ports.length);
    this.sAddr.push(this.addrIp.length);
  }

  /** An address of the slice begun last; `name` undefined: its dashed IP. */
  address(ip: string, name: string | undefined, zone: string | undefined): void {
    this.addrIp.push(this.add(ip));
    this.addrName.push(name === undefined ? DASHED : this.add(name));
    this.addrZone.push(zone === undefined ? -1 : this.intern(zone));
    this.addrGroup.push(this.group);
    const k = reverseKey(ip);
    const v4 = ipv4Number(k);
    this.addrV4.push(v4);
    this.addrOther.push(v4 < 0 ? this.add(k) : -1);
  }

  /** A ready slice as the store has it. */
  ready(key: string, slice: ReadySlice): void {
    this.slice(key, slice.ports, slice.order);
    for (const a of slice.addresses) this.address(a.ip, a.name === dashedIp(a.ip) ? undefined : a.name, a.zone);
  }

  /** A model EndpointSlice: its ready endpoints, named (see endpointName), with no objects between. */
  modelSlice(key: string, slice: EndpointSlice, order: number, podNames: boolean): void {
    this.slice(key, slice.ports, order);
    for (const ep of slice.endpoints) {
      // conditions.ready unset counts as ready (CoreDNS object/endpoint.go).
      if (ep.ready === false) continue;
      const zone = ep.zone?.toLowerCase();
      // endpointName, with the dashed IP left to be made when read.
      const name = ep.hostname ? ep.hostname : podNames && ep.targetRefName && ep.targetRefName.length < 64 ? ep.targetRefName : undefined;
      for (const ip of ep.addresses) this.address(ip, name, zone);
    }
  }

  finish(): SliceImage {
    const slices = this.sGroup.length;
    const groups = this.groupKeys.length;
    const addresses = this.addrIp.length;
    // Slices grouped by service, each group's in the order added (a stable counting sort).
    const groupFirst = new Int32Array(groups + 1);
    for (let s = 0; s < slices; s++) groupFirst[this.sGroup.get(s) + 1]!++;
    for (let g = 0; g < groups; g++) groupFirst[g + 1]! += groupFirst[g]!;
    const next = groupFirst.slice(0, groups);
    const sliceOrder = new Int32Array(slices);
    const slicePort = new Int32Array(slices);
    const slicePortCount = new Int32Array(slices);
    const sliceAddr = new Int32Array(slices);
    const sliceAddrCount = new Int32Array(slices);
    /** Per address, its slice's order: the reverse index lists endpoints in model order. */
    const rank = new Int32Array(addresses);
    for (let s = 0; s < slices; s++) {
      const at = next[this.sGroup.get(s)]!++;
      const first = this.sAddr.get(s);
      const end = s + 1 < slices ? this.sAddr.get(s + 1) : addresses;
      sliceOrder[at] = this.sOrder.get(s);
      slicePort[at] = this.sPort.get(s);
      slicePortCount[at] = this.sPortCount.get(s);
      sliceAddr[at] = first;
      sliceAddrCount[at] = end - first;
      rank.fill(Math.max(0, this.sOrder.get(s)), first, end);
    }
    const groupKey = new Int32Array(groups);
    for (let g = 0; g < groups; g++) groupKey[g] = this.intern(this.groupKeys[g]!);
    const keys = this.groupKeys;
    const groupsByKey = Int32Array.from(keys.keys()).sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : 0));

    // Reverse index: by key, then slice order, then position (the address's number within a slice).
    const v4 = this.addrV4;
    const byV4: number[] = [];
    const byOther: number[] = [];
    for (let a = 0; a < addresses; a++) (v4[a]! >= 0 ? byV4 : byOther).push(a);
    let v4Addr: Int32Array;
    const v4Key = new Uint32Array(byV4.length);
    if (this.monotone && addresses <= ADDRESS_BITS_MAX) {
      // Slices came in model order, so (key, address number) is the order wanted: packed into
      // one double each, it sorts natively, some ten times faster than with a comparator.
      const packed = new Float64Array(byV4.length);
      for (let i = 0; i < byV4.length; i++) packed[i] = v4[byV4[i]!]! * ADDRESS_BITS_MAX + byV4[i]!;
      packed.sort();
      v4Addr = new Int32Array(byV4.length);
      for (let i = 0; i < packed.length; i++) {
        const p = packed[i]!;
        v4Key[i] = Math.floor(p / ADDRESS_BITS_MAX);
        v4Addr[i] = p % ADDRESS_BITS_MAX;
      }
    } else {
      v4Addr = Int32Array.from(byV4).sort((a, b) => v4[a]! - v4[b]! || rank[a]! - rank[b]! || a - b);
      for (let i = 0; i < v4Addr.length; i++) v4Key[i] = v4[v4Addr[i]!]!;
    }
    const str = this.strings;
    const other = this.addrOther;
    const otherAddr = Int32Array.from(byOther).sort((a, b) => {
      const x = str[other.get(a)]!;
      const y = str[other.get(b)]!;
      return x < y ? -1 : x > y ? 1 : rank[a]! - rank[b]! || a - b;
    });
    const otherKey = new Int32Array(otherAddr.length);
    for (let i = 0; i < otherAddr.length; i++) otherKey[i] = other.get(otherAddr[i]!);

    const at = new Int32Array(str.length + 1);
    let offset = 0;
    for (let i = 0; i < str.length; i++) {
      at[i] = offset;
      offset += str[i]!.length;
    }
    at[str.length] = offset;
    return {
      text: str.join(''),
      at,
      groupKey,
      groupFirst,
      groupsByKey,
      sliceOrder,
      slicePort,
      slicePortCount,
      sliceAddr,
      sliceAddrCount,
      portName: this.portName.done(),
      portProtocol: this.portProtocol.done(),
      portNumber: this.portNumber.done(),
      addrIp: this.addrIp.done(),
      addrName: this.addrName.done(),
      addrZone: this.addrZone.done(),
      addrGroup: this.addrGroup.done(),
      v4Key,
      v4Addr,
      otherKey,
      otherAddr,
    };
  }
}

/** The image's buffers, to transfer with it (postMessage(image, transfer)). */
export function imageBuffers(image: SliceImage): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  for (const v of Object.values(image)) if (ArrayBuffer.isView(v)) out.add(v.buffer as ArrayBuffer);
  return [...out];
}

/** An image read in place: a service's slices decoded when first asked for, then kept. */
export class SliceView {
  private readonly decoded = new Map<string, ReadySlice[]>();
  private readonly portLists = new Map<number, readonly EndpointPort[]>();

  constructor(readonly image: SliceImage) {}

  private str(i: number): string {
    const at = this.image.at;
    return this.image.text.slice(at[i]!, at[i + 1]!);
  }

  private name(address: number, ip: string): string {
    const n = this.image.addrName[address]!;
    return n === DASHED ? dashedIp(ip) : this.str(n);
  }

  get groups(): number {
    return this.image.groupKey.length;
  }

  /** The group of a service key, or -1. */
  private group(key: string): number {
    const { groupsByKey, groupKey } = this.image;
    let lo = 0;
    let hi = groupsByKey.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const g = groupsByKey[mid]!;
      const k = this.str(groupKey[g]!);
      if (k === key) return g;
      if (k < key) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** The slices of service `key` (name.namespace), in model order; undefined when it has none. */
  slicesOf(key: string): ReadySlice[] | undefined {
    const known = this.decoded.get(key);
    if (known) return known;
    const g = this.group(key);
    if (g < 0) return undefined;
    const slices = this.decode(g);
    this.decoded.set(key, slices);
    return slices;
  }

  private decode(g: number): ReadySlice[] {
    const im = this.image;
    const out: ReadySlice[] = [];
    for (let s = im.groupFirst[g]!; s < im.groupFirst[g + 1]!; s++) {
      const addresses: EndpointAddress[] = [];
      const first = im.sliceAddr[s]!;
      const end = first + im.sliceAddrCount[s]!;
      for (let a = first; a < end; a++) {
        const ip = this.str(im.addrIp[a]!);
        const address: EndpointAddress = { ip, name: this.name(a, ip) };
        const zone = im.addrZone[a]!;
        if (zone >= 0) address.zone = this.str(zone);
        addresses.push(address);
      }
      const slice: ReadySlice = { ports: this.ports(im.slicePort[s]!, im.slicePortCount[s]!), addresses };
      const order = im.sliceOrder[s]!;
      if (order >= 0) slice.order = order;
      out.push(slice);
    }
    return out;
  }

  /** A port list, decoded once per store (lists are shared as the model shares them). */
  private ports(start: number, count: number): readonly EndpointPort[] {
    // A list is stored once, so its start names it; an empty one starts where the next would.
    const id = count === 0 ? -1 : start;
    let list = this.portLists.get(id);
    if (!list) {
      const im = this.image;
      const out: EndpointPort[] = [];
      for (let p = start; p < start + count; p++)
        out.push({ name: this.str(im.portName[p]!), protocol: this.str(im.portProtocol[p]!), port: im.portNumber[p]! });
      list = out;
      this.portLists.set(id, list);
    }
    return list;
  }

  /** Every group as [service key, slices], in the order of their first slice in the model. */
  *entries(): Generator<[string, ReadySlice[]]> {
    for (let g = 0; g < this.groups; g++) {
      const key = this.str(this.image.groupKey[g]!);
      yield [key, this.slicesOf(key)!];
    }
  }

  /** [relative PTR target, namespace] of each endpoint holding ip, in model order. */
  *targets(ip: string): Generator<[string, string]> {
    const im = this.image;
    const v4 = ipv4Number(ip);
    const keys = v4 >= 0 ? im.v4Key : im.otherKey;
    const addrs = v4 >= 0 ? im.v4Addr : im.otherAddr;
    // The first entry not below ip.
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (v4 >= 0 ? keys[mid]! < v4 : this.str(keys[mid]!) < ip) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < keys.length && (v4 >= 0 ? keys[i] === v4 : this.str(keys[i]!) === ip); i++) {
      const a = addrs[i]!;
      const k = this.str(im.groupKey[im.addrGroup[a]!]!);
      // A service key is `name.namespace`, and a Service name has no dots.
      yield [`${this.name(a, this.str(im.addrIp[a]!))}.${k}.svc`, k.slice(k.indexOf('.') + 1)];
    }
  }
}
