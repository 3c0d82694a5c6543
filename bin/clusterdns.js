#!/usr/bin/env node
// The launcher runs the compiled CLI; `npm install` builds it (the `prepare` script). `npm run
// build` also bundles it (scripts/bundle.js): a few files instead of ~320 modules, which takes
// about a third off the time to the first answer (bench/startup.js). A bundle older than the
// compiled files (tsc ran alone since) is passed over, so a stale one never runs;
// CLUSTERDNS_BUNDLE=0 runs the compiled files as well.
import { statSync } from 'node:fs';

const mtime = (rel) => statSync(new URL(rel, import.meta.url), { throwIfNoEntry: false })?.mtimeMs;
const bundled = mtime('../dist/bundle/cli.js');
const compiled = mtime('../dist/cli/main.js');
const useBundle = process.env.CLUSTERDNS_BUNDLE !== '0' && bundled !== undefined && (compiled === undefined || bundled >= compiled);
const { main } = await import(useBundle ? '../dist/bundle/cli.js' : '../dist/cli/main.js');

main(process.argv).catch((err) => {
  process.stderr.write(`clusterdns: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
