// The import arrows of ARCHITECTURE.md, checked on the source: a module may import only from its
// own layer and the layers below it. A new back-arrow fails here with the file and the import.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** The layer of a path under src: 'pkg', 'dns', 'plugins/kubernetes', 'app.ts', ... */
function area(file: string): string {
  const parts = relative(SRC, file).split('/');
  // src/plugins/index.ts (the registry list) is the layer above every plugin, below the app.
  if (parts[0] === 'plugins') return parts.length > 2 ? `plugins/${parts[1]}` : 'plugins';
  return parts[0]!;
}

const PLUGIN = ['pkg', 'dns', 'chain', 'cluster', 'metrics'];
/** What each area may import besides itself. */
function allowed(from: string): readonly string[] {
  if (from === 'pkg') return [];
  if (from === 'dns') return ['pkg'];
  if (from === 'cluster') return ['pkg'];
  if (from === 'metrics') return ['pkg', 'dns'];
  if (from === 'chain') return ['pkg', 'dns'];
  if (from.startsWith('plugins/')) return PLUGIN;
  if (from === 'plugins') return ['*'];
  if (from === 'server') return ['pkg', 'dns', 'chain', 'metrics'];
  return ['*'];
}

describe('import layers', () => {
  it('every import points down a layer', () => {
    const bad: string[] = [];
    for (const file of files(SRC)) {
      const from = area(file);
      const ok = allowed(from);
      for (const m of readFileSync(file, 'utf8').matchAll(/^(?:import|export)[^'"]*?from '(\.[^']+)'/gm)) {
        const to = area(resolve(dirname(file), m[1]!));
        if (to === from || ok.includes('*') || ok.includes(to)) continue;
        bad.push(`${relative(SRC, file)} imports ${m[1]} (${from} -> ${to})`);
      }
    }
    expect(bad).toEqual([]);
  });
});
