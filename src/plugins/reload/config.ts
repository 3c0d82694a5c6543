// The reload plugin's settings as setup.ts reads them from the Corefile and plugin.ts applies them.

export interface ReloadConfig {
  /** Time between two reads of the Corefile. */
  intervalMs: number;
  /** Each wait is intervalMs plus a random share of [-jitterMs/2, +jitterMs/2); 0 for none. */
  jitterMs: number;
}
