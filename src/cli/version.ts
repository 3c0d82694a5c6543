// The version `clusterdns --version` prints: package.json's, read from the installed package.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export function packageVersion(): string {
  // dist/cli/version.js and src/cli/version.ts both sit two levels below the package root.
  const file = fileURLToPath(new URL('../../package.json', import.meta.url));
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}
