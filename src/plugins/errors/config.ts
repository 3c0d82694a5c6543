// The errors plugin's settings as setup.ts reads them from the Corefile and plugin.ts applies them.

export type Level = 'warn' | 'error' | 'info' | 'debug';

export interface ConsolidatePattern {
  periodMs: number;
  /** Matched anywhere in the error message (Go's MatchString); RE2 from a Corefile. */
  pattern: { test(message: string): boolean };
  /** The regular expression as written, for the summary line. */
  source: string;
  level: Level;
  /** Log the first error of each period in full, and summarise only the ones after it. */
  showFirst?: boolean;
}

export interface ErrorsConfig {
  /** In Corefile order: an error counts for the first pattern that matches. */
  patterns: ConsolidatePattern[];
  /** `stacktrace`: log each error with its stack, not only its message. */
  stacktrace: boolean;
}
