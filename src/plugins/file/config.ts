// The file plugin's settings as setup.ts reads them from the Corefile and plugin.ts applies them.

export interface FileConfig {
  /** Absolute path of the zone file. */
  file: string;
  /** Origins the file is loaded for, lowercased and fully qualified. */
  zones: string[];
  /** Milliseconds between checks of the file for changes; 0 disables (CoreDNS default 1m). */
  reloadMs: number;
  /** undefined: no fallthrough; []: every zone; else the listed zones. */
  fallthrough?: string[];
}
