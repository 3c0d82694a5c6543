// A structure-aware DNS message generator for the fuzz suite. Unlike byte-level mutation (see
// test/server/malformed.test.ts), it builds messages field by field and bends one or a few
// fields at a time: names (odd bytes, overlong labels and names, compression pointers that loop,
// point forward, into the header or past the end), header counts, opcodes, classes, types, EDNS
// (payload sizes, versions, option lists with bad lengths, several OPTs, OPT outside the
// additional section), extra sections and trailing bytes. Seeded, so a failure replays.
import { C, encodeHeader, encodeOpt, encodeRr, fixture, prng, T } from '../server/raw.js';

export interface FuzzCase {
  msg: Buffer;
  /** QR=1: the server must never reply. */
  isResponse: boolean;
}

/** Names the kubernetes fuzz fixture (test/fixtures/fuzz) holds, and some near them. */
export const KNOWN_NAMES = [
  fixture.nginx,
  fixture.big,
  fixture.medium,
  fixture.small,
  fixture.window,
  fixture.zone,
  'example.org',
  'www.example.org',
  'nope.example.org',
  'kubernetes.default.svc.cluster.local',
  '10.0.96.10.in-addr.arpa',
  '_http._tcp.nginx.default.svc.cluster.local',
  '1-2-3-4.default.pod.cluster.local',
  'nginx.alias.test',
  '*.default.svc.cluster.local',
  'any.any.svc.cluster.local',
];

const COMMON_TYPES = [T.A, T.AAAA, T.SRV, 12, T.TXT, T.NS, T.SOA, T.CNAME, T.ANY, T.AXFR, T.IXFR, 15, 99, 46, 48, 65, 64, 255, 0, 65535];

export class FuzzGen {
  private readonly rand: () => number;
  /** While true, every "bend this field" choice is off: the message is a valid query. */
  private valid = false;

  /** `names`: the names a target holds, so valid queries reach its backends (default: the kubernetes fixture's). */
  constructor(
    seed: number,
    private readonly names: readonly string[] = KNOWN_NAMES,
  ) {
    this.rand = prng(seed);
  }

  private int(n: number): number {
    return Math.floor(this.rand() * n);
  }

  private pick<X>(xs: readonly X[]): X {
    return xs[this.int(xs.length)]!;
  }

  private chance(p: number): boolean {
    return this.rand() < p;
  }

  /** Like chance, for choices that make a message malformed or unusual: never in a valid one. */
  private bend(p: number): boolean {
    return !this.valid && this.rand() < p;
  }

  private bytes(n: number): Buffer {
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) b[i] = this.int(256);
    return b;
  }

  /** A label: usually DNS-like, sometimes any bytes, sometimes over 63 (which sets pointer bits). */
  private label(): Buffer {
    const r = this.rand();
    if (r < 0.55) {
      const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_*';
      let s = '';
      const len = 1 + this.int(20);
      for (let i = 0; i < len; i++) s += alphabet[this.int(alphabet.length)];
      return Buffer.from(s, 'latin1');
    }
    if (r < 0.8) return this.bytes(1 + this.int(63));
    if (r < 0.9) return Buffer.alloc(63, 0x61);
    return this.bytes(64 + this.int(192));
  }

  /** The wire form of a name, with the length byte taken from the label (it may lie). */
  private name(): Buffer {
    const r = this.valid ? 0 : this.rand();
    const parts: Buffer[] = [];
    if (r < 0.45) {
      // A known name, letter case scrambled sometimes, a label changed sometimes.
      const labels = this.pick(this.names).split('.');
      for (const l of labels) {
        let b: Buffer = Buffer.from(l, 'latin1');
        if (this.chance(0.2)) b = Buffer.from(l.toUpperCase(), 'latin1');
        if (this.bend(0.05)) b = this.label();
        parts.push(Buffer.from([b.length & 0xff]), b);
      }
      if (this.bend(0.1)) {
        // A pointer at the end instead of the root label.
        parts.push(this.pointer());
        return Buffer.concat(parts);
      }
    } else if (r < 0.6) {
      // Many labels: past 255 bytes or 127 labels.
      const n = 50 + this.int(150);
      for (let i = 0; i < n; i++) {
        const b = this.chance(0.5) ? Buffer.from('a') : this.label().subarray(0, 10);
        parts.push(Buffer.from([b.length]), b);
      }
    } else if (r < 0.85) {
      const n = this.int(6);
      for (let i = 0; i < n; i++) {
        const b = this.label();
        parts.push(Buffer.from([this.chance(0.9) ? b.length & 0xff : this.int(256)]), b);
      }
    } else {
      // A name that is only a pointer (to itself, the header, forward, past the end).
      return this.pointer();
    }
    parts.push(Buffer.from([0]));
    return Buffer.concat(parts);
  }

  private pointer(): Buffer {
    const target = this.pick([12, 0, 2, 11, 13, 0x3fff, this.int(0x4000), 12 + this.int(40)]);
    const hi = this.chance(0.9) ? 0xc0 : this.pick([0x40, 0x80]);
    return Buffer.from([hi | ((target >> 8) & 0x3f), target & 0xff]);
  }

  private question(): Buffer {
    const tail = Buffer.alloc(4);
    tail.writeUInt16BE(!this.bend(0.2) ? this.pick(COMMON_TYPES) : this.int(65536), 0);
    const klass = !this.bend(0.15) ? C.IN : this.pick([C.CH, C.HS, C.NONE, C.ANY, 0, this.int(65536)]);
    tail.writeUInt16BE(klass, 2);
    return Buffer.concat([this.name(), tail]);
  }

  private ednsOptions(): { code: number; data: Buffer }[] {
    const out: { code: number; data: Buffer }[] = [];
    const n = this.int(4);
    if (this.valid) {
      // Options a server must ignore or accept: padding, an unknown code, a well-formed cookie.
      for (let i = 0; i < n; i++)
        out.push(
          this.pick([
            { code: 12, data: Buffer.alloc(this.int(64)) },
            { code: 65001, data: this.bytes(this.int(16)) },
            { code: 10, data: this.bytes(8) },
          ]),
        );
      return out;
    }
    for (let i = 0; i < n; i++) {
      const code = this.pick([10, 8, 12, 15, 3, 11, 5, 0, 65001, this.int(65536)]);
      let data: Buffer;
      if (code === 10) data = this.bytes(this.pick([0, 7, 8, 16, 24, 40, 41]));
      else if (code === 8) {
        // Client subnet: family, source and scope prefix, address (often inconsistent).
        data = Buffer.concat([Buffer.from([0, this.pick([1, 2, 0, 3]), this.int(256), this.int(256)]), this.bytes(this.int(20))]);
      } else data = this.bytes(this.int(40));
      out.push({ code, data });
    }
    return out;
  }

  private opt(): Buffer {
    if (this.bend(0.1)) {
      // Option list whose lengths lie.
      return encodeOpt({ udpSize: this.int(65536), rawRdata: this.bytes(this.int(30)) });
    }
    return encodeOpt({
      udpSize: this.pick([0, 1, 511, 512, 1232, 1400, 4096, 65535]),
      do: this.chance(0.5),
      version: !this.bend(0.15) ? 0 : this.int(256),
      extRcode: !this.bend(0.1) ? 0 : this.int(256),
      options: this.ednsOptions(),
    });
  }

  private record(): Buffer {
    const type = this.pick([T.A, T.AAAA, T.SOA, T.TSIG, T.OPT, T.CNAME, this.int(65536)]);
    return encodeRr(
      this.chance(0.5) ? Buffer.from([0xc0, 12]) : this.name(),
      type,
      this.chance(0.8) ? C.IN : this.int(65536),
      this.int(2 ** 32),
      this.bytes(this.int(64)),
    );
  }

  next(): FuzzCase {
    // Half the messages are valid queries with random names, types and EDNS, so the backends,
    // caches and encoder see as much as the parser does.
    this.valid = this.chance(0.5);
    const qdcount = !this.bend(0.15) ? 1 : this.pick([0, 2, 3, 65535]);
    const questions: Buffer[] = [];
    for (let i = 0; i < Math.min(qdcount, 3); i++) questions.push(this.question());
    const answers: Buffer[] = [];
    const authority: Buffer[] = [];
    const additional: Buffer[] = [];
    if (this.bend(0.1)) answers.push(this.record());
    if (this.bend(0.1)) authority.push(this.record());
    if (this.chance(0.6)) additional.push(this.opt());
    if (this.bend(0.08)) additional.push(this.opt());
    if (this.bend(0.08)) additional.push(this.record());
    if (this.bend(0.03)) answers.push(this.opt());
    const lie = (n: number): number => (!this.bend(0.1) ? n : this.pick([0, Math.min(65535, n + 1), Math.max(0, n - 1), 65535]));
    const isResponse = this.bend(0.05);
    const header = encodeHeader({
      id: this.int(65536),
      qr: isResponse,
      opcode: !this.bend(0.15) ? 0 : this.int(16),
      aa: this.bend(0.1),
      tc: this.bend(0.05),
      rd: this.chance(0.7),
      ra: this.bend(0.05),
      z: this.bend(0.05),
      ad: this.chance(0.2),
      cd: this.chance(0.1),
      rcode: !this.bend(0.1) ? 0 : this.int(16),
      qdcount: lie(qdcount),
      ancount: lie(answers.length),
      nscount: lie(authority.length),
      arcount: lie(additional.length),
    });
    const parts = [header, ...questions, ...answers, ...authority, ...additional];
    if (this.bend(0.05)) parts.push(this.bytes(1 + this.int(30)));
    let msg = Buffer.concat(parts);
    if (this.bend(0.05)) msg = msg.subarray(0, this.int(msg.length + 1));
    return { msg, isResponse };
  }
}
