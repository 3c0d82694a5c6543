// CoreDNS plugin/bind/setup_test.go, ported: addresses, interface names, except, and several
// bind lines in one block adding up; the addresses listened on for each accepted block, the exact
// `line: reason` for each rejected one.
import { describe, it, expect } from 'vitest';
import { networkInterfaces } from 'node:os';
import type { App } from '../../../src/app.js';
import { setupBlock } from '../../helpers/setup.js';

async function listenHosts(body: string): Promise<string[] | string> {
  let hosts: string[] = [];
  const r = await setupBlock(body, {
    inspect: (app: App) => {
      hosts = [...new Set([...app.listenerZones().keys()].map((i) => (app as unknown as { specs: { address: string }[] }).specs[i]!.address))];
    },
  });
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

  it.each<[string, string[]]>([
    ['bind', ['2: bind: wrong number of arguments: 0 given, at least 1 expected; usage `bind ADDRESS|INTERFACE...`, e.g. `bind 127.0.0.1 ::1`']],
    ['bind 1.2.3.invalid', ['2: bind: "1.2.3.invalid" is neither an IP address nor a network interface of this machine']],
    ['bind ::1 1.2.3.4 ::5 127.9.9.0 noone', ['2: bind: "noone" is neither an IP address nor a network interface of this machine']],
    ['bind 1.2.3.4 {\n  except\n}', ['3: bind except: wrong number of arguments: 0 given, at least 1 expected; usage `except ADDRESS|INTERFACE...`']],
    ['bind 1.2.3.4 {\n  except noone\n}', ['3: bind except: "noone" is neither an IP address nor a network interface of this machine']],
    ['bind 1.2.3.4 {\n  only 1.2.3.4\n}', ['3: unknown bind option "only"; the only option is except']],
    ['bind 1.2.3.4 {\n  except 1.2.3.4\n}', ['2: bind: every address is excluded by except; nothing to listen on']],
    // Named at the last bind line, since the lines add up before the check.
    ['bind 1.2.3.4 {\n  except 1.2.3.4\n}\nbind ::1 {\n  except ::1\n}', ['5: bind: every address is excluded by except; nothing to listen on']],
    ['bind 1.2.3.4\nbind', ['3: bind: wrong number of arguments: 0 given, at least 1 expected; usage `bind ADDRESS|INTERFACE...`, e.g. `bind 127.0.0.1 ::1`']],
  ])('rejects %j', async (body, want) => {
    expect((await setupBlock(body)).errors).toEqual(want);
  });
});
