// CoreDNS's gRPC message (pb/dns.proto: `message DnsPacket { bytes msg = 1; }`) in and out of the
// protobuf wire format, written by hand: the message is one bytes field, so its codec is a tag
// byte and a varint length, where protobufjs and proto-loader would add a .proto parser, code
// generation at start and a second runtime to the bundle for that one field. Decoding keeps
// proto3's rules (unknown fields skipped, the last occurrence of a field wins) so that any
// conforming client is understood, and says why a malformed message is refused.

/** The tag of field 1 with wire type 2 (length-delimited): (1 << 3) | 2. */
const MSG_TAG = 0x0a;

/** The protobuf encoding of DnsPacket{msg}. An empty msg is the empty message, as proto3 omits default values. */
export function encodeDnsPacket(msg: Buffer): Buffer {
  if (msg.length === 0) return Buffer.alloc(0);
  const len: number[] = [];
  for (let n = msg.length; ; n >>>= 7) {
    if (n < 0x80) {
      len.push(n);
      break;
    }
    len.push((n & 0x7f) | 0x80);
  }
  const out = Buffer.allocUnsafe(1 + len.length + msg.length);
  out[0] = MSG_TAG;
  for (let i = 0; i < len.length; i++) out[1 + i] = len[i]!;
  msg.copy(out, 1 + len.length);
  return out;
}

export type Decoded = { msg: Buffer } | { error: string };

/** Reads a varint at `pos`; undefined when it is truncated or longer than protobuf's 10 bytes. */
function varint(buf: Buffer, pos: number): { value: number; next: number } | undefined {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 10 && pos + i < buf.length; i++) {
    const b = buf[pos + i]!;
    // Past 2^53 the value loses precision; every length or tag that large is refused anyway.
    value += (b & 0x7f) * scale;
    scale *= 128;
    if ((b & 0x80) === 0) return { value, next: pos + i + 1 };
  }
  return undefined;
}

/** DnsPacket.msg from its protobuf encoding, or why the bytes are not a DnsPacket. */
export function decodeDnsPacket(buf: Buffer): Decoded {
  let msg: Buffer = Buffer.alloc(0);
  let pos = 0;
  while (pos < buf.length) {
    const key = varint(buf, pos);
    if (!key) return { error: `truncated field key at byte ${pos}` };
    pos = key.next;
    const field = Math.floor(key.value / 8);
    const wire = key.value % 8;
    if (field === 0 || field > 0x1fffffff) return { error: `invalid field number ${field}` };
    if (field === 1 && wire !== 2) return { error: `field 1 (msg) has wire type ${wire}, not 2 (bytes)` };
    switch (wire) {
      case 0: {
        const v = varint(buf, pos);
        if (!v) return { error: `truncated varint of field ${field}` };
        pos = v.next;
        break;
      }
      case 1:
      case 5: {
        const size = wire === 1 ? 8 : 4;
        if (pos + size > buf.length) return { error: `truncated fixed-size value of field ${field}` };
        pos += size;
        break;
      }
      case 2: {
        const len = varint(buf, pos);
        if (!len) return { error: `truncated length of field ${field}` };
        if (len.value > buf.length - len.next) return { error: `field ${field} claims ${len.value} bytes, ${buf.length - len.next} follow` };
        if (field === 1) msg = buf.subarray(len.next, len.next + len.value);
        pos = len.next + len.value;
        break;
      }
      default:
        // 3 and 4 are the deprecated groups, 6 and 7 do not exist; none can be skipped safely.
        return { error: `unsupported wire type ${wire} of field ${field}` };
    }
  }
  return { msg };
}
