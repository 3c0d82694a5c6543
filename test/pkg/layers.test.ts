// The import arrows of ARCHITECTURE.md, checked on the source: a module may import only from its
// own layer and the layers below it. A new back-arrow fails here with the file and the import.
// Within a layer the arrows may not loop either: a circle of modules (type-only imports count,
// since they tie the files together for a reader just the same) fails with its members.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
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
  // The page's server sits with the commands whose code it shows (records, check, resolve).
  if (from === 'ui') return ['pkg', 'dns', 'chain', 'cluster', 'metrics', 'resolver', 'app.js', 'cli'];
  return ['*'];
}

const IMPORT = /^(?:import|export)[^'"]*?from '(\.[^']+)'/gm;

/** The relative imports of each file under src, as absolute .ts paths that exist. */
function importGraph(): Map<string, string[]> {
  const all = files(SRC);
  const known = new Set(all);
  const graph = new Map<string, string[]>();
  for (const file of all) {
    const out: string[] = [];
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const to = resolve(dirname(file), m[1]!).replace(/\.js$/, '.ts');
      if (known.has(to)) out.push(to);
    }
    graph.set(file, out);
  }
  return graph;
}

/** Strongly connected components of more than one file (Tarjan), each sorted, as paths under src. */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(relative(SRC, w));
    } while (w !== v);
    if (component.length > 1) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('import circles', () => {
  it('finds a circle when there is one', () => {
    const g = new Map([
      ['/a', ['/b']],
      ['/b', ['/c']],
      ['/c', ['/a']],
      ['/d', ['/a']],
    ]);
    expect(circles(g).map((c) => c.length)).toEqual([3]);
  });

  it('no module reaches itself through its imports', () => {
    expect(circles(importGraph()).map((c) => c.join(' '))).toEqual([]);
  });
});

/**
 * src/cluster's stages, in pipeline order: the model every stage reports into, reading files,
 * admitting objects as the API server does, playing the control plane; then what drives them
 * (load.ts, feed*.ts, check.ts at the top of src/cluster). A stage imports only its own and earlier ones.
 */
const STAGES = ['model', 'read', 'admit', 'emulate'];
function stage(file: string): number {
  const parts = relative(join(SRC, 'cluster'), file).split('/');
  const i = parts.length > 1 ? STAGES.indexOf(parts[0]!) : -1;
  return i >= 0 ? i : STAGES.length;
}

describe('src/cluster stages', () => {
  it('every import inside src/cluster points to its own stage or an earlier one', () => {
    const bad: string[] = [];
    for (const [file, targets] of importGraph()) {
      if (area(file) !== 'cluster') continue;
      for (const to of targets) {
        if (area(to) === 'cluster' && stage(to) > stage(file)) bad.push(`${relative(SRC, file)} imports ${relative(SRC, to)}`);
      }
    }
    expect(bad).toEqual([]);
  });
});

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

describe('src/ui', () => {
  it('only the command line imports the page server', () => {
    const bad: string[] = [];
    for (const [file, targets] of importGraph()) {
      const from = area(file);
      if (from === 'ui' || from === 'cli') continue;
      for (const to of targets) if (area(to) === 'ui') bad.push(`${relative(SRC, file)} imports ${relative(SRC, to)}`);
    }
    expect(bad).toEqual([]);
  });

  it('the browser code imports only itself and the shared JSON types', () => {
    const page = join(SRC, 'ui', 'page');
    const bad: string[] = [];
    for (const [file, targets] of importGraph()) {
      if (!file.startsWith(page)) continue;
      for (const to of targets) if (!to.startsWith(page) && to !== join(SRC, 'ui', 'types.ts')) bad.push(`${relative(SRC, file)} imports ${relative(SRC, to)}`);
    }
    expect(bad).toEqual([]);
  });
});
