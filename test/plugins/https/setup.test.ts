// The https plugin's Corefile lines (CoreDNS plugin/https/setup_test.go) and the https:// server
// keys: accepted lines and what they set on the listener, the exact `line: reason` of each
// rejected one, and blocks sharing a listener having to agree.
import { expect, it } from 'vitest';
import pino from 'pino';
import { buildApp, type App } from '../../../src/app.js';
import type { ListenSpec } from '../../../src/app-options.js';
import { parseServerKey } from '../../../src/chain/corefile-keys.js';
import { setupBlock } from '../../helpers/setup.js';
import { waitUntil } from '../../helpers/wait.js';
import { h2Connect } from '../../server/doh-client.js';

it('https:// keys take port 443 when they name none, and keep their transport', () => {
  expect(parseServerKey('https://example.org')).toEqual([{ raw: 'https://example.org', zone: 'example.org.', port: 443, transport: 'https' }]);
  expect(parseServerKey('https://.:8443')).toEqual([{ raw: 'https://.:8443', zone: '.', port: 8443, transport: 'https' }]);
  expect(parseServerKey('HTTPS://10.0.0.0/24')).toEqual([{ raw: 'HTTPS://10.0.0.0/24', zone: '0.0.10.in-addr.arpa.', port: 443, transport: 'https' }]);
});

async function specs(body: string, key = 'https://.:8443'): Promise<ListenSpec[] | string[]> {
  let out: ListenSpec[] = [];
  const r = await setupBlock(body, {
    key,
    inspect: (app: App) => {
      out = (app as unknown as { config: { specs: ListenSpec[] } }).config.specs;
    },
  });
  return r.errors.length > 0 ? r.errors : out;
}

it.each([
  ['', undefined],
  ['https', undefined],
  ['https {\n}', undefined],
  ['https {\n  max_connections 100\n}', { maxConnections: 100 }],
  ['https {\n  max_connections 0\n}', { maxConnections: 0 }],
  ['https {\n  max_streams 10\n  max_header_bytes 4096\n  max_resets_per_second 50\n}', { maxStreams: 10, maxHeaderBytes: 4096, maxResetsPerSecond: 50 }],
])('%j sets %j on the https:// listener', async (body, https) => {
  const got = (await specs(body)) as ListenSpec[];
  expect(got).toHaveLength(1);
  expect(got[0]!.transport).toBe('https');
  expect(got[0]!.settings.https).toEqual(https);
});

it('rejects bad lines with the line and the reason', async () => {
  const cases: [string, string[]][] = [
    ['https 100', ['2: https takes no arguments, got "100"']],
    [
      'https {\n  max_connections\n}',
      ['3: https max_connections: wrong number of arguments: 0 given, 1 expected; usage `max_connections N`, e.g. `max_connections 200`'],
    ],
    [
      'https {\n  max_connections 1 2\n}',
      ['3: https max_connections: wrong number of arguments: 2 given, 1 expected; usage `max_connections N`, e.g. `max_connections 200`'],
    ],
    ['https {\n  max_connections many\n}', ['3: https max_connections: max_connections "many" is not an integer']],
    ['https {\n  max_connections -1\n}', ['3: https max_connections: max_connections must be at least 0: -1']],
    ['https {\n  max_connections 10\n  max_connections 20\n}', ['4: https max_connections: already defined for this server block; keep one line']],
    [
      'https {\n  max_connection 10\n}',
      [
        '3: unknown https option "max_connection" (did you mean max_connections?); valid options: max_connections, max_streams, max_header_bytes, max_resets_per_second',
      ],
    ],
    ['https\nhttps', ['3: plugin "https" appears twice in this server block (first at line 2); merge the two']],
    ['https {\n  max_streams 0\n}', ['3: https max_streams: max_streams must be in range [1, 10000]: 0']],
    ['https {\n  max_header_bytes 10\n}', ['3: https max_header_bytes: max_header_bytes must be in range [1024, 1048576]: 10']],
  ];
  const got: [string, string[]][] = [];
  for (const [body] of cases) got.push([body, (await setupBlock(body, { key: 'https://.:8443' })).errors]);
  expect(got).toEqual(cases);
});

it('refuses two blocks that share an https:// listener with different max_connections, at the second block', async () => {
  const r = await setupBlock('https {\n  max_connections 10\n}', { key: 'https://a.test:8443' });
  expect(r.errors).toEqual([]);
  const { buildApp } = await import('../../../src/app.js');
  const pino = (await import('pino')).default;
  const corefileText = 'https://a.test:8443 {\n  https {\n    max_connections 10\n  }\n}\nhttps://b.test:8443 {\n  https\n}\n';
  await expect(buildApp({ corefileText, logger: pino({ level: 'silent' }) })).rejects.toThrow(
    '6: this block and another one both serve https://:8443 but set different tls, https, grpc_server or timeouts options',
  );
});

it('max_streams and max_header_bytes reach the listener: the HTTP/2 SETTINGS it sends say them', async () => {
  const app = await buildApp({
    corefileText: 'https://.:0 {\n  bind 127.0.0.1\n  https {\n    max_streams 7\n    max_header_bytes 4096\n  }\n  errors\n}\n',
    logger: pino({ level: 'silent' }),
  });
  try {
    const [l] = await app.listen();
    const session = await h2Connect(l!.port);
    try {
      await waitUntil('the server SETTINGS frame', () => session.remoteSettings.maxConcurrentStreams === 7);
      expect(session.remoteSettings).toMatchObject({ maxConcurrentStreams: 7, maxHeaderListSize: 4096 });
    } finally {
      session.destroy();
    }
  } finally {
    await app.close();
  }
});
