// The file plugin's query path (CoreDNS's plugin/file/file.go ServeDNS) and its reload loop
// (reload.go): zones are immutable; a reload parses the file again and swaps one reference.
import type { AppMetrics } from '../../metrics/index.js';
import { readRegularText } from '../../pkg/regular-file.js';
import type { Logger } from 'pino';
import type { DnsRequest, DnsResponse, Next, RecordLister, Transferer } from '../../chain/plugin.js';
import { canonicalCompare } from '../../dns/canonical.js';
import { Rcode, type Rr } from '../../dns/records.js';
import { fqdn, matchZone } from '../../pkg/names.js';
import { fallsThrough } from '../../pkg/fall.js';
import { parseZoneFile, ZoneFileError } from '../../dns/zonefile.js';
import type { FileConfig } from './config.js';
import { Zone } from './zone.js';

const YXDOMAIN = 6;

/** What a load produced: a zone per origin, and the texts it was built from (change detection). */
export interface Loaded {
  zones: Map<string, Zone>;
  /** Every file read (main file first, then $INCLUDEd ones). */
  files: string[];
  texts: string[];
}

/** Parses the zone file once per origin. Throws ZoneFileError (file, line, reason). */
export function loadZones(cfg: FileConfig, readText: (path: string) => string = (p) => readRegularText(p)): Loaded {
  const zones = new Map<string, Zone>();
  let files: string[] = [];
  let texts: string[] = [];
  for (const origin of cfg.zones) {
    const parsed = parseZoneFile({ origin, file: cfg.file, readFile: readText });
    zones.set(origin, new Zone(origin, parsed.records, cfg.file));
    if (files.length === 0) {
      files = parsed.files;
      texts = parsed.texts;
    }
  }
  return { zones, files, texts };
}

interface FileDeps {
  log: Logger;
  /** Where loads are recorded (the App's). */
  metrics: AppMetrics;
  /**
   * Called after a reload swapped in new data, so the server forgets encoded answers it cached
   * from the old zone (see README "Reload" and the hook proposed for src/server/handler.ts).
   */
  dataChanged?: () => void;
}

export class FilePlugin implements Transferer, RecordLister {
  readonly name = 'file';
  private loaded: Loaded;
  private readonly origins: string[];
  private timer?: NodeJS.Timeout;
  private reloading = false;
  /** Content of the last version that failed to parse, so a broken file is logged once. */
  private failedText?: string;
  /** Bumped by every successful reload. */
  generation = 0;

  constructor(
    readonly cfg: FileConfig,
    loaded: Loaded,
    private readonly deps: FileDeps,
  ) {
    this.loaded = loaded;
    this.origins = [...loaded.zones.keys()];
  }

  /** True when the server gave the plugin a way to drop its answer cache on reload. */
  get notifiesServer(): boolean {
    return typeof this.deps.dataChanged === 'function';
  }

  /** The zone currently served for an origin. */
  zone(origin: string): Zone | undefined {
    return this.loaded.zones.get(origin);
  }

  serve(req: DnsRequest, next: Next): DnsResponse | Promise<DnsResponse> {
    const origin = matchZone(req.qname, this.origins);
    if (!origin) return next(req);
    // Without the transfer plugin, CoreDNS's file refuses transfers (file.go).
    if (req.qtype === 'AXFR' || req.qtype === 'IXFR') {
      return { rcode: Rcode.REFUSED, aa: false, answer: [], authority: [], additional: [], cacheable: true };
    }
    const zone = this.loaded.zones.get(origin)!;
    const r = zone.lookup(req.qname, req.name, req.qtype);
    switch (r.kind) {
      case 'nxdomain':
        if (fallsThrough(this.cfg.fallthrough, req.qname)) return next(req);
        return { rcode: Rcode.NXDOMAIN, aa: true, answer: r.answer, authority: r.authority, additional: r.additional, cacheable: true };
      case 'referral':
        return { rcode: Rcode.NOERROR, aa: false, answer: r.answer, authority: r.authority, additional: r.additional, cacheable: true };
      case 'yxdomain':
        return { rcode: YXDOMAIN, aa: true, answer: r.answer, authority: r.authority, additional: r.additional, cacheable: true };
      default:
        return { rcode: Rcode.NOERROR, aa: true, answer: r.answer, authority: r.authority, additional: r.additional, cacheable: true };
    }
  }

  /**
   * Every record of every zone this plugin serves, SOA first per zone then in file order, as
   * stored (owners and most RDATA names lowercased), in dns-packet shapes for src/dns/present.ts.
   */
  records(): Rr[] {
    const out: Rr[] = [];
    for (const zone of this.loaded.zones.values()) for (const rr of zone.records) out.push({ ...rr });
    return out;
  }

  /** The records with the zone each belongs to (the most specific of this plugin's zones). */
  *listRecords(): Iterable<{ zone: string; rr: Rr }> {
    for (const rr of this.records()) {
      const zone = matchZone(fqdn(rr.name.toLowerCase()), this.cfg.zones);
      if (zone) yield { zone, rr };
    }
  }

  /**
   * The zone `origin` in CoreDNS's AXFR order (plugin/file/xfr.go), for the transfer plugin: the
   * SOA and apex NS, every other record by owner in canonical order (file order within a name),
   * then the SOA again. Undefined when `origin` is not one of this plugin's zones.
   */
  transfer(origin: string): Rr[] | undefined {
    const zone = this.loaded.zones.get(origin);
    if (!zone) return undefined;
    const rest = zone.records.filter((rr) => rr.type !== 'SOA' && !(rr.type === 'NS' && rr.name === origin));
    // Array.prototype.sort is stable: records of one owner keep their file order.
    rest.sort((a, b) => canonicalCompare(a.name, b.name));
    return [zone.soa, ...zone.ns, ...rest, zone.soa];
  }

  /** Starts the reload loop (no-op when reload is 0). */
  startReload(): void {
    if (this.cfg.reloadMs <= 0 || this.timer) return;
    this.timer = setInterval(() => void this.reload(), this.cfg.reloadMs);
    this.timer.unref();
  }

  /**
   * Reads the zone file (and its includes) again; when the content changed, parses it and swaps
   * the zones in. A file that fails to parse is logged with file:line and the previous version
   * keeps serving. Resolves true when new data was swapped in.
   */
  async reload(): Promise<boolean> {
    if (this.reloading) return false;
    this.reloading = true;
    try {
      const cache = new Map<string, string>();
      let changed = false;
      for (let i = 0; i < this.loaded.files.length; i++) {
        const f = this.loaded.files[i]!;
        let text: string;
        try {
          text = readRegularText(f);
        } catch (err) {
          const key = `missing:${f}`;
          if (this.failedText !== key) {
            this.failedText = key;
            this.deps.log.error(
              { plugin: 'file', file: f, zones: this.origins },
              `cannot read ${f}: ${(err as Error).message}; still serving the previous version`,
            );
          }
          return false;
        }
        cache.set(f, text);
        if (text !== this.loaded.texts[i]) changed = true;
      }
      if (!changed) return false;
      const joined = this.loaded.files.map((f) => cache.get(f)).join('\0');
      if (joined === this.failedText) return false;
      let next: Loaded;
      try {
        next = loadZones(this.cfg, (p) => cache.get(p) ?? readRegularText(p));
      } catch (err) {
        this.failedText = joined;
        this.deps.metrics.recordLoadError({ plugin: 'file', zones: this.origins });
        if (err instanceof ZoneFileError) {
          this.deps.log.error(
            { plugin: 'file', file: err.file, line: err.line, zones: this.origins },
            `zone file error, still serving the previous version: ${err.message}`,
          );
        } else {
          this.deps.log.error({ plugin: 'file', err, zones: this.origins }, 'zone reload failed, still serving the previous version');
        }
        return false;
      }
      this.failedText = undefined;
      this.loaded = next;
      this.deps.metrics.recordLoad({ plugin: 'file', zones: this.origins, records: this.records().length });
      this.generation++;
      this.deps.dataChanged?.();
      for (const [origin, zone] of next.zones) {
        this.deps.log.info({ plugin: 'file', zone: origin, file: this.cfg.file, serial: zone.serial, records: zone.records.length }, 'zone reloaded');
      }
      return true;
    } finally {
      this.reloading = false;
    }
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
