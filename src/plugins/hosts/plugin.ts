// The hosts plugin's query path (CoreDNS plugin/hosts/hosts.go): A, AAAA and PTR from an
// /etc/hosts-style file and inline entries; a name it does not know is SERVFAIL (there is no SOA
// to make an NXDOMAIN with) unless `fallthrough` hands it to the next plugin.
import { readRegularText } from '../../pkg/regular-file.js';
import fs from 'node:fs';
import type { Logger } from 'pino';
import type { DnsRequest, DnsResponse, Next, Plugin } from '../../chain/plugin.js';
import { Rcode, rr, type Rr } from '../../dns/records.js';
import { matchZone } from '../../pkg/names.js';
import { fallsThrough } from '../../pkg/fall.js';
import { reverseNameToIp } from '../../pkg/ip.js';
import { EMPTY_HOSTS, parseHosts, type HostsMap } from './hostsfile.js';
import type { HostsConfig } from './config.js';

interface HostsDeps {
  log: Logger;
  /** Called after a reload changed the data, so the server drops answers it cached. */
  dataChanged?: () => void;
}

export class HostsPlugin implements Plugin {
  readonly name = 'hosts';
  private file: HostsMap = EMPTY_HOSTS;
  private readonly inline: HostsMap;
  private stamp = '';
  private timer?: NodeJS.Timeout;

  constructor(
    readonly cfg: HostsConfig,
    private readonly deps: HostsDeps,
  ) {
    this.inline = parseHosts(cfg.inline.join('\n'), cfg.origins, cfg.autoReverse);
    this.readFile();
  }

  get entries(): number {
    return this.file.entries + this.inline.entries;
  }

  /**
   * Reads the file again when its modification time or size changed (CoreDNS's readHosts).
   * A file that cannot be read keeps the previous entries. Returns true when data changed.
   */
  readFile(): boolean {
    let stat: fs.Stats;
    let text: string;
    try {
      stat = fs.statSync(this.cfg.path);
      const stamp = `${stat.mtimeMs}|${stat.size}`;
      if (stamp === this.stamp) return false;
      text = readRegularText(this.cfg.path);
      this.stamp = stamp;
    } catch {
      return false;
    }
    this.file = parseHosts(text, this.cfg.origins, this.cfg.autoReverse);
    this.deps.log.debug({ file: this.cfg.path, entries: this.file.entries }, 'parsed hosts file');
    return true;
  }

  start(): void {
    if (this.cfg.reloadMs <= 0 || this.timer) return;
    this.timer = setInterval(() => {
      if (this.readFile()) {
        this.deps.dataChanged?.();
        this.deps.log.info({ file: this.cfg.path, entries: this.entries }, 'hosts file reloaded');
      }
    }, this.cfg.reloadMs);
    this.timer.unref();
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** File entries first, then inline ones (CoreDNS's lookupStaticHost). */
  private lookup(which: 'name4' | 'name6' | 'addr', key: string): string[] {
    return [...(this.file[which].get(key) ?? []), ...(this.inline[which].get(key) ?? [])];
  }

  serve(req: DnsRequest, next: Next): DnsResponse | Promise<DnsResponse> {
    const qname = req.qname;
    // PTR zones need not be listed as the plugin's zones.
    if (!matchZone(qname, this.cfg.origins) && req.qtype !== 'PTR') return next(req);
    let answer: Rr[] = [];
    switch (req.qtype) {
      case 'PTR': {
        const ip = reverseNameToIp(qname);
        const names = ip ? this.lookup('addr', ip) : [];
        // An address the hosts data does not know always goes on, fallthrough or not.
        if (names.length === 0) return next(req);
        answer = names.map((n) => rr(qname, 'PTR', this.cfg.ttl, n));
        break;
      }
      case 'A':
        answer = this.lookup('name4', qname).map((ip) => rr(qname, 'A', this.cfg.ttl, ip));
        break;
      case 'AAAA':
        answer = this.lookup('name6', qname).map((ip) => rr(qname, 'AAAA', this.cfg.ttl, ip));
        break;
      case 'ANY': {
        // RFC 8482 4.1: one RRset (A, else AAAA) rather than an empty answer for a known name.
        const v4 = this.lookup('name4', qname).map((ip) => rr(qname, 'A', this.cfg.ttl, ip));
        answer = v4.length > 0 ? v4 : this.lookup('name6', qname).map((ip) => rr(qname, 'AAAA', this.cfg.ttl, ip));
        break;
      }
    }
    if (answer.length === 0 && !this.exists(qname)) {
      if (fallsThrough(this.cfg.fallthrough, qname)) return next(req);
      return { rcode: Rcode.SERVFAIL, aa: false, answer: [], authority: [], additional: [], cacheable: true };
    }
    // NODATA has no SOA to send: an authoritative, empty NOERROR.
    return { rcode: Rcode.NOERROR, aa: true, answer, authority: [], additional: [], cacheable: true };
  }

  private exists(qname: string): boolean {
    return this.lookup('name4', qname).length > 0 || this.lookup('name6', qname).length > 0;
  }
}
