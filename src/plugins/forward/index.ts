// Registers the forward plugin: parse its block, start one Upstream per TO.
import type { PluginDefinition } from '../../chain/registry.js';
import type { DnsRequest, DnsResponse, Next, Plugin } from '../../chain/plugin.js';
import { ForwardPlugin } from './plugin.js';
import { parseForward } from './setup.js';

/**
 * Several `forward` lines in one block, as CoreDNS 1.14 allows: each passes the names it does
 * not forward (other FROM, `except`) to the next one, and the last to the next plugin.
 */
export class ForwardChain implements Plugin {
  readonly name = 'forward';

  constructor(readonly members: readonly ForwardPlugin[]) {}

  serve(req: DnsRequest, next: Next): DnsResponse | Promise<DnsResponse> {
    let step: Next = next;
    for (let i = this.members.length - 1; i >= 0; i--) {
      const member = this.members[i]!;
      const after = step;
      step = (r) => member.serve(r, after);
    }
    return step(req);
  }

  close(): void {
    for (const m of this.members) m.close();
  }
}

export const forwardPlugin: PluginDefinition = {
  name: 'forward',
  setup(d, ctx) {
    const cfg = parseForward(d, ctx.zones);
    ctx.log.info(
      { plugin: 'forward', from: cfg.from, to: cfg.upstreams.map((u) => u.label), policy: cfg.policy, except: cfg.except },
      'forward upstreams',
    );
    return new ForwardPlugin(cfg);
  },
  setupAll(directives, ctx) {
    // Parse every line first, so that a bad one leaves no upstream health checks running.
    const cfgs = directives.map((d) => parseForward(d, ctx.zones));
    for (const cfg of cfgs) {
      ctx.log.info({ plugin: 'forward', from: cfg.from, to: cfg.upstreams.map((u) => u.label), policy: cfg.policy, except: cfg.except }, 'forward upstreams');
    }
    return new ForwardChain(cfgs.map((cfg) => new ForwardPlugin(cfg)));
  },
};
