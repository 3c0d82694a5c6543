import { describe, expect, it } from 'vitest';
import { localUrl, openRoute, parseHttpAddress, type HttpAddress } from '../../src/pkg/http.js';
import { freePort } from '../helpers/server.js';

// Go's net.SplitHostPort forms, as health, ready and prometheus take their address.
describe('parseHttpAddress', () => {
  it.each([
    [':8080', '', 8080],
    ['localhost:9153', 'localhost', 9153],
    ['127.0.0.1:0', '127.0.0.1', 0],
    ['[::1]:8181', '::1', 8181],
    ['dns.example:80', 'dns.example', 80],
  ])('accepts %s', (text, host, port) => {
    expect(parseHttpAddress(text)).toEqual({ host, port, text });
  });
  it.each([
    ['8080', /has no port/],
    ['[::1]', /has no port/],
    ['::1:8080', /too many colons/],
    [':65536', /port "65536" is not a number/],
    [':http', /port "http" is not a number/],
    ['a_b:80', /is not a host name or IP address/],
  ])('rejects %s', (text, reason) => {
    expect(parseHttpAddress(text)).toMatch(reason);
  });
});

describe('openRoute: one listener per address, one path per plugin', () => {
  it('serves two paths on one port and closes when both are released', async () => {
    const port = await freePort();
    const addr = parseHttpAddress(`127.0.0.1:${port}`) as HttpAddress;
    const a = await openRoute(addr, '/health', (_q, res) => void res.end('OK'));
    const b = await openRoute(addr, '/ready', (_q, res) => void res.end('ready'));
    expect([a.port, b.port]).toEqual([port, port]);
    expect(await (await fetch(localUrl(addr, port, '/health'))).text()).toBe('OK');
    expect(await (await fetch(localUrl(addr, port, '/ready'))).text()).toBe('ready');
    expect((await fetch(localUrl(addr, port, '/metrics'))).status).toBe(404);
    await a.release();
    await b.release();
  });
  it('localUrl reaches a wildcard listener through loopback', () => {
    expect(localUrl({ host: '', port: 1, text: ':1' }, 8080, '/health')).toBe('http://127.0.0.1:8080/health');
    expect(localUrl({ host: '::', port: 1, text: '[::]:1' }, 8080, '/x')).toBe('http://[::1]:8080/x');
  });
});
