// The `yaml` package, for the documents the fast readers (yaml-fast.ts, json-scan.ts) leave to it.
import { createRequire } from 'node:module';
import type * as YamlPackage from 'yaml';

const requireHere = createRequire(import.meta.url);

let yamlPackage: typeof YamlPackage | undefined;

/**
 * The `yaml` package, loaded when a document first needs it. JSON and the plain block YAML that
 * yaml-fast.ts reads never do, and loading it costs tens of ms of CPU on the serving thread and
 * on every loader thread, before the first answer. (Its CommonJS build, so the load is synchronous.)
 */
export const yaml = (): typeof YamlPackage => (yamlPackage ??= requireHere('yaml') as typeof YamlPackage);
