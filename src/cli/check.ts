// `clusterdns check`: validate the Corefile and the manifests, and warn about what breaks DNS in
// real clusters. Same loading code as `serve`, so a clean check means the server starts. Exit
// codes are those of eslint, so CI treats it like any linter: 0 clean or warnings only, 1 errors
// (or warnings under --strict or past --max-warnings), 2 for a command that cannot run as given.
import { existsSync } from 'node:fs';
import { buildApp, defaultCorefile } from '../app.js';
import { corefileErrors, loadCorefileCollect, parseCorefile, type CorefileError, type ParseResult, type ServerBlock } from '../chain/corefile.js';
import { checkManifests, modelInfos } from '../cluster/check.js';
import { ManifestError, type Finding } from '../cluster/model/finding.js';
import { manifestPath } from '../cluster/read/paths.js';
import { createLogger } from './logger.js';
import { clusterOptions, corefileLimits, type ClusterFlags } from './options.js';
import { fallbackCode } from './finding-codes.js';
import {
  compareFindings,
  formatJson,
  formatSarif,
  formatText,
  relativePath,
  summarize,
  type FindingObject,
  type OutputFormat,
  type ReportFinding,
} from './findings-output.js';
import { packageVersion } from './version.js';
import { EXIT_FINDINGS, EXIT_OK, EXIT_USAGE } from './exit-codes.js';

export interface CheckFlags extends ClusterFlags {
  /** Deprecated: warnings no longer fail without --strict; accepted so old pipelines keep working. */
  warnOnly?: boolean;
  /** Warnings fail the check (exit 1). */
  strict?: boolean;
  /** More warnings than this fail the check (exit 1). */
  maxWarnings?: number;
  output?: OutputFormat;
  logLevel: string;
}

export { EXIT_OK, EXIT_FINDINGS, EXIT_USAGE };

const BUILT_IN = '(built-in default Corefile)';

/** The exit code for `summary` under the flags: see the header. */
export function exitCode(summary: { errors: number; warnings: number }, flags: Pick<CheckFlags, 'strict' | 'maxWarnings'>): number {
  if (summary.errors > 0) return EXIT_FINDINGS;
  if (flags.strict && summary.warnings > 0) return EXIT_FINDINGS;
  if (flags.maxWarnings !== undefined && summary.warnings > flags.maxWarnings) return EXIT_FINDINGS;
  return EXIT_OK;
}

/** A Corefile error as a finding, coded by what kind of error it is. */
function corefileFinding(e: CorefileError): Finding {
  const r = e.reason;
  const code = /^unknown plugin\b|^plugin ".*" is a CoreDNS plugin that clusterdns does not support/.test(r)
    ? 'corefile-unknown-plugin'
    : /^unbalanced braces\b|^unexpected '}'/.test(r)
      ? 'corefile-unbalanced-braces'
      : 'corefile-error';
  return { file: e.file, line: e.line, severity: 'error', message: r, code };
}

/** Manifest paths each kubernetes block reads: its own `manifests`, else the CLI's. */
function manifestPaths(blocks: readonly ServerBlock[], flags: CheckFlags): string[] {
  const paths = new Set<string>();
  for (const block of blocks) {
    for (const d of block.directives) {
      if (d.name !== 'kubernetes' && d.name !== 'k8s_gateway') continue;
      // The same paths serve reads: relative to the Corefile's directory, not the current one.
      const own = (d.block ?? []).filter((o) => o.name === 'manifests').flatMap((o) => o.args.map((p) => manifestPath(p, o.file)));
      for (const p of own.length > 0 ? own : (flags.manifests ?? [])) paths.add(p);
    }
  }
  return [...paths];
}

/** What makes the command unusable as given (exit 2): a --conf or --manifests path that is not there. */
function usageError(flags: CheckFlags, corefile: ParseResult | undefined): string | undefined {
  const unreadable = corefile?.errors.find((e) => e.file === flags.conf && e.line === 0);
  if (unreadable) return `--conf ${flags.conf}: ${unreadable.reason}`;
  for (const p of flags.manifests ?? []) {
    if (!existsSync(p)) return `--manifests ${p}: no such file or directory`;
  }
  return undefined;
}

/** Returns the exit code: see exitCode, and EXIT_USAGE when the command cannot run as given. */
export async function check(flags: CheckFlags, out: NodeJS.WritableStream = process.stdout, err: NodeJS.WritableStream = process.stderr): Promise<number> {
  const log = createLogger(flags.logLevel, 2);
  const corefile = flags.conf !== undefined ? loadCorefileCollect(flags.conf, { limits: corefileLimits(flags) }) : undefined;
  const usage = usageError(flags, corefile);
  if (usage) {
    err.write(`clusterdns check: ${usage}\n`);
    return EXIT_USAGE;
  }
  const found: (Finding & { object?: FindingObject })[] = [];
  const add = (f: Finding): void => void found.push(f);

  for (const e of corefile?.errors ?? []) add(corefileFinding(e));
  const blocks = corefile ? corefile.blocks : parseCorefile(defaultCorefile(), BUILT_IN);
  const paths = manifestPaths(blocks, flags);

  const options = clusterOptions(flags);
  let manifestErrors = false;
  if (paths.length > 0) {
    const { model, findings } = checkManifests(paths, options);
    findings.forEach(add);
    manifestErrors = findings.some((f) => f.severity === 'error');
    modelInfos(model).forEach(add);
    if (model?.ignoredKinds && model.ignoredKinds.size > 0) log.debug({ ignoredKinds: Object.fromEntries(model.ignoredKinds) }, 'kinds ignored');
  }
  // Build the whole server (plugin options, bind addresses) without listening, unless the
  // manifests have errors; Corefile errors found above are found again there, with the plugins'.
  if (!manifestErrors) {
    try {
      const app = await buildApp({
        conf: flags.conf,
        manifests: flags.manifests,
        logger: log,
        cluster: options,
        oneShot: true,
        corefileLimits: corefileLimits(flags),
      });
      await app.close();
    } catch (e) {
      const errors = corefileErrors(e);
      if (errors) for (const x of errors) add(corefileFinding(x));
      else if (e instanceof ManifestError) e.findings.forEach(add);
      else add({ file: flags.conf ?? BUILT_IN, line: 0, severity: 'error', code: 'corefile-error', message: (e as Error).message });
    }
  }

  const findings = reportFindings(found, relativePath);
  const summary = summarize(findings);
  const format = flags.output ?? 'text';
  if (format === 'json') out.write(formatJson(findings, summary));
  else if (format === 'sarif') out.write(formatSarif(findings, packageVersion()));
  else {
    let note = '';
    // Only worth saying when no error explains the empty check (a broken Corefile names none).
    if (paths.length === 0 && summary.errors === 0) note = '; no manifests given (--manifests or a kubernetes `manifests` option)';
    const tooMany = summary.errors === 0 && flags.maxWarnings !== undefined && summary.warnings > flags.maxWarnings;
    if (tooMany) note += `; more than --max-warnings ${flags.maxWarnings}`;
    out.write(formatText(findings, summary, note));
  }
  return exitCode(summary, flags);
}

/**
 * The findings as reported: paths as `show` gives them (relative to the current directory for
 * `check`, to a side's root for `diff`), every one coded, repeats dropped, in order.
 */
export function reportFindings(found: readonly (Finding & { object?: FindingObject })[], show: (file: string) => string): ReportFinding[] {
  const seen = new Set<string>();
  const out: ReportFinding[] = [];
  for (const f of found) {
    const file = show(f.file);
    const code = f.code ?? fallbackCode(f);
    // The same error may be found twice: by the Corefile parse and again by the server build.
    const key = `${file}\0${f.line}\0${f.column ?? 0}\0${f.severity}\0${f.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const object = f.object;
    const column = f.column !== undefined ? { column: f.column } : {};
    out.push({ file, line: f.line, ...column, severity: f.severity, code, message: f.message, ...(object ? { object } : {}) });
  }
  return out.sort(compareFindings);
}
