// The SARIF 2.1.0 properties a consumer relies on, checked without the network: what the OASIS
// schema (sarif-schema-2.1.0.json) requires of each object clusterdns writes, its enums and
// bounds, plus what GitHub code scanning needs to place a result (a relative URI and a line).
// Returns the problems found, each with its JSON path; [] for a valid log.

type Json = Record<string, unknown>;
const LEVELS = ['none', 'note', 'warning', 'error'];
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const isInt = (v: unknown, min: number): boolean => typeof v === 'number' && Number.isInteger(v) && v >= min;

/** A message: `text` or `id` (the schema's anyOf), strings. */
function message(v: unknown, at: string, out: string[]): void {
  if (!isObject(v)) return void out.push(`${at}: message must be an object`);
  if (typeof v['text'] !== 'string' && typeof v['id'] !== 'string') out.push(`${at}: message needs text or id`);
}

/** A URI reference (RFC 3986), relative here: no spaces or backslashes, no scheme-less absolute path. */
function uriReference(v: unknown, at: string, out: string[]): void {
  if (typeof v !== 'string' || v === '') return void out.push(`${at}: uri must be a non-empty string`);
  if (/[\s\\]/.test(v)) out.push(`${at}: uri "${v}" is not a URI reference (spaces and backslashes must be percent-encoded)`);
  try {
    new URL(v, 'file:///repo/');
  } catch {
    out.push(`${at}: uri "${v}" does not resolve`);
  }
}

function location(v: unknown, at: string, out: string[]): void {
  if (!isObject(v)) return void out.push(`${at}: must be an object`);
  const pl = v['physicalLocation'];
  if (pl === undefined) return;
  if (!isObject(pl)) return void out.push(`${at}.physicalLocation: must be an object`);
  // The schema: physicalLocation requires address or artifactLocation.
  if (pl['artifactLocation'] === undefined && pl['address'] === undefined) out.push(`${at}.physicalLocation: needs artifactLocation or address`);
  const al = pl['artifactLocation'];
  if (al !== undefined) {
    if (!isObject(al)) out.push(`${at}.physicalLocation.artifactLocation: must be an object`);
    else uriReference(al['uri'], `${at}.physicalLocation.artifactLocation.uri`, out);
  }
  const region = pl['region'];
  if (region !== undefined) {
    if (!isObject(region)) return void out.push(`${at}.physicalLocation.region: must be an object`);
    if (!isInt(region['startLine'], 1)) out.push(`${at}.physicalLocation.region.startLine: an integer >= 1 is required`);
    if (region['startColumn'] !== undefined && !isInt(region['startColumn'], 1)) out.push(`${at}.physicalLocation.region.startColumn: an integer >= 1`);
  }
}

export function validateSarif(log: unknown): string[] {
  const out: string[] = [];
  if (!isObject(log)) return ['$: the log must be an object'];
  if (log['version'] !== '2.1.0') out.push('$.version: must be "2.1.0"');
  if (log['$schema'] !== undefined && typeof log['$schema'] !== 'string') out.push('$.$schema: must be a string');
  const runs = log['runs'];
  if (!Array.isArray(runs)) return [...out, '$.runs: required array'];
  for (const [r, run] of runs.entries()) {
    const at = `$.runs[${r}]`;
    if (!isObject(run)) {
      out.push(`${at}: must be an object`);
      continue;
    }
    const tool = run['tool'];
    if (!isObject(tool)) {
      out.push(`${at}.tool: required object`);
      continue;
    }
    const driver = tool['driver'];
    if (!isObject(driver)) {
      out.push(`${at}.tool.driver: required object`);
      continue;
    }
    if (typeof driver['name'] !== 'string' || driver['name'] === '') out.push(`${at}.tool.driver.name: required string`);
    const rules = driver['rules'] ?? [];
    if (!Array.isArray(rules)) {
      out.push(`${at}.tool.driver.rules: must be an array`);
      continue;
    }
    const ids = new Set<string>();
    for (const [i, rule] of rules.entries()) {
      const rat = `${at}.tool.driver.rules[${i}]`;
      if (!isObject(rule) || typeof rule['id'] !== 'string') {
        out.push(`${rat}.id: required string`);
        continue;
      }
      if (ids.has(rule['id'])) out.push(`${rat}.id: "${rule['id']}" is not unique`);
      ids.add(rule['id']);
      if (rule['shortDescription'] !== undefined && (!isObject(rule['shortDescription']) || typeof rule['shortDescription']['text'] !== 'string')) {
        out.push(`${rat}.shortDescription: needs text`);
      }
      const level = isObject(rule['defaultConfiguration']) ? rule['defaultConfiguration']['level'] : undefined;
      if (level !== undefined && !LEVELS.includes(level as string)) out.push(`${rat}.defaultConfiguration.level: not a SARIF level`);
    }
    const columnKind = run['columnKind'];
    const kinds = ['utf16CodeUnits', 'unicodeCodePoints'];
    if (columnKind !== undefined && !kinds.includes(columnKind as string)) out.push(`${at}.columnKind: not a SARIF column kind`);
    const results = run['results'];
    if (results === undefined) continue;
    if (!Array.isArray(results)) {
      out.push(`${at}.results: must be an array`);
      continue;
    }
    for (const [i, res] of results.entries()) {
      const rat = `${at}.results[${i}]`;
      if (!isObject(res)) {
        out.push(`${rat}: must be an object`);
        continue;
      }
      message(res['message'], `${rat}.message`, out);
      if (res['level'] !== undefined && !LEVELS.includes(res['level'] as string)) out.push(`${rat}.level: not a SARIF level`);
      if (res['ruleId'] !== undefined && typeof res['ruleId'] !== 'string') out.push(`${rat}.ruleId: must be a string`);
      const index = res['ruleIndex'] as number | undefined;
      if (index !== undefined) {
        if (!isInt(index, -1)) out.push(`${rat}.ruleIndex: an integer >= -1`);
        else if (index >= 0 && (rules[index] as Json | undefined)?.['id'] !== res['ruleId']) {
          out.push(`${rat}.ruleIndex: does not point at rule "${String(res['ruleId'])}"`);
        }
      }
      const locations = res['locations'];
      if (locations !== undefined) {
        if (!Array.isArray(locations)) out.push(`${rat}.locations: must be an array`);
        else for (const [j, l] of locations.entries()) location(l, `${rat}.locations[${j}]`, out);
      }
    }
  }
  return out;
}
