// The log plugin's query side (CoreDNS plugin/log/log.go): one line per query of the block,
// through the block's pino logger at info level. It observes the packets rather than sitting in
// the chain, so answers from the server's answer cache are logged too.
import dnsPacket from 'dns-packet';
import type { Logger } from 'pino';
import type { ServerKey } from '../../chain/corefile.js';
import type { Plugin, QueryEvent } from '../../chain/plugin.js';
import { isProblem, parseQuery, type ParsedQuery } from '../../dns/query.js';
import { isSubdomain } from '../../pkg/names.js';
import { parseFormat, render } from './format.js';
import type { LogConfig, LogRule, ResponseClass } from './config.js';

/** CoreDNS's response.Typify + Classify on a wire reply. */
function classify(reply: Buffer, q: ParsedQuery): Exclude<ResponseClass, 'all'> {
  // UPDATE, NOTIFY and transfers are Update/Meta types: classified as errors.
  if (q.opcode === 5 || q.opcode === 4 || q.qtype === 252 || q.qtype === 251) return 'error';
  let packet;
  try {
    packet = dnsPacket.decode(reply);
  } catch {
    return 'error';
  }
  const rcode = reply[3]! & 0x0f;
  if ((packet.answers?.length ?? 0) > 0 && rcode === 0) return 'success';
  const authority = packet.authorities ?? [];
  const soa = authority.some((r) => r.type === 'SOA');
  if (soa && rcode === 0) return 'denial';
  if (soa && rcode === 3) return 'denial';
  if (rcode === 0) return 'success'; // delegation or plain NOERROR
  return 'error';
}

export class LogPlugin implements Plugin {
  readonly name = 'log';
  /** The rules with their formats parsed once, not per query. */
  private readonly compiled: (LogRule & { nodes: ReturnType<typeof parseFormat> })[];

  constructor(
    readonly cfg: LogConfig,
    private readonly keys: readonly ServerKey[],
    private readonly log: Logger,
  ) {
    this.compiled = cfg.rules.map((r) => ({ ...r, nodes: parseFormat(r.format) }));
  }

  get rules(): readonly LogRule[] {
    return this.cfg.rules;
  }

  /** The block's query observer: logs each query the first matching rule accepts. */
  readonly observe = (e: QueryEvent): void => {
    if (!e.reply) return;
    const parsed = parseQuery(e.msg);
    // Packets that never reach a plugin chain in CoreDNS are not logged by it either.
    if (isProblem(parsed)) return;
    if (parsed.qclass !== 1 || (parsed.edns && parsed.edns.version > 0)) return;
    const qname = parsed.name.toLowerCase();
    const zone = e.zoneOf(qname);
    if (zone === undefined || !this.owns(zone, e.local.port)) return;
    // The first rule whose name matches decides, as CoreDNS.
    const rule = this.compiled.find((r) => r.nameScope === '.' || isSubdomain(qname, r.nameScope));
    if (!rule) return;
    if (!rule.classes.has('all') && !rule.classes.has(classify(e.reply, parsed))) return;
    this.log.info(render(rule.nodes, e, parsed));
  };

  /** Blocks sharing a listener each observe every packet on it: log only this block's zones. */
  private owns(zone: string, port: number): boolean {
    return this.keys.some((k) => k.zone === zone && (k.port === undefined || k.port === port));
  }
}
