// health's Corefile lines, as CoreDNS's plugin/health/setup_test.go reads them: the HealthConfig
// each accepted block gives, and the exact error (`line: reason`) of each rejected one.
import { describe, it, expect } from 'vitest';
import { setupBlock, setupPlugin } from '../../helpers/setup.js';
import type { HealthConfig } from '../../../src/plugins/health/config.js';

const cfgOf = async (body: string) => (await setupPlugin<{ cfg: HealthConfig }>(body, 'health')).cfg;
const errorsOf = async (body: string) => (await setupBlock(body)).errors;

describe('health setup', () => {
  it.each<[string, HealthConfig]>([
    ['health', { address: { host: '', port: 8080, text: ':8080' }, lameduckMs: 0 }],
    ['health localhost:1234', { address: { host: 'localhost', port: 1234, text: 'localhost:1234' }, lameduckMs: 0 }],
    ['health 127.0.0.1:0', { address: { host: '127.0.0.1', port: 0, text: '127.0.0.1:0' }, lameduckMs: 0 }],
    ['health [::1]:8080', { address: { host: '::1', port: 8080, text: '[::1]:8080' }, lameduckMs: 0 }],
    ['health localhost:1234 {\n  lameduck 4s\n}', { address: { host: 'localhost', port: 1234, text: 'localhost:1234' }, lameduckMs: 4000 }],
    ['health {\n  lameduck 500ms\n}', { address: { host: '', port: 8080, text: ':8080' }, lameduckMs: 500 }],
    // Several lines (CoreDNS has no ErrOnce for health): the last address and lameduck win.
    ['health :1234\nhealth {\n  lameduck 3s\n}', { address: { host: '', port: 1234, text: ':1234' }, lameduckMs: 3000 }],
    ['health {\n  lameduck 1s\n  lameduck 2s\n}', { address: { host: '', port: 8080, text: ':8080' }, lameduckMs: 2000 }],
    // Only the address that wins is parsed.
    ['health bla\nhealth :1234', { address: { host: '', port: 1234, text: ':1234' }, lameduckMs: 0 }],
  ])('accepts %j', async (body, want) => {
    expect(await cfgOf(body)).toEqual(want);
  });

  it.each<[string, string[]]>([
    ['health bla bla', ['2: health: wrong number of arguments: 2 given, at most 1 expected; usage `health [ADDRESS]`, e.g. `health :8080`']],
    ['health :1234\nhealth a b', ['3: health: wrong number of arguments: 2 given, at most 1 expected; usage `health [ADDRESS]`, e.g. `health :8080`']],
    ['health bla', ['2: health: "bla" has no port; write HOST:PORT or :PORT, e.g. :8080']],
    ['health :1234\nhealth bla', ['3: health: "bla" has no port; write HOST:PORT or :PORT, e.g. :8080']],
    // CoreDNS accepts this at setup and then fails to listen; refused here at once, with its line.
    ['health bla:a', ['2: health: "bla:a": port "a" is not a number from 0 to 65535']],
    ['health :65536', ['2: health: ":65536": port "65536" is not a number from 0 to 65535']],
    ['health ::1:8080', ['2: health: "::1:8080" has too many colons; write an IPv6 address in brackets, e.g. [::1]:8080']],
    ['health b_d:8080', ['2: health: "b_d:8080": "b_d" is not a host name or IP address']],
    ['health localhost:1234 {\n  lamedudk 4\n}', ['3: unknown health option "lamedudk"; the only option is lameduck']],
    ['health {\n  lameduck\n}', ['3: health lameduck: wrong number of arguments: 0 given, 1 expected; usage `lameduck DURATION`, e.g. `lameduck 5s`']],
    ['health {\n  lameduck 1s 2s\n}', ['3: health lameduck: wrong number of arguments: 2 given, 1 expected; usage `lameduck DURATION`, e.g. `lameduck 5s`']],
    ['health localhost:1234 {\n  lameduck a\n}', ['3: health lameduck: "a" is not a duration; write e.g. 500ms, 5s or 1m']],
    ['health {\n  lameduck 5\n}', ['3: health lameduck: "5" is not a duration; write e.g. 500ms, 5s or 1m']],
  ])('rejects %j', async (body, want) => {
    expect(await errorsOf(body)).toEqual(want);
  });
});
