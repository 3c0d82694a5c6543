// What a `prometheus` line configures, beside the plugin so the plugin never imports its setup.
import type { HttpAddress } from '../../pkg/http.js';

export interface PrometheusConfig {
  /** Where /metrics is served; blocks naming the same address share one listener. */
  address: HttpAddress;
}
