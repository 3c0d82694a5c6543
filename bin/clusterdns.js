#!/usr/bin/env node
// The launcher runs the compiled CLI; `npm install` builds it (the `prepare` script).
import { main } from '../dist/cli/main.js';

main(process.argv).catch((err) => {
  process.stderr.write(`clusterdns: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
