// Bundles the compiled CLI (dist/cli/main.js) and every worker-thread entry it starts under
// dist/bundle/, after tsc: an entry per thread and the chunks they share, so Node reads and links
// a few modules instead of ~190 of ours and ~130 of the dependencies, the bulk of start-up
// (bench/startup.js).
// bin/clusterdns.js runs the bundle when it is at least as new as the compiled files.
//
// What stays outside, loaded from node_modules at run time as before:
// - pino and pino-pretty: pino starts its pretty-printing transport as a worker thread by file
//   path inside the package;
// - etcd3 and cockatiel: imported only when an etcd plugin or `sync` runs (etcd3 reads its .proto
//   files by path);
// - kubernetes-models' validators, which the code requires by file path.
// A package the code requires by name through createRequire (the yaml package, which the loader
// threads read on the first document that needs it) is bundled: the call becomes a plain
// require(), which esbuild bundles and still runs on first call.
//
// Worker threads are started with `new Worker(new URL('./x.js', import.meta.url))`. In a bundle
// import.meta.url is the bundle's, so every `new URL('<relative>', import.meta.url)` in our code
// is rewritten to reach the same file from dist/bundle/; a target that is a compiled module is a
// worker entry and gets a bundle of its own, to which the URL then points.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const outdir = path.join(dist, 'bundle');
const CLI_ENTRY = path.join(dist, 'cli', 'main.js');
const EXTERNAL = ['pino', 'pino-pretty', 'etcd3', 'cockatiel'];
const URL_RE = /new URL\((['"])(\.{1,2}\/[^'"]+)\1, import\.meta\.url\)/g;
const CREATE_REQUIRE_RE = /const (\w+) = createRequire\(import\.meta\.url\);/g;
/** `name('package')` for a createRequire binding `name`: a package required by name. */
const requireOf = (name) => new RegExp(`\\b${name}\\((['"])([^'"./][^'"]*)\\1\\)`, 'g');
// CommonJS dependencies inside an ES module bundle call require() for Node's built-ins.
const BANNER = "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);";

function jsFiles(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (p !== outdir) out.push(...jsFiles(p));
    } else if (e.name.endsWith('.js')) out.push(p);
  }
  return out;
}

/** Every `new URL(relative, import.meta.url)` target in the compiled code, by the file naming it. */
function urlTargets() {
  const targets = new Map();
  for (const file of jsFiles(dist)) {
    const text = readFileSync(file, 'utf8');
    if (!text.includes('import.meta.url')) continue;
    for (const m of text.matchAll(URL_RE)) targets.set(path.resolve(path.dirname(file), m[2]), file);
  }
  return targets;
}

/** The bundle's name for a worker entry: its path under dist/, flattened (plugins/kubernetes/load-worker.js -> plugins-kubernetes-load-worker.js). */
const bundleName = (file) => path.relative(dist, file).split(path.sep).join('-');

/** esbuild, or undefined when it is not installed (an install without dev dependencies). */
async function esbuild() {
  try {
    return await import('esbuild');
  } catch (err) {
    if (err?.code === 'ERR_MODULE_NOT_FOUND') return undefined;
    throw err;
  }
}

const PAGE_ENTRY = path.join(root, 'src', 'ui', 'page', 'main.ts');
/** The page script src/ui/assets.ts reads; .mjs, so that its `new URL` is no worker entry. */
export const PAGE_OUT = path.join(dist, 'ui', 'page.mjs');

/**
 * The page of `clusterdns ui` (browser code, DOM types): type-checked with its own tsconfig,
 * then bundled into one script, served from the same origin (no CDN, works offline).
 */
export async function bundlePage(esb) {
  execFileSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(root, 'src', 'ui', 'page', 'tsconfig.json')], {
    stdio: 'inherit',
  });
  await esb.build({ entryPoints: [PAGE_ENTRY], outfile: PAGE_OUT, bundle: true, platform: 'browser', target: 'es2022', format: 'esm', logLevel: 'warning' });
}

/** The bundles written, or undefined when esbuild is not installed. */
export async function bundle() {
  const esb = await esbuild();
  if (esb === undefined) return undefined;
  if (!existsSync(CLI_ENTRY)) throw new Error(`${path.relative(root, CLI_ENTRY)} is missing: run tsc first`);
  // Before the CLI: its bundle checks that every file a `new URL` names exists.
  await bundlePage(esb);
  const workers = [...urlTargets().keys()].filter((t) => t.startsWith(dist + path.sep) && t.endsWith('.js') && existsSync(t));
  const entries = [{ in: CLI_ENTRY, out: 'cli' }, ...workers.map((w) => ({ in: w, out: bundleName(w).slice(0, -3) }))];
  const relocated = new Set();
  const relocate = {
    name: 'relocate-import-meta-urls',
    setup(b) {
      b.onLoad({ filter: /\.js$/ }, (args) => {
        if (!args.path.startsWith(dist + path.sep)) return undefined;
        const text = readFileSync(args.path, 'utf8');
        if (!text.includes('import.meta.url')) return undefined;
        let contents = text;
        for (const [, name] of text.matchAll(CREATE_REQUIRE_RE)) {
          if (name !== 'require') contents = contents.replace(requireOf(name), (_all, _q, pkg) => `require(${JSON.stringify(pkg)})`);
        }
        contents = contents.replace(URL_RE, (_all, _q, rel) => {
          const target = path.resolve(path.dirname(args.path), rel);
          const to = workers.includes(target) ? path.join(outdir, bundleName(target)) : target;
          relocated.add(to);
          let href = path.relative(outdir, to).split(path.sep).join('/');
          if (!href.startsWith('.')) href = `./${href}`;
          return `new URL(${JSON.stringify(href)}, import.meta.url)`;
        });
        return { contents, loader: 'js', resolveDir: path.dirname(args.path) };
      });
    },
  };
  rmSync(outdir, { recursive: true, force: true });
  await esb.build({
    entryPoints: entries,
    outdir,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    // Shared code and what the CLI imports on demand go to chunks beside the entries: a dynamic
    // import stays a real one, so each command loads only its own code, with Node's own handling
    // of top-level await (esbuild's inlined on-demand modules deadlock on it).
    splitting: true,
    chunkNames: 'chunk-[hash]',
    external: EXTERNAL,
    banner: { js: BANNER },
    sourcemap: 'linked',
    logLevel: 'warning',
    plugins: [relocate],
  });
  // A loader whose worker file is missing would quietly load on the serving thread instead.
  const missing = [...relocated].filter((f) => !existsSync(f));
  if (missing.length > 0) throw new Error(`the bundle names files that do not exist: ${missing.join(', ')}`);
  return entries.map((e) => path.join(outdir, `${e.out}.js`));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const files = await bundle();
  if (files === undefined) {
    // `prepare` (npm install, npm pack) passes --optional: without esbuild the launcher runs dist/ as compiled.
    process.stdout.write('bundle: esbuild is not installed; bin/clusterdns.js runs the compiled modules\n');
    process.exit(process.argv.includes('--optional') ? 0 : 1);
  }
  const all = readdirSync(outdir).filter((f) => f.endsWith('.js'));
  const kib = Math.round(all.reduce((n, f) => n + statSync(path.join(outdir, f)).size, 0) / 1024);
  process.stdout.write(`bundled ${files.map((f) => path.relative(root, f)).join(', ')}: ${all.length} files, ${kib} KiB\n`);
}
