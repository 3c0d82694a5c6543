// Hand-written HTTP/2 frames (RFC 9113) for the hostile DoH tests: what a client library would
// never send, such as streams opened and reset at once.

/** The client connection preface. */
export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export function frame(type: number, flags: number, stream: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream, 5);
  return Buffer.concat([head, payload]);
}

/** An HPACK string literal, no Huffman coding (RFC 7541 5.2). */
export function hpackString(s: string): Buffer {
  const bytes = Buffer.from(s, 'latin1');
  const len: number[] = [];
  if (bytes.length < 127) len.push(bytes.length);
  else {
    len.push(127);
    let rest = bytes.length - 127;
    while (rest >= 128) {
      len.push((rest & 127) | 128);
      rest >>= 7;
    }
    len.push(rest);
  }
  return Buffer.concat([Buffer.from(len), bytes]);
}

/** HEADERS (END_STREAM for a GET) then RST_STREAM CANCEL, for stream `id`. */
export function openAndCancel(id: number, method: 'GET' | 'POST', pathText: string): Buffer {
  // :method GET (static 2) or POST (static 3), :scheme https (7), then :authority (1) and :path (4)
  // as literals with indexed names.
  const block = Buffer.concat([Buffer.from([method === 'GET' ? 0x82 : 0x83, 0x87, 0x01]), hpackString('dns.test'), Buffer.from([0x04]), hpackString(pathText)]);
  const cancel = Buffer.alloc(4);
  cancel.writeUInt32BE(8);
  return Buffer.concat([frame(0x1, method === 'GET' ? 0x5 : 0x4, id, block), frame(0x3, 0, id, cancel)]);
}

/** A GET's HEADERS (END_STREAM, END_HEADERS) for stream `id`, without the reset. */
export function openGet(id: number, pathText: string): Buffer {
  const both = openAndCancel(id, 'GET', pathText);
  return both.subarray(0, both.length - 13);
}

/** SETTINGS with SETTINGS_INITIAL_WINDOW_SIZE: 0 lets the server send no reply data at all. */
export function settingsWindow(size: number): Buffer {
  const p = Buffer.alloc(6);
  p.writeUInt16BE(0x4, 0);
  p.writeUInt32BE(size, 2);
  return frame(0x4, 0, 0, p);
}
