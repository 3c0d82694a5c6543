// `https { max_connections N }` -> the connection cap of the block's https:// listeners, as
// CoreDNS's plugin/https/setup.go reads it: no arguments, N a non-negative integer (0 for no cap),
// given once. Without the line, or without max_connections, the listener keeps CoreDNS's 200.
// `max_streams`, `max_header_bytes` and `max_resets_per_second` are clusterdns's own: the other
// DoH limits, which CoreDNS leaves to Go's HTTP/2 server.
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
    max_streams: (o) => {
      o.arity(1, 1, 'max_streams N', 'max_streams 100');
      if (config.maxStreams !== undefined) o.fail('already defined for this server block; keep one line');
      config.maxStreams = o.int(0, 'max_streams', { min: 1, max: 10_000 });
    },
    max_header_bytes: (o) => {
      o.arity(1, 1, 'max_header_bytes N', 'max_header_bytes 98304');
      if (config.maxHeaderBytes !== undefined) o.fail('already defined for this server block; keep one line');
      config.maxHeaderBytes = o.int(0, 'max_header_bytes', { min: 1024, max: 1 << 20 });
    },
    max_resets_per_second: (o) => {
      o.arity(1, 1, 'max_resets_per_second N', 'max_resets_per_second 200');
      if (config.maxResetsPerSecond !== undefined) o.fail('already defined for this server block; keep one line');
      config.maxResetsPerSecond = o.int(0, 'max_resets_per_second', { min: 1, max: 1_000_000 });
    },
  });
  return config;
}

export const httpsPlugin: PluginDefinition = {
  name: 'https',
  setup(d, ctx) {
    const config = parseHttps(d);
    // Only what the Corefile sets: blocks sharing a listener compare these settings, and a block
    // with a bare `https` line agrees with one without it.
    if (Object.keys(config).length > 0) ctx.listener.https = config;
    return undefined;
  },
};
