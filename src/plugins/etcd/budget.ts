// What one etcd query may cost. CoreDNS follows every CNAME of every entry afresh
// (plugin/backend_lookup.go), so 45 keys whose entries all point at the next name cost 4^11
// lookups for one question; answers are memoised per query (see plugin.ts), and this budget
// bounds what is left: past it the query answers SERVFAIL and every other query goes on.
import type { Logger } from 'pino';

/** Work units one query may spend: mirror lookups, entries read and records built (a few µs each). */
export const DEFAULT_QUERY_WORK = 20_000;
/** Distinct names outside the plugin's zones one query may ask the server about. */
export const DEFAULT_OUTSIDE_LOOKUPS = 16;
/**
 * Records one section of an answer keeps. A 65,535-octet message holds at most ~5,000 records
 * (13 octets each at the least), so the encoder always truncates (TC) an answer cut here:
 * nothing a client could have received is lost, and ANCOUNT stays in range.
 */
export const MAX_SECTION_RECORDS = 8192;

export interface QueryBudgetConfig {
  work: number;
  outside: number;
}

/** Thrown out of the record builders when a query spent its budget; answered SERVFAIL. */
export class BudgetExceeded extends Error {}

/** The work one pass over a question has spent. */
export class QueryBudget {
  spent = 0;
  constructor(readonly limit: number) {}

  charge(units: number): void {
    this.spent += units;
    if (this.spent > this.limit) throw new BudgetExceeded(`needs more than query_budget ${this.limit} work units`);
  }
}

/**
 * `query_budget WORK [OUTSIDE]`: the parsed numbers, or what is wrong with the line. (setup.ts
 * calls this from its option switch.)
 */
export function parseQueryBudget(args: readonly string[]): QueryBudgetConfig | string {
  const whole = (s: string | undefined): number => (s !== undefined && /^\d{1,9}$/.test(s) ? Number(s) : 0);
  const work = whole(args[0]);
  const outside = args.length > 1 ? whole(args[1]) : DEFAULT_OUTSIDE_LOOKUPS;
  if (args.length < 1 || args.length > 2 || work < 1 || outside < 1) {
    return `query_budget needs one or two whole numbers of at least 1: work units per query and names outside the zones looked up per query, e.g. query_budget ${DEFAULT_QUERY_WORK} ${DEFAULT_OUTSIDE_LOOKUPS}`;
  }
  return { work, outside };
}

/**
 * A warning that repeats at most once per interval, counting the ones it held back: a client
 * repeating a costly question must not turn the log into the bottleneck.
 */
export class RateLimitedWarning {
  private last = -Infinity;
  private held = 0;
  constructor(
    private readonly log: Logger | undefined,
    private readonly intervalMs = 10_000,
  ) {}

  warn(fields: Record<string, unknown>, msg: string): void {
    const now = Date.now();
    if (now - this.last < this.intervalMs) {
      this.held++;
      return;
    }
    this.last = now;
    const suppressed = this.held;
    this.held = 0;
    this.log?.warn(suppressed > 0 ? { ...fields, suppressed } : fields, msg);
  }
}
