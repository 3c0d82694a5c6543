// The grpc_server plugin's Corefile lines (CoreDNS plugin/grpc_server/setup_test.go) and the
// grpc:// server keys: accepted lines and the listener settings they give, the exact
// `line: reason` of each rejected one.
import { expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import type { ListenSpec } from '../../../src/app-options.js';
import { parseServerKey } from '../../../src/chain/corefile-keys.js';
import { grpcServerDefaults } from '../../../src/plugins/grpc_server/config.js';
import { defaultGrpcSettings } from '../../../src/server/grpc.js';
import { setupBlock } from '../../helpers/setup.js';

it('grpc:// keys take port 443 when they name none, and keep their transport', () => {
  expect(parseServerKey('grpc://example.org')).toEqual([{ raw: 'grpc://example.org', zone: 'example.org.', port: 443, transport: 'grpc' }]);
  expect(parseServerKey('grpc://.:8053')).toEqual([{ raw: 'grpc://.:8053', zone: '.', port: 8053, transport: 'grpc' }]);
  expect(parseServerKey('GRPC://10.0.0.0/24')).toEqual([{ raw: 'GRPC://10.0.0.0/24', zone: '0.0.10.in-addr.arpa.', port: 443, transport: 'grpc' }]);
});

it('the refusals of other schemes name grpc:// among those served', () => {
  expect(() => parseServerKey('udp://.')).toThrow(
    /^unknown scheme udp:\/\/ in key 'udp:\/\/\.'; use dns:\/\/, tls:\/\/, (.*, )?grpc:\/\/(, .*)? or no scheme$/,
  );
  expect(() => parseServerKey('quic://.')).toThrow(
    /^transport quic:\/\/ in key 'quic:\/\/\.' is not supported: it runs over QUIC, which Node 20 does not have; use dns:\/\/, tls:\/\/, (.*, )?grpc:\/\/(, .*)? or no scheme$/,
  );
});

it('the plugin and the server agree on the defaults (CoreDNS: 256 streams, 200 connections)', () => {
  expect(grpcServerDefaults).toEqual({ maxStreams: 256, maxConnections: 200 });
  expect(defaultGrpcSettings).toEqual(grpcServerDefaults);
});

async function settings(body: string, key = 'grpc://.:8053'): Promise<ListenSpec['settings'] | string[]> {
  let out: ListenSpec['settings'] | undefined;
  const r = await setupBlock(body, {
    key,
    inspect: (app: App) => {
      out = (app as unknown as { config: { specs: ListenSpec[] } }).config.specs[0]!.settings;
    },
  });
  return r.errors.length > 0 ? r.errors : out!;
}

it.each([
  ['grpc_server', { maxStreams: 256, maxConnections: 200 }],
  ['grpc_server {\n}', { maxStreams: 256, maxConnections: 200 }],
  ['grpc_server {\n  max_streams 100\n}', { maxStreams: 100, maxConnections: 200 }],
  ['grpc_server {\n  max_connections 300\n}', { maxStreams: 256, maxConnections: 300 }],
  ['grpc_server {\n  max_streams 50\n  max_connections 100\n}', { maxStreams: 50, maxConnections: 100 }],
  ['grpc_server {\n  max_streams 0\n  max_connections 0\n}', { maxStreams: 0, maxConnections: 0 }],
])('%j sets the listener', async (body, grpc) => {
  expect(await settings(body)).toEqual({ grpc });
});

it('without grpc_server the listener has no grpc settings (the server takes the defaults)', async () => {
  expect(await settings('errors')).toEqual({});
});

it('rejects bad lines with the line and the reason', async () => {
  const cases: [string, string[]][] = [
    ['grpc_server 5', ['2: grpc_server takes no arguments, got "5"']],
    [
      'grpc_server {\n  max_streams\n}',
      ['3: grpc_server max_streams: wrong number of arguments: 0 given, 1 expected; usage `max_streams N`, e.g. `max_streams 256`'],
    ],
    [
      'grpc_server {\n  max_streams 1 2\n}',
      ['3: grpc_server max_streams: wrong number of arguments: 2 given, 1 expected; usage `max_streams N`, e.g. `max_streams 256`'],
    ],
    ['grpc_server {\n  max_streams abc\n}', ['3: grpc_server max_streams: N "abc" is not an integer']],
    ['grpc_server {\n  max_connections -1\n}', ['3: grpc_server max_connections: N must be in range [0, 2147483647]: -1']],
    ['grpc_server {\n  max_streams 2147483648\n}', ['3: grpc_server max_streams: N must be in range [0, 2147483647]: 2147483648']],
    ['grpc_server {\n  max_streams 1\n  max_streams 2\n}', ['4: grpc_server max_streams: already defined for this server block']],
    [
      'grpc_server {\n  max_connection 5\n}',
      ['3: unknown grpc_server option "max_connection" (did you mean max_connections?); valid options: max_streams, max_connections'],
    ],
    ['grpc_server\ngrpc_server', ['3: plugin "grpc_server" appears twice in this server block (first at line 2); merge the two']],
  ];
  const got: [string, string[]][] = [];
  for (const [body] of cases) got.push([body, (await setupBlock(body, { key: 'grpc://.:8053' })).errors]);
  expect(got).toEqual(cases);
});

it('refuses two blocks sharing a grpc:// listener with different grpc_server limits', async () => {
  const r = await setupBlock('grpc_server {\n  max_streams 10\n}\n}\ngrpc://b.test:8053 {\ngrpc_server {\n  max_streams 20\n}', { key: 'grpc://a.test:8053' });
  expect(r.errors).toEqual([
    '6: this block and another one both serve grpc://:8053 but set different tls, https, grpc_server or timeouts options; one listener has one setting: give both blocks the same lines, or use another port',
  ]);
});
