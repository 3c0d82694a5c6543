// The request a plugin is answering, for its lookups back through the server. The edge plugins
// (k8s_gateway, k8s_external) resolve load balancer host names that way, and such a lookup can
// lead back to the same plugin: a status hostname that names itself, or two that name each other.
// The request being answered travels with the async call chain, and each lookup passes it to the
// server (BlockContext.lookup's `from`), so the server's trail bounds them as every internal lookup
// is bounded: a question already asked on the way, or a chain deeper than --max-lookup-depth,
// answers SERVFAIL.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DnsRequest } from './plugin.js';

const current = new AsyncLocalStorage<DnsRequest>();

/** Runs `f` (a plugin's answer to `req`) with `req` as the request its lookups come from. */
export function answering<T>(req: DnsRequest, f: () => T): T {
  return current.run(req, f);
}

/** The request being answered, for BlockContext.lookup's `from`. */
export function answeringRequest(): DnsRequest | undefined {
  return current.getStore();
}
