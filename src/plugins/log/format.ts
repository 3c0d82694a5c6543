// CoreDNS's log format placeholders (plugin/pkg/replacer), filled from the raw query and reply.
import type { QueryEvent } from '../../chain/plugin.js';
import type { ParsedQuery } from '../../dns/query.js';
import { classString, flagsString, replyRcode, secondsString, typeString } from '../../metrics/packet.js';
import { plainAddress } from '../../pkg/ip.js';
import { doBit, requestSize } from '../../chain/request.js';
import { rcodeLogString } from '../../pkg/rcode.js';

export const COMMON_LOG_FORMAT = '{remote}:{port} - {>id} "{type} {class} {name} {proto} {size} {>do} {>bufsize}" {rcode} {>rflags} {rsize} {duration}';
export const COMBINED_LOG_FORMAT = `${COMMON_LOG_FORMAT} "{>opcode}"`;
const EMPTY = '-';

const LABELS = new Set([
  '{type}',
  '{name}',
  '{class}',
  '{proto}',
  '{size}',
  '{remote}',
  '{port}',
  '{local}',
  '{>id}',
  '{>opcode}',
  '{>do}',
  '{>bufsize}',
  '{rcode}',
  '{rsize}',
  '{duration}',
  '{>rflags}',
]);

type Node = { kind: 'literal'; text: string } | { kind: 'label'; label: string } | { kind: 'metadata'; label: string };

/**
 * Splits a format into literals and placeholders as CoreDNS does: find a `}`, then the last `{`
 * before it; unknown `{X}` stay literal text, `{/LABEL}` is metadata (always `-` here: there is
 * no metadata plugin).
 */
export function parseFormat(format: string): Node[] {
  const nodes: Node[] = [];
  let s = format;
  for (;;) {
    const j = s.indexOf('}');
    if (j < 0) break;
    const i = s.lastIndexOf('{', j);
    if (i < 0) {
      nodes.push({ kind: 'literal', text: s.slice(0, j + 1) });
      s = s.slice(j + 1);
      continue;
    }
    const val = s.slice(i, j + 1);
    if (LABELS.has(val) || val.startsWith('{/')) {
      if (i > 0) nodes.push({ kind: 'literal', text: s.slice(0, i) });
      nodes.push(LABELS.has(val) ? { kind: 'label', label: val } : { kind: 'metadata', label: val.slice(2, -1) });
    } else {
      nodes.push({ kind: 'literal', text: s.slice(0, j + 1) });
    }
    s = s.slice(j + 1);
  }
  if (s.length > 0) nodes.push({ kind: 'literal', text: s });
  return nodes;
}

/** An address as CoreDNS's {remote} and {local} print it: IPv6 in brackets. */
function rfc3986(address: string): string {
  const a = plainAddress(address);
  return a.includes(':') ? `[${a}]` : a;
}

function value(label: string, e: QueryEvent, q: ParsedQuery): string {
  switch (label) {
    case '{type}':
      return typeString(q.qtype);
    case '{name}':
      return q.name.toLowerCase();
    case '{class}':
      return classString(q.qclass);
    case '{proto}':
      return e.protocol;
    case '{size}':
      return String(e.msg.length);
    case '{remote}':
      return rfc3986(e.client.address);
    case '{port}':
      return String(e.client.port);
    case '{local}':
      return rfc3986(e.local.address);
    case '{>id}':
      return String(q.id);
    case '{>opcode}':
      return String(q.opcode);
    case '{>do}':
      return String(doBit(q));
    case '{>bufsize}':
      // request.Size(): 64 KiB over TCP, else the EDNS0 size but at least 512.
      return String(requestSize({ protocol: e.protocol, edns: q.edns }));
    case '{rcode}':
      return e.reply ? rcodeLogString(replyRcode(e.reply)) : EMPTY;
    case '{rsize}':
      return e.reply ? String(e.reply.length) : EMPTY;
    case '{duration}':
      return `${secondsString(e.durationNs)}s`;
    case '{>rflags}':
      return e.reply ? flagsString(e.reply) : EMPTY;
    default:
      return EMPTY;
  }
}

/** Renders one log line. */
export function render(nodes: readonly Node[], e: QueryEvent, q: ParsedQuery): string {
  let out = '';
  for (const n of nodes) {
    if (n.kind === 'literal') out += n.text;
    else if (n.kind === 'label') out += value(n.label, e, q);
    else out += EMPTY;
  }
  return out;
}
