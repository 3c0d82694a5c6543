// `clusterdns check`: validate the Corefile and the manifests, and warn about what breaks DNS in
// real clusters. Same loading code as `serve`, so a clean check means the server starts.
import { buildApp } from '../app.js';
import { corefileErrors, loadCorefile, parseCorefile } from '../chain/corefile.js';
import { checkManifests } from '../cluster/check.js';
import { filledStatuses } from '../cluster/edge.js';
import { findingPlace, ManifestError, type Finding } from '../cluster/model.js';
import { defaultCorefile } from '../app.js';
import { createLogger } from './logger.js';
import { clusterOptions, type ClusterFlags } from './options.js';
import { manifestPath } from '../cluster/paths.js';

export interface CheckFlags extends ClusterFlags {
  warnOnly?: boolean;
  logLevel: string;
}

/** Manifest paths each kubernetes block reads: its own `manifests`, else the CLI's. */
function manifestPaths(flags: CheckFlags): string[] {
  const blocks = flags.conf ? loadCorefile(flags.conf) : parseCorefile(defaultCorefile(), '(built-in default Corefile)');
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

/** Returns the exit code: 0 clean (or only warnings with --warn-only), 1 otherwise. */
export async function check(flags: CheckFlags, out: NodeJS.WritableStream = process.stdout): Promise<number> {
  const log = createLogger(flags.logLevel, 2);
  const findings: Finding[] = [];
  const seen = new Set<string>();
  const add = (f: Finding): void => {
    const key = `${f.file}:${f.line}:${f.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      findings.push(f);
    }
  };
  let paths: string[] = [];
  try {
    paths = manifestPaths(flags);
  } catch (err) {
    const found = corefileErrors(err);
    if (!found) throw err;
    for (const e of found) add({ file: e.file, line: e.line, severity: 'error', message: e.reason });
  }
  const options = clusterOptions(flags);
  let manifestErrors = false;
  let skipped: ReadonlyMap<string, number> | undefined;
  let filled: { source: { file: string; line: number }; text: string }[] = [];
  if (paths.length > 0) {
    const { model, findings: manifestFindings } = checkManifests(paths, options);
    manifestFindings.forEach(add);
    manifestErrors = manifestFindings.some((f) => f.severity === 'error');
    skipped = model?.ignoredKinds;
    filled = filledStatuses(model?.edge, model?.services ?? []);
    if (model?.ignoredKinds && model.ignoredKinds.size > 0) log.debug({ ignoredKinds: Object.fromEntries(model.ignoredKinds) }, 'kinds ignored');
  }
  // Build the whole server (plugin options, bind addresses) without listening, unless the
  // manifests have errors; Corefile errors found above are found again there, with the plugins'.
  if (!manifestErrors) {
    try {
      const app = await buildApp({ conf: flags.conf, manifests: flags.manifests, logger: log, cluster: options, oneShot: true });
      await app.close();
    } catch (err) {
      const found = corefileErrors(err);
      if (found) for (const e of found) add({ file: e.file, line: e.line, severity: 'error', message: e.reason });
      else if (err instanceof ManifestError) err.findings.forEach(add);
      else add({ file: flags.conf ?? '(built-in default Corefile)', line: 0, severity: 'error', message: (err as Error).message });
    }
  }
  findings.sort((a, b) => (a.file === b.file ? a.line - b.line : a.file < b.file ? -1 : 1));
  for (const f of findings) out.write(`${findingPlace(f)}: ${f.severity}: ${f.message}${f.code ? ` [${f.code}]` : ''}\n`);
  // Statuses clusterdns filled in as the controllers would (info: not counted).
  for (const f of filled) out.write(`${f.source.file}:${f.source.line}: info: ${f.text} [status-filled]\n`);
  // Kinds without DNS meaning, once each, so nothing is skipped silently (info: not counted).
  for (const [kind, n] of skipped ?? []) out.write(`${paths.join(',')}: info: ${kind}: ${n} object(s) of a kind clusterdns does not use, skipped [kind-skipped]\n`);
  const errors = findings.filter((f) => f.severity === 'error').length;
  const warnings = findings.length - errors;
  out.write(`${errors} error(s), ${warnings} warning(s)${paths.length === 0 ? '; no manifests given (--manifests or a kubernetes `manifests` option)' : ''}\n`);
  if (errors > 0) return 1;
  return warnings > 0 && !flags.warnOnly ? 1 : 0;
}
