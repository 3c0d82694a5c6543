// The hosts plugin's settings as setup.ts reads them from the Corefile and plugin.ts applies them.

export interface HostsConfig {
  /** The hosts file (default /etc/hosts; a relative path is relative to the Corefile). */
  path: string;
  /** Zones answered (lowercased, fully qualified); PTR queries are answered for any zone. */
  origins: string[];
  /** Inline entries from the block, one hosts line each. */
  inline: string[];
  ttl: number;
  autoReverse: boolean;
  /** 0 disables the periodic re-read (default 5 s). */
  reloadMs: number;
  /** undefined: no fallthrough; []: every zone; else the listed zones. */
  fallthrough?: string[];
}
