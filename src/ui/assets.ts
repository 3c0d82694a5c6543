// The page's HTML and stylesheet, and where its script is: built from src/ui/page/ by
// scripts/bundle.js into dist/ui/page.mjs (not .js: the bundler takes a .js file named by
// `new URL` for a worker entry).
import { readFileSync } from 'node:fs';

/** The page script as built, or undefined when it was not (a build without esbuild). */
export function builtPageScript(): string | undefined {
  try {
    return readFileSync(new URL('./page.mjs', import.meta.url), 'utf8');
  } catch {
    return undefined;
  }
}

/** One document for every view: the script reads the path (/ or /manifest) and the hash. */
export const INDEX_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>clusterdns</title>
<link rel="stylesheet" href="/style.css">
<script type="module" src="/page.js"></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header>
<h1>clusterdns</h1>
<nav aria-label="Views">
<ul>
<li><a id="nav-records" href="/#records">Records</a></li>
<li><a id="nav-resolve" href="/#resolve">Resolve</a></li>
<li><a id="nav-diff" href="/#diff">Diff</a></li>
</ul>
</nav>
<p id="status" role="status" aria-live="polite"></p>
<p id="tree" class="muted"></p>
</header>
<main id="main" tabindex="-1">
<noscript><p>This page needs JavaScript (served by clusterdns itself, nothing from elsewhere).</p></noscript>
</main>
</body>
</html>
`;

export const STYLE_CSS = `:root { color-scheme: light dark; --fg: #1b1f24; --bg: #fff; --muted: #57606a; --line: #d0d7de; --hl: #fff3b0; --err: #b42318; --warn: #9a6700; --info: #0969da; --accent: #0969da; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #8b949e; --line: #30363d; --hl: #4d3b00; --err: #ff7b72; --warn: #d29922; --info: #58a6ff; --accent: #58a6ff; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 1rem; padding: .5rem 1rem; border-bottom: 1px solid var(--line); }
header h1 { font-size: 1.1rem; margin: 0; }
nav ul { display: flex; gap: .75rem; list-style: none; margin: 0; padding: 0; }
nav a { color: var(--accent); text-decoration: none; padding: .2rem .4rem; border-radius: 4px; }
nav a[aria-current="page"] { background: var(--accent); color: var(--bg); }
#status { margin: 0 0 0 auto; color: var(--muted); font-size: .85rem; }
main { padding: .75rem 1rem; }
h2 { font-size: 1.05rem; margin: .25rem 0 .5rem; }
h3 { font-size: .95rem; margin: .75rem 0 .25rem; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 1px; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: .5rem; top: .5rem; background: var(--bg); padding: .25rem; }
table { border-collapse: collapse; width: 100%; font-size: .85rem; }
th, td { text-align: left; padding: .15rem .4rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { position: sticky; top: 0; background: var(--bg); }
td.data, td.name, .mono, pre, ol.source { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; white-space: pre-wrap; word-break: break-all; }
td.src { white-space: nowrap; word-break: normal; }
.unserved { cursor: help; text-decoration: underline dotted var(--muted); }
tr.ns th { background: var(--line); font-size: .9rem; }
tr.obj td { padding-top: .35rem; font-weight: 600; }
tbody tr:focus { background: var(--hl); }
.sev-error { color: var(--err); } .sev-warning { color: var(--warn); } .sev-info { color: var(--info); }
ul.findings { margin: .1rem 0; padding-left: 1.1rem; font-weight: normal; }
form.controls { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: end; margin-bottom: .5rem; }
form.controls .field { display: flex; flex-direction: column; }
form.controls label { font-size: .8rem; color: var(--muted); }
input, select, button { font: inherit; padding: .2rem .35rem; }
ol.timeline { list-style: none; padding: 0; margin: .5rem 0; border-left: 3px solid var(--line); }
ol.timeline li { padding: .15rem .5rem; margin-left: .5rem; }
.outcome-NXDOMAIN, .outcome-other { color: var(--err); } .outcome-NODATA { color: var(--warn); } .outcome-answer { color: var(--info); font-weight: 600; }
.result { font-weight: 600; }
ol.source { padding-left: 4.5em; margin: 0; }
ol.source li.hl { background: var(--hl); }
.muted { color: var(--muted); }
#tree { flex-basis: 100%; margin: 0; font-size: .85rem; }
#tree:empty { display: none; }
tr.change-added td:first-child { color: var(--info); font-weight: 600; } tr.change-removed td:first-child { color: var(--err); font-weight: 600; } tr.change-changed td:first-child { color: var(--warn); font-weight: 600; }
`;
