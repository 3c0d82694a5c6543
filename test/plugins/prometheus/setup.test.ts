// prometheus's Corefile lines, as CoreDNS's plugin/metrics/setup_test.go reads them: the
// PrometheusConfig each accepted block gives, and the exact error (`line: reason`) of each
// rejected one.
import { describe, it, expect } from 'vitest';
import { setupBlock, setupPlugin } from '../../helpers/setup.js';
import type { PrometheusConfig } from '../../../src/plugins/prometheus/config.js';

const cfgOf = async (body: string) => (await setupPlugin<{ cfg: PrometheusConfig }>(body, 'prometheus')).cfg;
const errorsOf = async (body: string) => (await setupBlock(body)).errors;

describe('prometheus setup', () => {
  it.each<[string, PrometheusConfig]>([
    ['prometheus', { address: { host: 'localhost', port: 9153, text: 'localhost:9153' } }],
    ['prometheus localhost:53', { address: { host: 'localhost', port: 53, text: 'localhost:53' } }],
    ['prometheus :9153', { address: { host: '', port: 9153, text: ':9153' } }],
    ['prometheus [::1]:9153', { address: { host: '::1', port: 9153, text: '[::1]:9153' } }],
    // runtime_metrics is accepted and changes nothing: Node's runtime metrics are always exported.
    ['prometheus {\n  runtime_metrics\n}', { address: { host: 'localhost', port: 9153, text: 'localhost:9153' } }],
    ['prometheus localhost:53 {\n  runtime_metrics\n}', { address: { host: 'localhost', port: 53, text: 'localhost:53' } }],
  ])('accepts %j', async (body, want) => {
    expect(await cfgOf(body)).toEqual(want);
  });

  it.each<[string, string[]]>([
    [
      'prometheus a b c',
      ['2: prometheus: wrong number of arguments: 3 given, at most 1 expected; usage `prometheus [ADDRESS]`, e.g. `prometheus localhost:9153`'],
    ],
    ['prometheus {}', ['2: prometheus: "{}" has no port; write HOST:PORT or :PORT, e.g. :8080']],
    ['prometheus /foo', ['2: prometheus: "/foo" has no port; write HOST:PORT or :PORT, e.g. :8080']],
    ['prometheus localhost:x', ['2: prometheus: "localhost:x": port "x" is not a number from 0 to 65535']],
    ['prometheus ::1:9153', ['2: prometheus: "::1:9153" has too many colons; write an IPv6 address in brackets, e.g. [::1]:8080']],
    ['prometheus b_d:9153', ['2: prometheus: "b_d:9153": "b_d" is not a host name or IP address']],
    ['prometheus {\n  runtime_metrics extra_arg\n}', ['3: prometheus runtime_metrics takes no arguments, got "extra_arg"']],
    ['prometheus {\n  tls cert.pem key.pem\n}', ['3: prometheus tls is not supported: the metrics endpoint serves plain HTTP']],
    ['prometheus {\n  nosuch\n}', ['3: unknown prometheus option "nosuch"; the only option is runtime_metrics']],
    // The options are checked before the address.
    ['prometheus /foo {\n  nosuch\n}', ['3: unknown prometheus option "nosuch"; the only option is runtime_metrics']],
  ])('rejects %j', async (body, want) => {
    expect(await errorsOf(body)).toEqual(want);
  });

  it('allows one prometheus per server block', async () => {
    expect((await errorsOf('prometheus\nprometheus')).join('\n')).toMatch(/^3: plugin "prometheus" appears twice in this server block \(first at line 2\)/);
  });
});
