// How a serving process tells what a manifest load found: every rejected object as an error at
// its file and line (the API server would refuse it, so it is not served), warnings as warnings,
// and infos (kinds DNS does not use, simulated statuses) only at debug level.
import type { Finding } from './model/finding.js';

/** The pino methods this needs (a plugin's or the App's logger). */
export interface FindingLog {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
}

export function logFindings(log: FindingLog, findings: readonly Finding[], context: Readonly<Record<string, unknown>>, rejected: number): void {
  for (const f of findings) {
    const at = { ...context, file: f.file, line: f.line, ...(f.code !== undefined ? { code: f.code } : {}) };
    if (f.severity === 'error') log.error(at, `not served: ${f.message}`);
    else if (f.severity === 'warning') log.warn(at, f.message);
    else log.debug(at, f.message);
  }
  if (rejected > 0) {
    log.warn(
      { ...context, rejected },
      `${rejected} manifest object${rejected === 1 ? ' is' : 's are'} rejected as the API server would reject ${rejected === 1 ? 'it' : 'them'} (errors above, each at its file and line); everything else is served`,
    );
  }
}
