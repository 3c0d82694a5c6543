// CoreDNS plugin/bind/setup_test.go, ported: addresses, interface names, except, and several
// bind lines in one block adding up.
import { describe, it, expect } from 'vitest';
import { networkInterfaces } from 'node:os';
import type { App } from '../../src/app.js';
import { setupBlock } from '../helpers/setup.js';

async function listenHosts(body: string): Promise<string[] | string> {
  let hosts: string[] = [];
  const r = await setupBlock(body, { inspect: (app: App) => { hosts = [...new Set([...app.listenerZones().keys()].map((i) => (app as unknown as { specs: { address: string }[] }).specs[i]!.address))]; } });
  return r.errors.length > 0 ? r.errors.join('\n') : hosts;
}

const lo = (networkInterfaces().lo ?? []).map((a) => a.address);

describe('bind setup (CoreDNS setup_test.go)', () => {
  it.each([
    ['bind 1.2.3.4', ['1.2.3.4']],
    ['bind 1.2.3.4 ::5', ['1.2.3.4', '::5']],
    ['bind ::1 1.2.3.4 ::5 127.9.9.0', ['::1', '1.2.3.4', '::5', '127.9.9.0']],
    ['bind 1.2.3.4 lo', ['1.2.3.4', ...lo]],
    ['bind lo {\n  except 127.0.0.1\n}', lo.filter((a) => a !== '127.0.0.1')],
    // Several bind lines add up (CoreDNS consolidates every bind directive of a block).
    ['bind 1.2.3.4\nbind ::5', ['1.2.3.4', '::5']],
    // except takes interface names too.
    ['bind 1.2.3.4 127.0.0.1 {\n  except lo\n}', ['1.2.3.4']],
  ])('accepts %j', async (body, want) => {
    expect(await listenHosts(body)).toEqual(want);
  });

  it.each([
    ['bind', /bind needs at least one address/],
    ['bind 1.2.3.invalid', /"1.2.3.invalid" is neither an IP address nor a network interface/],
    ['bind ::1 1.2.3.4 ::5 127.9.9.0 noone', /"noone" is neither/],
    ['bind 1.2.3.4 {\n  except\n}', /bind except needs at least one address or interface name/],
    ['bind 1.2.3.4 {\n  only 1.2.3.4\n}', /unknown bind option "only"/],
  ])('rejects %j', async (body, reason) => {
    expect(await listenHosts(body)).toMatch(reason);
  });
});
