// The log plugin's settings as setup.ts reads them from the Corefile and plugin.ts applies them.

export type ResponseClass = 'success' | 'denial' | 'error' | 'all';

export interface LogRule {
  /** Lowercased, fully qualified name the query must be at or below. */
  nameScope: string;
  format: string;
  classes: ReadonlySet<ResponseClass>;
}

export interface LogConfig {
  /** Every rule of every log line of the block; the first whose name matches decides. */
  rules: LogRule[];
}
