// `grpc_server { max_streams N; max_connections N }` -> the limits of the block's grpc://
// listeners, as CoreDNS's plugin/grpc_server/setup.go reads them: no arguments, each option once,
// non-negative integers where 0 means unbounded, the defaults for what is not given.
import type { PluginDefinition } from '../../chain/registry.js';
import type { Directive } from '../../chain/corefile.js';
import { OptionReader } from '../../chain/option-reader.js';
import { GRPC_SERVER_MAX, grpcServerDefaults, type GrpcServerConfig } from './config.js';

export function parseGrpcServer(d: Directive): GrpcServerConfig {
  const r = OptionReader.of(d).noArgs();
  const config: GrpcServerConfig = { ...grpcServerDefaults };
  const seen = new Set<string>();
  const option =
    (key: keyof GrpcServerConfig) =>
    (o: OptionReader): void => {
      if (seen.has(o.name)) o.fail('already defined for this server block');
      seen.add(o.name);
      config[key] = o.arity(1, 1, `${o.name} N`, `${o.name} ${grpcServerDefaults[key]}`).int(0, 'N', { min: 0, max: GRPC_SERVER_MAX });
    };
  r.block({ max_streams: option('maxStreams'), max_connections: option('maxConnections') });
  return config;
}

export const grpcServerPlugin: PluginDefinition = {
  name: 'grpc_server',
  setup(d, ctx) {
    ctx.listener.grpc = parseGrpcServer(d);
    return undefined;
  },
};
