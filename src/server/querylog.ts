// `serve --log-queries`: one log line per packet received, with the rcode sent back, so a user
// can see exactly what a client's resolver asks (the resolver emulation is tested against it).
// With --workers, the logger given carries the worker's id.
import type { Logger } from 'pino';
import { rcodeToString } from '../pkg/rcode.js';
import { className, isProblem, parseQuery, typeName } from '../dns/query.js';
import type { QueryObserver } from '../chain/plugin.js';

export function queryLogger(log: Logger): QueryObserver {
  return ({ msg, reply, protocol, client }) => {
    const q = parseQuery(msg);
    const rcode = reply && reply.length >= 4 ? rcodeToString(reply[3]! & 0x0f) : 'none';
    if (isProblem(q)) {
      log.info({ query: { malformed: q.kind, proto: protocol, remote: client.address, port: client.port, rcode } }, 'query');
      return;
    }
    log.info(
      {
        query: {
          id: q.id,
          name: q.name,
          type: typeName(q.qtype),
          class: className(q.qclass),
          proto: protocol,
          remote: client.address,
          port: client.port,
          edns: q.edns !== undefined,
          rcode,
        },
      },
      'query',
    );
  };
}
