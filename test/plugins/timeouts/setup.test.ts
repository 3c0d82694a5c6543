// The timeouts plugin's Corefile lines (CoreDNS plugin/timeouts/timeouts_test.go): accepted lines
// and the listener settings they give, the exact `line: reason` of each rejected one.
import { expect, it } from 'vitest';
import pino from 'pino';
import { buildApp, type App } from '../../../src/app.js';
import type { ListenSpec } from '../../../src/app-options.js';
import { setupBlock } from '../../helpers/setup.js';

async function timeoutsOf(body: string, key = '.:1053'): Promise<ListenSpec['settings']['timeouts'] | string[]> {
  let out: ListenSpec[] = [];
  const r = await setupBlock(body, {
    key,
    inspect: (app: App) => {
      out = (app as unknown as { config: { specs: ListenSpec[] } }).config.specs;
    },
  });
  return r.errors.length > 0 ? r.errors : out[0]!.settings.timeouts;
}

it.each([
  ['timeouts {\n  read 30s\n}', { readMs: 30_000 }],
  ['timeouts {\n  read 1m\n  write 2m\n}', { readMs: 60_000, writeMs: 120_000 }],
  ['timeouts {\n  idle 1h\n}', { idleMs: 3_600_000 }],
  // A bare integer counts seconds, as CoreDNS's durations.NewDurationFromArg reads it.
  ['timeouts {\n  read 10\n  write 20\n  idle 60\n}', { readMs: 10_000, writeMs: 20_000, idleMs: 60_000 }],
  ['timeouts {\n  idle 1s\n}', { idleMs: 1000 }],
  ['timeouts {\n  idle 24h\n}', { idleMs: 86_400_000 }],
  ['timeouts {\n  write 1.5s\n}', { writeMs: 1500 }],
])('accepts %j', async (body, want) => {
  expect(await timeoutsOf(body)).toEqual(want);
});

it('sets the timeouts of tls:// listeners too, and none without the line', async () => {
  expect(await timeoutsOf('timeouts {\n  idle 30s\n}', 'tls://.:8853')).toEqual({ idleMs: 30_000 });
  expect(await timeoutsOf('', 'tls://.:8853')).toBeUndefined();
  expect(await timeoutsOf('')).toBeUndefined();
});

it('rejects bad lines with the line and the reason', async () => {
  const none = 'timeouts: the block sets no timeout: give at least one of read, write or idle, e.g. `idle 30s`, or remove the line';
  const cases: [string, string[]][] = [
    ['timeouts', [`2: ${none}`]],
    ['timeouts {\n}', [`2: ${none}`]],
    ['timeouts 10s', ['2: timeouts takes no arguments, got "10s"']],
    ['timeouts {\n  read 10s\n  giraffe 30s\n}', ['4: unknown timeouts option "giraffe"; valid options: read, write, idle']],
    ['timeouts {\n  reed 10s\n}', ['3: unknown timeouts option "reed" (did you mean read?); valid options: read, write, idle']],
    [
      'timeouts {\n  read 10s 20s\n  write 30s\n}',
      ['3: timeouts read: wrong number of arguments: 2 given, 1 expected; usage `read DURATION`, e.g. `read 30s`'],
    ],
    ['timeouts {\n  idle\n}', ['3: timeouts idle: wrong number of arguments: 0 given, 1 expected; usage `idle DURATION`, e.g. `idle 30s`']],
    ['timeouts {\n  write snake\n}', ['3: timeouts write: "snake" is not a duration; write e.g. 30s, 1m or 30 (seconds)']],
    ['timeouts {\n  idle 0s\n}', ['3: timeouts idle: "0s" must be between 1s and 24h0m0s']],
    ['timeouts {\n  idle 0\n}', ['3: timeouts idle: "0" must be between 1s and 24h0m0s']],
    ['timeouts {\n  read 999ms\n}', ['3: timeouts read: "999ms" must be between 1s and 24h0m0s']],
    ['timeouts {\n  read 48h\n}', ['3: timeouts read: "48h" must be between 1s and 24h0m0s']],
    ['timeouts {\n  read -5s\n}', ['3: timeouts read: "-5s" must be between 1s and 24h0m0s']],
    [
      'timeouts {\n  maxtcpqueries 128\n}',
      [
        '3: timeouts maxtcpqueries is not supported: clusterdns does not cap the queries of one connection; its idle timeout and connection caps bound a client instead',
      ],
    ],
    // Every line is checked: both mistakes are reported.
    [
      'timeouts {\n  read 0s\n  write never\n}',
      ['3: timeouts read: "0s" must be between 1s and 24h0m0s', '4: timeouts write: "never" is not a duration; write e.g. 30s, 1m or 30 (seconds)'],
    ],
    ['timeouts {\n  idle 5s\n}\ntimeouts {\n  idle 6s\n}', ['5: plugin "timeouts" appears twice in this server block (first at line 2); merge the two']],
  ];
  const got: [string, string[]][] = [];
  for (const [body] of cases) got.push([body, (await timeoutsOf(body)) as string[]]);
  expect(got).toEqual(cases);
});

it('refuses two blocks sharing a dns:// port with different timeouts: one socket has one setting', async () => {
  const corefileText = 'a.test:0 {\n  bind 127.0.0.1\n  timeouts {\n    idle 1s\n  }\n  errors\n}\nb.test:0 {\n  bind 127.0.0.1\n  errors\n}\n';
  await expect(buildApp({ corefileText, logger: pino({ level: 'silent' }) })).rejects.toThrow(
    '8: this block and another one both serve dns://127.0.0.1:0 but set different tls, https, grpc_server or timeouts options',
  );
  const agreeing = corefileText.replace('b.test:0 {\n  bind 127.0.0.1\n', 'b.test:0 {\n  bind 127.0.0.1\n  timeouts {\n    idle 1s\n  }\n');
  const same = await buildApp({ corefileText: agreeing, logger: pino({ level: 'silent' }) });
  await same.close();
});
