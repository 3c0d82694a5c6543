// ready's Corefile lines, as CoreDNS's plugin/ready/setup_test.go reads them: the ReadyConfig
// each accepted block gives, and the exact error (`line: reason`) of each rejected one.
import { describe, it, expect } from 'vitest';
import { setupBlock, setupPlugin } from '../../helpers/setup.js';
import type { ReadyConfig } from '../../../src/plugins/ready/config.js';

const cfgOf = async (body: string) => (await setupPlugin<{ cfg: ReadyConfig }>(body, 'ready')).cfg;
const errorsOf = async (body: string) => (await setupBlock(body)).errors;

describe('ready setup', () => {
  it.each<[string, ReadyConfig]>([
    ['ready', { address: { host: '', port: 8181, text: ':8181' }, mode: 'until-ready' }],
    ['ready localhost:1234', { address: { host: 'localhost', port: 1234, text: 'localhost:1234' }, mode: 'until-ready' }],
    ['ready [::1]:8181', { address: { host: '::1', port: 8181, text: '[::1]:8181' }, mode: 'until-ready' }],
    ['ready {\n  monitor until-ready\n}', { address: { host: '', port: 8181, text: ':8181' }, mode: 'until-ready' }],
    ['ready {\n  monitor continuously\n}', { address: { host: '', port: 8181, text: ':8181' }, mode: 'continuously' }],
    ['ready localhost:1234 {\n  monitor continuously\n}', { address: { host: 'localhost', port: 1234, text: 'localhost:1234' }, mode: 'continuously' }],
    // The last monitor line wins.
    ['ready {\n  monitor continuously\n  monitor until-ready\n}', { address: { host: '', port: 8181, text: ':8181' }, mode: 'until-ready' }],
  ])('accepts %j', async (body, want) => {
    expect(await cfgOf(body)).toEqual(want);
  });

  it.each<[string, string[]]>([
    ['ready localhost:1234 b', ['2: ready: wrong number of arguments: 2 given, at most 1 expected; usage `ready [ADDRESS]`, e.g. `ready :8181`']],
    ['ready bla bla', ['2: ready: wrong number of arguments: 2 given, at most 1 expected; usage `ready [ADDRESS]`, e.g. `ready :8181`']],
    ['ready bla', ['2: ready: "bla" has no port; write HOST:PORT or :PORT, e.g. :8080']],
    ['ready bla:a', ['2: ready: "bla:a": port "a" is not a number from 0 to 65535']],
    ['ready ::1:8181', ['2: ready: "::1:8181" has too many colons; write an IPv6 address in brackets, e.g. [::1]:8080']],
    ['ready b_d:8181', ['2: ready: "b_d:8181": "b_d" is not a host name or IP address']],
    // The address is checked before the options.
    ['ready bla {\n  monitro continuously\n}', ['2: ready: "bla" has no port; write HOST:PORT or :PORT, e.g. :8080']],
    ['ready {\n  monitro continuously\n}', ['3: unknown ready option "monitro"; the only option is monitor']],
    ['ready localhost:1234 {\n  monitor 404\n}', ['3: ready monitor: mode "404" is not one of until-ready or continuously']],
    ['ready {\n  monitor\n}', ['3: ready monitor: wrong number of arguments: 0 given, 1 expected; usage `monitor until-ready|continuously`']],
    [
      'ready {\n  monitor continuously until-ready\n}',
      ['3: ready monitor: wrong number of arguments: 2 given, 1 expected; usage `monitor until-ready|continuously`'],
    ],
  ])('rejects %j', async (body, want) => {
    expect(await errorsOf(body)).toEqual(want);
  });

  it('allows one ready per server block', async () => {
    expect((await errorsOf('ready\nready')).join('\n')).toMatch(/^3: plugin "ready" appears twice in this server block \(first at line 2\)/);
  });
});
