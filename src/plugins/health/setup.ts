// `health [ADDRESS] { lameduck DURATION }` -> a HealthConfig, as CoreDNS's plugin/health/setup.go
// reads it: every health line of a block counts, and the last address and lameduck given win.
import type { PluginDefinition } from '../../chain/registry.js';
import { excerpt, type Directive } from '../../chain/corefile.js';
import { OptionReader } from '../../chain/option-reader.js';
import { parseHttpAddress } from '../../pkg/http.js';
import { HealthPlugin } from './plugin.js';
import type { HealthConfig } from './config.js';

const DEFAULT_HEALTH_ADDRESS = ':8080';

function parseHealth(directives: readonly Directive[]): HealthConfig {
  let addressText = DEFAULT_HEALTH_ADDRESS;
  let addressAt: OptionReader | undefined;
  let lameduckMs = 0;
  for (const d of directives) {
    const r = OptionReader.of(d).arity(0, 1, 'health [ADDRESS]', 'health :8080');
    if (r.count === 1) {
      addressText = r.arg(0)!;
      addressAt = r;
    }
    r.block({
      lameduck: (o) => {
        lameduckMs = o.arity(1, 1, 'lameduck DURATION', 'lameduck 5s').duration(0, '', { examples: '500ms, 5s or 1m' });
      },
    });
  }
  const address = parseHttpAddress(addressText);
  const at: OptionReader = addressAt ?? OptionReader.of(directives[0]!);
  if (typeof address === 'string') at.fail(excerpt(address, 120));
  return { address, lameduckMs };
}

export const healthPlugin: PluginDefinition = {
  name: 'health',
  setup(d, ctx) {
    return healthPlugin.setupAll!([d], ctx);
  },
  setupAll(directives, ctx) {
    return new HealthPlugin(parseHealth(directives), ctx.log.child({ plugin: 'health' }), ctx.lameduck, ctx.metrics, ctx.httpLimits);
  },
};
