// The loop plugin's probe and counter (CoreDNS plugin/loop/loop.go). Once the listeners are up it
// asks its own server block `<random>.<random>.<zone> HINFO` and counts how often that exact
// question comes through; more than twice means the query went out and came back to us (e.g.
// `forward . 127.0.0.1` or a resolv.conf that points at this server): fatal.
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { DnsRequest, DnsResponse, Next, Plugin } from '../../chain/plugin.js';
import { isSubdomain } from '../../pkg/names.js';

/** How long the probe keeps trying to get through (CoreDNS: 30 s). */
const PROBE_DEADLINE_MS = 30_000;
/** Pause after a failed probe (CoreDNS: 1 s). */
const PROBE_RETRY_MS = 1_000;
/** One probe's wait for an answer (miekg/dns Exchange: 2 s). */
const PROBE_TIMEOUT_MS = 2_000;
/** After a probe got an answer, the plugin stays armed this long, then disables itself (2 s). */
export const DISARM_AFTER_MS = 2_000;

/** What a detected loop looks like, for the fatal handler. */
export interface LoopEvent {
  zone: string;
  qname: string;
  client: string;
  local: string;
  message: string;
}

/** A random unsigned 63-bit decimal label, like Go's rand.Int(). */
function randomLabel(): string {
  return (randomBytes(8).readBigUInt64BE() >> 1n).toString();
}

export class LoopPlugin implements Plugin {
  readonly name = 'loop';
  readonly qname: string;
  private seen = 0;
  private off = false;
  private closed = false;
  private fired = false;
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    readonly zone: string,
    /** Sends the probe into the server (its own block) and resolves when it is answered. */
    private readonly probe: (qname: string) => Promise<unknown>,
    /** Called once when a loop is seen; the default logs fatal and exits with status 1. */
    private readonly onLoop: (e: LoopEvent) => void,
  ) {
    this.qname = zone === '.' ? `${randomLabel()}.${randomLabel()}.` : `${randomLabel()}.${randomLabel()}.${zone}`;
  }

  get disabled(): boolean {
    return this.off;
  }

  /** How many times the probe question came through. */
  get count(): number {
    return this.seen;
  }

  serve(req: DnsRequest, next: Next): DnsResponse | Promise<DnsResponse> {
    if (req.qtype !== 'HINFO' || this.off || !isSubdomain(req.qname, this.zone)) return next(req);
    if (req.qname === this.qname) this.seen++;
    if (this.seen > 2 && !this.fired) {
      this.fired = true;
      const client = endpoint(req.client);
      const local = endpoint(req.local);
      this.onLoop({
        zone: this.zone,
        qname: this.qname,
        client,
        local,
        message:
          `Loop (${client} -> ${local}) detected for zone "${this.zone}", ` +
          `see https://coredns.io/plugins/loop#troubleshooting. Query: "HINFO ${this.qname}"`,
      });
    }
    return next(req);
  }

  /** Starts probing (not awaited: the server keeps starting while the probe runs). */
  start(): void {
    void this.run();
  }

  close(): void {
    this.closed = true;
    this.off = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.timers.delete(t);
        resolve();
      }, ms);
      t.unref();
      this.timers.add(t);
    });
  }

  private async run(): Promise<void> {
    const deadline = Date.now() + PROBE_DEADLINE_MS;
    while (!this.closed && Date.now() < deadline) {
      let answered = false;
      try {
        await Promise.race([
          this.probe(this.qname).then(() => {
            answered = true;
          }),
          this.sleep(PROBE_TIMEOUT_MS),
        ]);
      } catch {
        answered = false;
      }
      if (this.closed) return;
      if (answered) {
        await this.sleep(DISARM_AFTER_MS);
        break;
      }
      // CoreDNS resets the count when a probe fails, so only one probe's travels are counted.
      this.seen = 0;
      await this.sleep(PROBE_RETRY_MS);
    }
    this.off = true;
  }
}

function endpoint(e: { address: string; port: number }): string {
  return e.address.includes(':') ? `[${e.address}]:${e.port}` : `${e.address}:${e.port}`;
}

/** CoreDNS's log.Fatalf: the message at fatal level, then exit status 1. */
export function exitOnLoop(log: Logger): (e: LoopEvent) => void {
  return (e) => {
    log.fatal({ plugin: 'loop', zone: e.zone, query: `HINFO ${e.qname}` }, e.message);
    process.stderr.write(`plugin/loop: ${e.message}\n`);
    process.exit(1);
  };
}
