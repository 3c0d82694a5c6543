// Lookups these plugins send back through the server (a load balancer host name resolved for an
// answer) can lead back to the same plugin: a status hostname that names itself, or two that
// name each other. The request being answered travels with the async call chain, and each
// lookup passes it to the server (BlockContext.lookup's `from`), so the server's trail bounds
// them as every internal lookup is bounded: a question already asked on the way, or a chain
// deeper than --max-lookup-depth, answers SERVFAIL.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DnsRequest } from '../../chain/plugin.js';

const current = new AsyncLocalStorage<DnsRequest>();

/** Runs `f` (a plugin's answer to `req`) with `req` as the request its lookups come from. */
export function answering<T>(req: DnsRequest, f: () => T): T {
  return current.run(req, f);
}

/** The request being answered, for BlockContext.lookup's `from`. */
export function answeringRequest(): DnsRequest | undefined {
  return current.getStore();
}
