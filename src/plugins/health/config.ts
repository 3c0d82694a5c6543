// The health plugin's settings as setup.ts reads them from the Corefile and plugin.ts applies them.
import type { HttpAddress } from '../../pkg/http.js';

export interface HealthConfig {
  /** Where /health is served; blocks naming the same address share one listener. */
  address: HttpAddress;
  /** How long shutdown keeps serving before the listeners close; 0 for none. */
  lameduckMs: number;
}
