// What a `ready` line configures, beside the plugin so the plugin never imports its setup.
import type { HttpAddress } from '../../pkg/http.js';

export type MonitorMode = 'until-ready' | 'continuously';

export interface ReadyConfig {
  /** Where /ready is served; blocks naming the same address share one listener. */
  address: HttpAddress;
  /** until-ready: a plugin that reported ready once is not asked again. */
  mode: MonitorMode;
}
