// `log [NAMES...] [FORMAT] { class CLASSES... }`: one line per query, in CoreDNS's common log
// format by default, through the block's pino logger at info level.
import dnsPacket from 'dns-packet';
import type { Directive } from '../../chain/corefile.js';
import { CorefileError, excerpt } from '../../chain/corefile.js';
import type { PluginDefinition } from '../../chain/registry.js';
import type { Plugin } from '../../chain/plugin.js';
import type { QueryEvent } from '../../chain/plugin.js';
import { isProblem, parseQuery, type ParsedQuery } from '../../dns/query.js';
import { isSubdomain } from '../../pkg/names.js';
import { COMBINED_LOG_FORMAT, COMMON_LOG_FORMAT, parseFormat, render } from './format.js';

export type ResponseClass = 'success' | 'denial' | 'error' | 'all';
const CLASSES: readonly ResponseClass[] = ['success', 'denial', 'error', 'all'];

export interface LogRule {
  /** Lowercased, fully qualified name the query must be at or below. */
  nameScope: string;
  format: string;
  classes: ReadonlySet<ResponseClass>;
}

const fqdn = (n: string): string => (n.endsWith('.') ? n : `${n}.`).toLowerCase();

/** CoreDNS's logParse for one `log` line. */
export function parseLog(d: Directive): LogRule[] {
  let args = [...d.args];
  let format = COMMON_LOG_FORMAT;
  let names: string[];
  if (args.length === 0) names = ['.'];
  else if (args.length === 1) names = [args[0]!];
  else {
    const last = args[args.length - 1]!;
    if (last.includes('{')) {
      // As CoreDNS: the names stand for their formats anywhere in the format string.
      format = last.replaceAll('{common}', COMMON_LOG_FORMAT).replaceAll('{combined}', COMBINED_LOG_FORMAT);
      args = args.slice(0, -1);
    }
    names = args;
  }
  const classes = new Set<ResponseClass>();
  for (const o of d.block ?? []) {
    if (o.name !== 'class') throw new CorefileError(o.file, o.line, `unknown log option "${excerpt(o.name)}"; the only option is class`);
    if (o.args.length === 0) throw new CorefileError(o.file, o.line, 'log class needs at least one of success, denial, error, all');
    for (const c of o.args) {
      if (!(CLASSES as readonly string[]).includes(c)) throw new CorefileError(o.file, o.line, `log class: invalid Class: ${excerpt(c)} (use success, denial, error or all)`);
      classes.add(c as ResponseClass);
    }
  }
  if (classes.size === 0) classes.add('all');
  return names.map((n) => ({ nameScope: n === '.' ? '.' : fqdn(n), format, classes }));
}

/** CoreDNS's response.Typify + Classify on a wire reply. */
export function classify(reply: Buffer, q: ParsedQuery): Exclude<ResponseClass, 'all'> {
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
  constructor(readonly rules: readonly LogRule[]) {}
}

export const logPlugin: PluginDefinition = {
  name: 'log',
  setup(d, ctx) {
    return logPlugin.setupAll!([d], ctx);
  },
  // A block may have several `log` lines; their rules add up in order, as in CoreDNS.
  setupAll(directives, ctx) {
    const rules = directives.flatMap((d) => parseLog(d));
    const compiled = rules.map((r) => ({ ...r, nodes: parseFormat(r.format) }));
    const log = ctx.log.child({ plugin: 'log' });
    const keys = ctx.keys;
    const owns = (zone: string, port: number): boolean => keys.some((k) => k.zone === zone && (k.port === undefined || k.port === port));
    ctx.observe((e: QueryEvent) => {
      if (!e.reply) return;
      const parsed = parseQuery(e.msg);
      // Packets that never reach a plugin chain in CoreDNS are not logged by it either.
      if (isProblem(parsed)) return;
      if (parsed.qclass !== 1 || (parsed.edns && parsed.edns.version > 0)) return;
      const qname = parsed.name.toLowerCase();
      const zone = e.zoneOf(qname);
      if (zone === undefined || !owns(zone, e.local.port)) return;
      // The first rule whose name matches decides, as CoreDNS.
      const rule = compiled.find((r) => r.nameScope === '.' || isSubdomain(qname, r.nameScope));
      if (!rule) return;
      if (!rule.classes.has('all') && !rule.classes.has(classify(e.reply, parsed))) return;
      log.info(render(rule.nodes, e, parsed));
    });
    return new LogPlugin(rules);
  },
};
