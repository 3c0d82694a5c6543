// The manifest watcher's file system events: real files in a temporary directory, real fs.watch,
// real timers. The poll interval is an hour unless a test is about the poll, so whatever is seen
// was seen through events.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManifestWatcher, type WatchOptions } from '../../src/cluster/read/watch.js';
import { repoRoot } from '../helpers/server.js';
import { pace, quietFor, waitUntil } from '../helpers/wait.js';

const HOUR = 3_600_000;

const service = (name: string, ip: string): string =>
  `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n  clusterIP: ${ip}\n  ports: [{name: http, port: 80}]\n`;

/** inotify watches this process holds now (every fs.watch of the event loop shares one inotify descriptor). */
function inotifyWatches(): number {
  let n = 0;
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    let link;
    try {
      link = fs.readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue; // the directory's own descriptor, closed by now
    }
    if (link !== 'anon_inode:inotify') continue;
    n += fs
      .readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('inotify wd:')).length;
  }
  return n;
}

const dirs: string[] = [];
const watchers: ManifestWatcher[] = [];
afterEach(() => {
  for (const w of watchers.splice(0)) w.stop();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-watch-'));
  dirs.push(d);
  return d;
}

/**
 * A started watcher of `paths` and the changes it reported, each with what `probe` saw then. Returns
 * once the look that start() makes is over, so that what a test sees next came from events.
 */
async function watching(paths: string[], opts: WatchOptions & { intervalMs?: number; probe?: () => string } = {}) {
  const changes: string[] = [];
  const w = new ManifestWatcher(paths, opts.intervalMs ?? HOUR, () => changes.push(opts.probe ? opts.probe() : 'change'), opts);
  watchers.push(w);
  w.start();
  await quietFor(3 * (opts.settleMs ?? 50), 'the look start() makes, so what follows comes from events');
  return { w, changes };
}

/** Waits for the `n`th change, then a short spell in which no other comes. */
async function expectChanges(changes: string[], n: number): Promise<void> {
  await waitUntil(`change ${n}`, () => changes.length >= n, 3000, 10);
  await quietFor(250, 'a spell in which no other change may come');
  expect(changes.length).toBe(n);
}

describe('ManifestWatcher events', () => {
  it('notices a new file, a file renamed over another, and a deletion', async () => {
    const d = tempDir();
    fs.writeFileSync(path.join(d, 'web.yaml'), service('web', '10.96.0.1'));
    const { w, changes } = await watching([d]);
    expect(w.mode).toBe('events');
    expect(w.watchCount).toBe(1);

    fs.writeFileSync(path.join(d, 'api.yaml'), service('api', '10.96.0.2'));
    await expectChanges(changes, 1);

    // An editor's or kubectl's way: a temporary file, renamed over the old one.
    fs.writeFileSync(path.join(d, 'web.yaml.tmp-1234'), service('web', '10.96.0.9'));
    fs.renameSync(path.join(d, 'web.yaml.tmp-1234'), path.join(d, 'web.yaml'));
    await expectChanges(changes, 2);

    fs.rmSync(path.join(d, 'api.yaml'));
    await expectChanges(changes, 3);
  });

  it('watches a new subdirectory: its first file, and the files written there later', async () => {
    const d = tempDir();
    const { w, changes } = await watching([d]);
    fs.mkdirSync(path.join(d, 'team-a/apps'), { recursive: true });
    fs.writeFileSync(path.join(d, 'team-a/apps/web.yaml'), service('web', '10.96.0.1'));
    await expectChanges(changes, 1);
    expect(w.watchCount).toBe(3);
    // Only the new directories' own watches can see this one: the poll is an hour away.
    fs.writeFileSync(path.join(d, 'team-a/apps/api.yaml'), service('api', '10.96.0.2'));
    await expectChanges(changes, 2);
    fs.rmSync(path.join(d, 'team-a'), { recursive: true });
    await expectChanges(changes, 3);
    await waitUntil('the removed directories unwatched', () => w.watchCount === 1, 2000, 10);
  });

  it('sees the watched directory itself removed and made again', async () => {
    const d = tempDir();
    const m = path.join(d, 'm');
    fs.mkdirSync(m);
    fs.writeFileSync(path.join(m, 'web.yaml'), service('web', '10.96.0.1'));
    const { changes } = await watching([m]);
    fs.rmSync(m, { recursive: true });
    await expectChanges(changes, 1);
    fs.mkdirSync(m);
    fs.writeFileSync(path.join(m, 'web.yaml'), service('web', '10.96.0.2'));
    await expectChanges(changes, 2);
    fs.writeFileSync(path.join(m, 'api.yaml'), service('api', '10.96.0.3'));
    await expectChanges(changes, 3);
  });

  it('watches a directory removed and made again at once, though it may have the same inode', async () => {
    const d = tempDir();
    fs.mkdirSync(path.join(d, 'sub'));
    fs.writeFileSync(path.join(d, 'sub/web.yaml'), service('web', '10.96.0.1'));
    const { changes } = await watching([d]);
    for (let round = 1; round <= 3; round++) {
      fs.rmSync(path.join(d, 'sub'), { recursive: true });
      fs.mkdirSync(path.join(d, 'sub'));
      fs.writeFileSync(path.join(d, 'sub/web.yaml'), service('web', `10.96.0.${round + 1}`));
      await expectChanges(changes, 2 * round - 1);
      fs.writeFileSync(path.join(d, 'sub/api.yaml'), service('api', `10.96.1.${round}`));
      await expectChanges(changes, 2 * round);
    }
  });

  it('follows a manifest path that is a link to a directory when the link is pointed elsewhere', async () => {
    const d = tempDir();
    for (const v of ['v1', 'v2']) {
      fs.mkdirSync(path.join(d, v));
      fs.writeFileSync(path.join(d, v, 'web.yaml'), service('web', v === 'v1' ? '10.96.0.1' : '10.96.0.2'));
    }
    fs.symlinkSync('v1', path.join(d, 'current'));
    const { changes } = await watching([path.join(d, 'current')]);
    fs.symlinkSync('v2', path.join(d, 'current.new'));
    fs.renameSync(path.join(d, 'current.new'), path.join(d, 'current'));
    await expectChanges(changes, 1);
    fs.writeFileSync(path.join(d, 'v2/api.yaml'), service('api', '10.96.0.3'));
    await expectChanges(changes, 2);
  });

  it('applies a file written in chunks once, after the last chunk', async () => {
    const d = tempDir();
    const file = path.join(d, 'list.yaml');
    const full = Array.from({ length: 40 }, (_, i) => `---\n${service(`svc-${i}`, `10.96.1.${i + 1}`)}`).join('');
    const { changes } = await watching([d], { probe: () => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '') });
    // A chunk every 5 ms for 40 chunks: 200 ms of writing, more than the whole quiet spell
    // asked of a change (two looks 50 ms apart), so a watcher that looked on every event, or
    // took the first quiet look as final, would report a cut.
    const chunk = Math.ceil(full.length / 40);
    for (let at = 0; at < full.length; at += chunk) {
      fs.appendFileSync(file, full.slice(at, at + chunk));
      await pace(5);
    }
    await expectChanges(changes, 1);
    expect(changes[0]).toBe(full);
  });

  it('applies a slow writer once, after the last chunk, though it pauses longer than the quiet spell', async () => {
    const d = tempDir();
    const file = path.join(d, 'list.yaml');
    const full = Array.from({ length: 4 }, (_, i) => `---\n${service(`svc-${i}`, `10.96.1.${i + 1}`)}`).join('');
    const { changes } = await watching([d], { settleMs: 200, probe: () => fs.readFileSync(file, 'utf8') });
    // 250 ms between chunks: each pause outlasts one quiet spell (200 ms) but not two, so the look
    // after the first pause sees the file moving at the next, and asks longer pauses of it after.
    const chunk = Math.ceil(full.length / 4);
    for (let at = 0; at < full.length; at += chunk) {
      fs.appendFileSync(file, full.slice(at, at + chunk));
      await pace(250);
    }
    await waitUntil('the change', () => changes.length >= 1, 5000, 10);
    await quietFor(250, 'a spell in which no second change may come');
    expect(changes).toEqual([full]);
  });

  it('lets other files be written beside the manifests without holding a change back', async () => {
    const d = tempDir();
    fs.writeFileSync(path.join(d, 'web.yaml'), service('web', '10.96.0.1'));
    const { changes } = await watching([d]);
    // A log and an editor's swap file written every 10 ms for a second: were their events to
    // count, no quiet spell would come until they stop.
    let seenAt: number | undefined;
    for (let i = 0; i < 100; i++) {
      fs.appendFileSync(path.join(d, 'notes.txt'), `line ${i}\n`);
      fs.writeFileSync(path.join(d, '.web.yaml.swp'), `swap ${i}`);
      if (i === 10) fs.writeFileSync(path.join(d, 'api.yaml'), service('api', '10.96.0.2'));
      if (seenAt === undefined && changes.length > 0) seenAt = i;
      await pace(10);
    }
    expect(seenAt).toBeDefined();
    await quietFor(250, 'a spell in which no second change may come');
    expect(changes.length).toBe(1);
  });

  it('follows symlinks: a file named through a link, a link in a tree, and a ConfigMap-style ..data swap', async () => {
    const d = tempDir();
    // A manifest path that is a link to a file elsewhere: a write in place of the target.
    fs.mkdirSync(path.join(d, 'real'));
    fs.writeFileSync(path.join(d, 'real/web.yaml'), service('web', '10.96.0.1'));
    fs.symlinkSync(path.join(d, 'real/web.yaml'), path.join(d, 'web.yaml'));
    // A mounted ConfigMap: the files are links through ..data to a timestamped directory, and an
    // update makes a new directory and renames a new ..data over the old one.
    const cm = path.join(d, 'cm');
    fs.mkdirSync(path.join(cm, '..2026_01'), { recursive: true });
    fs.writeFileSync(path.join(cm, '..2026_01/api.yaml'), service('api', '10.96.0.2'));
    fs.symlinkSync('..2026_01', path.join(cm, '..data'));
    fs.symlinkSync('..data/api.yaml', path.join(cm, 'api.yaml'));
    // A tree with a link to a file outside it.
    fs.mkdirSync(path.join(d, 'tree'));
    fs.writeFileSync(path.join(d, 'real/db.yaml'), service('db', '10.96.0.3'));
    fs.symlinkSync(path.join(d, 'real/db.yaml'), path.join(d, 'tree/db.yaml'));
    const { changes } = await watching([path.join(d, 'web.yaml'), cm, path.join(d, 'tree')]);

    fs.writeFileSync(path.join(d, 'real/web.yaml'), service('web', '10.96.0.9'));
    await expectChanges(changes, 1);
    fs.writeFileSync(path.join(d, 'real/db.yaml'), service('db', '10.96.0.7'));
    await expectChanges(changes, 2);

    fs.mkdirSync(path.join(cm, '..2026_02'));
    fs.writeFileSync(path.join(cm, '..2026_02/api.yaml'), service('api', '10.96.0.8'));
    fs.symlinkSync('..2026_02', path.join(cm, '..data_tmp'));
    fs.renameSync(path.join(cm, '..data_tmp'), path.join(cm, '..data'));
    fs.rmSync(path.join(cm, '..2026_01'), { recursive: true });
    await expectChanges(changes, 3);
  });

  it('leaves no watch behind after stop(), and reports nothing after it', async () => {
    const d = tempDir();
    fs.mkdirSync(path.join(d, 'a/b'), { recursive: true });
    const before = inotifyWatches();
    const { w, changes } = await watching([d], { intervalMs: 100 });
    expect(inotifyWatches()).toBe(before + 3);
    fs.writeFileSync(path.join(d, 'a/b/web.yaml'), service('web', '10.96.0.1'));
    w.stop();
    expect(w.mode).toBe('off');
    expect(w.watchCount).toBe(0);
    expect(inotifyWatches()).toBe(before);
    await quietFor(300, "a quiet spell's two looks and two polls' time: a stopped watcher reports nothing");
    expect(changes).toEqual([]);
  });

  it('never keeps a process alive: one that starts a watcher and returns exits', () => {
    const d = tempDir();
    fs.writeFileSync(path.join(d, 'web.yaml'), service('web', '10.96.0.1'));
    // The compiled module, as the server runs it; the process is killed if it hangs.
    const script = `
      const { ManifestWatcher } = await import(${JSON.stringify(path.join(repoRoot, 'dist/cluster/read/watch.js'))});
      const w = new ManifestWatcher([${JSON.stringify(d)}], 100, () => {});
      w.start();
      if (w.mode !== 'events') throw new Error('not watching: ' + w.mode);
      console.log('started');`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 10_000 });
    expect(r.stderr).toBe('');
    expect(r.signal).toBeNull();
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('started\n');
  });

  it('does not watch when the interval is 0 or less', async () => {
    const d = tempDir();
    const { w } = await watching([d], { intervalMs: 0 });
    expect(w.mode).toBe('off');
    expect(w.watchCount).toBe(0);
  });
});

describe('ManifestWatcher fallback to polling', () => {
  it('polls when fs.watch throws (a full inotify table)', async () => {
    const d = tempDir();
    const watchesBefore = inotifyWatches();
    const enospc = (): fs.FSWatcher => {
      throw Object.assign(new Error('ENOSPC: System limit for number of file watchers reached'), { code: 'ENOSPC' });
    };
    const modes: string[] = [];
    const { w, changes } = await watching([d], { intervalMs: 100, watch: enospc, onMode: (m, why) => modes.push(`${m}: ${why}`) });
    expect(modes).toEqual(['polling: cannot watch ' + d + ': ENOSPC: System limit for number of file watchers reached: polling only']);
    expect(w.mode).toBe('polling');
    expect(w.pollingReason).toMatch(/ENOSPC/);
    expect(inotifyWatches()).toBe(watchesBefore);
    fs.writeFileSync(path.join(d, 'web.yaml'), service('web', '10.96.0.1'));
    await expectChanges(changes, 1);
  });

  it('polls when the tree has more directories than the watch limit', async () => {
    const d = tempDir();
    fs.mkdirSync(path.join(d, 'a'));
    fs.mkdirSync(path.join(d, 'b'));
    const watchesBefore = inotifyWatches();
    const modes: string[] = [];
    const { w, changes } = await watching([d], { intervalMs: 100, maxWatches: 2, onMode: (m) => modes.push(m) });
    expect(w.mode).toBe('polling');
    expect(w.pollingReason).toMatch(/3 directories to watch, more than the limit of 2/);
    expect(inotifyWatches()).toBe(watchesBefore);
    fs.writeFileSync(path.join(d, 'a/web.yaml'), service('web', '10.96.0.1'));
    await expectChanges(changes, 1);
    // Back within the limit: the next change found by the poll brings the events back.
    fs.rmSync(path.join(d, 'b'), { recursive: true });
    fs.writeFileSync(path.join(d, 'a/api.yaml'), service('api', '10.96.0.2'));
    await expectChanges(changes, 2);
    expect(w.mode).toBe('events');
    expect(w.watchCount).toBe(2);
    expect(modes).toEqual(['polling', 'events']);
  });

  it('still applies a change only when two polls in a row saw it', () => {
    const d = tempDir();
    let n = 0;
    const w = new ManifestWatcher([d], HOUR, () => n++);
    fs.writeFileSync(path.join(d, 'web.yaml'), service('web', '10.96.0.1'));
    w.check();
    expect(n).toBe(0);
    w.check();
    expect(n).toBe(1);
    w.check();
    expect(n).toBe(1);
  });
});
