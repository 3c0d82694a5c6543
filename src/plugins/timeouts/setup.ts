// `timeouts { read DURATION; write DURATION; idle DURATION }` -> ctx.listener.timeouts, as CoreDNS's
// plugin/timeouts/timeouts.go reads it: at least one timeout, each between 1s and 24h, a bare
// integer counting seconds (CoreDNS's durations.NewDurationFromArg).
import type { PluginDefinition } from '../../chain/registry.js';
import type { Directive } from '../../chain/corefile.js';
import { excerpt } from '../../chain/excerpt.js';
import { OptionReader } from '../../chain/option-reader.js';
import { parseGoDuration, goDurationString } from '../../pkg/duration.js';
import { MAX_TIMEOUT_MS, MIN_TIMEOUT_MS, type TimeoutName, type TimeoutsConfig } from './config.js';

const EXAMPLES = '30s, 1m or 30 (seconds)';

function timeout(o: OptionReader): number {
  o.arity(1, 1, `${o.name} DURATION`, `${o.name} 30s`);
  const v = o.args[0]!;
  const ms = /^[0-9]+$/.test(v) ? Number(v) * 1000 : parseGoDuration(v);
  if (ms === undefined) o.fail(`"${excerpt(v)}" is not a duration; write e.g. ${EXAMPLES}`);
  if (ms < MIN_TIMEOUT_MS || ms > MAX_TIMEOUT_MS)
    o.fail(`"${excerpt(v)}" must be between ${goDurationString(MIN_TIMEOUT_MS)} and ${goDurationString(MAX_TIMEOUT_MS)}`);
  return ms;
}

export function parseTimeouts(d: Directive): TimeoutsConfig {
  const r = OptionReader.of(d).noArgs();
  const config: TimeoutsConfig = {};
  const set = (name: TimeoutName) => (o: OptionReader) => {
    const ms = timeout(o);
    if (name === 'read') config.readMs = ms;
    else if (name === 'write') config.writeMs = ms;
    else config.idleMs = ms;
  };
  r.block(
    { read: set('read'), write: set('write'), idle: set('idle') },
    {
      unsupported: {
        maxtcpqueries: 'clusterdns does not cap the queries of one connection; its idle timeout and connection caps bound a client instead',
      },
    },
  );
  if (Object.keys(config).length === 0) r.fail('the block sets no timeout: give at least one of read, write or idle, e.g. `idle 30s`, or remove the line');
  return config;
}

export const timeoutsPlugin: PluginDefinition = {
  name: 'timeouts',
  setup(d, ctx) {
    ctx.listener.timeouts = parseTimeouts(d);
    return undefined;
  },
};
