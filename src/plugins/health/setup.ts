// `health [ADDRESS] { lameduck DURATION }` -> a HealthConfig, as CoreDNS's plugin/health/setup.go
// reads it: every health line of a block counts, and the last address and lameduck given win.
import type { PluginDefinition } from '../../chain/registry.js';
import { CorefileError, excerpt, type Directive } from '../../chain/corefile.js';
import { parseHttpAddress, type HttpAddress } from '../../pkg/http.js';
import { parseGoDuration } from '../../pkg/duration.js';
import { HealthPlugin } from './plugin.js';

const DEFAULT_HEALTH_ADDRESS = ':8080';

export interface HealthConfig {
  /** Where /health is served; blocks naming the same address share one listener. */
  address: HttpAddress;
  /** How long shutdown keeps serving before the listeners close; 0 for none. */
  lameduckMs: number;
}

/** The one option, `lameduck DURATION`, in milliseconds. */
function parseLameduck(o: Directive): number {
  if (o.name !== 'lameduck') throw new CorefileError(o.file, o.line, `unknown health option "${excerpt(o.name)}"; the only option is lameduck`);
  if (o.args.length !== 1) throw new CorefileError(o.file, o.line, 'health lameduck needs one duration, e.g. `lameduck 5s`');
  const ms = parseGoDuration(o.args[0]!);
  if (ms === undefined) {
    throw new CorefileError(o.file, o.line, `health lameduck: unable to parse lameduck duration value "${excerpt(o.args[0]!)}"; write e.g. 500ms, 5s or 1m`);
  }
  return ms;
}

function parseHealth(directives: readonly Directive[]): HealthConfig {
  let addressText = DEFAULT_HEALTH_ADDRESS;
  let addressAt: Directive | undefined;
  let lameduckMs = 0;
  for (const d of directives) {
    if (d.args.length > 1) throw new CorefileError(d.file, d.line, 'health takes at most one address, e.g. `health :8080`');
    if (d.args[0] !== undefined) {
      addressText = d.args[0];
      addressAt = d;
    }
    for (const o of d.block ?? []) lameduckMs = parseLameduck(o);
  }
  const address = parseHttpAddress(addressText);
  const at = addressAt ?? directives[0]!;
  if (typeof address === 'string') throw new CorefileError(at.file, at.line, `health: ${excerpt(address, 120)}`);
  return { address, lameduckMs };
}

export const healthPlugin: PluginDefinition = {
  name: 'health',
  setup(d, ctx) {
    return healthPlugin.setupAll!([d], ctx);
  },
  setupAll(directives, ctx) {
    return new HealthPlugin(parseHealth(directives), ctx.log.child({ plugin: 'health' }));
  },
};
