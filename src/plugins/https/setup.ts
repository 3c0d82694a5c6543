// `https { max_connections N }` -> the connection cap of the block's https:// listeners, as
// CoreDNS's plugin/https/setup.go reads it: no arguments, N a non-negative integer (0 for no cap),
// given once. Without the line, or without max_connections, the listener keeps CoreDNS's 200.
import type { PluginDefinition } from '../../chain/registry.js';
import type { Directive } from '../../chain/corefile.js';
import { OptionReader } from '../../chain/option-reader.js';
import type { HttpsConfig } from './config.js';

export function parseHttps(d: Directive): HttpsConfig {
  const r = OptionReader.of(d).noArgs();
  const config: HttpsConfig = {};
  r.block({
    max_connections: (o) => {
      o.arity(1, 1, 'max_connections N', 'max_connections 200');
      if (config.maxConnections !== undefined) o.fail('already defined for this server block; keep one line');
      config.maxConnections = o.int(0, 'max_connections', { min: 0 });
    },
  });
  return config;
}

export const httpsPlugin: PluginDefinition = {
  name: 'https',
  setup(d, ctx) {
    const { maxConnections } = parseHttps(d);
    // Only what the Corefile sets: blocks sharing a listener compare these settings, and a block
    // with a bare `https` line agrees with one without it.
    if (maxConnections !== undefined) ctx.listener.https = { maxConnections };
    return undefined;
  },
};
