// CoreDNS plugin/health, plugin/ready and plugin/metrics setup_test.go, ported: the address
// argument and option blocks of the three HTTP plugins.
import { describe, it, expect } from 'vitest';
import { setupBlock, setupPlugin } from '../helpers/setup.js';

type Http = { address: { text: string }; mode?: string; lameduckMs?: number };

describe('health setup (CoreDNS setup_test.go)', () => {
  it.each([
    ['health', ':8080'],
    ['health localhost:1234', 'localhost:1234'],
    ['health localhost:1234 {\n  lameduck 4s\n}', 'localhost:1234'],
  ])('accepts %j', async (body, addr) => {
    expect((await setupPlugin<Http>(body, 'health')).address.text).toBe(addr);
  });

  it.each([
    ['health bla', /"bla" has no port/],
    ['health bla bla', /health takes at most one address/],
    ['health localhost:1234 {\n  lameduck a\n}', /unable to parse lameduck duration value "a"/],
    ['health localhost:1234 {\n  lamedudk 4\n}', /unknown health option "lamedudk"/],
    // CoreDNS accepts this at setup and then fails to listen; refused here at once, with its line.
    ['health bla:a', /port "a" is not a number/],
  ])('rejects %j', async (body, reason) => {
    expect((await setupBlock(body)).errors.join('\n')).toMatch(reason);
  });
});

describe('health lines add up as in CoreDNS (no ErrOnce there)', () => {
  it('takes the last address and lameduck of several health lines', async () => {
    const p = await setupPlugin<Http & { lameduckMs: number }>('health :1234\nhealth {\n  lameduck 3s\n}', 'health');
    expect([p.address.text, p.lameduckMs]).toEqual([':1234', 3000]);
  });

  it('still checks every line', async () => {
    expect((await setupBlock('health :1234\nhealth bla')).errors.join('\n')).toMatch(/"bla" has no port/);
  });
});

describe('ready setup (CoreDNS setup_test.go)', () => {
  it.each([
    ['ready', ':8181', 'until-ready'],
    ['ready localhost:1234', 'localhost:1234', 'until-ready'],
    ['ready {\n  monitor until-ready\n}', ':8181', 'until-ready'],
    ['ready {\n  monitor continuously\n}', ':8181', 'continuously'],
    ['ready localhost:1234 {\n  monitor continuously\n}', 'localhost:1234', 'continuously'],
  ])('accepts %j', async (body, addr, mode) => {
    const p = await setupPlugin<Http>(body, 'ready');
    expect([p.address.text, p.mode]).toEqual([addr, mode]);
  });

  it.each([
    ['ready localhost:1234 {\n  monitor 404\n}', /ready monitor takes until-ready or continuously/],
    ['ready {\n  monitro continuously\n}', /unknown ready option "monitro"/],
    ['ready localhost:1234 b', /ready takes at most one address/],
    ['ready bla', /"bla" has no port/],
    ['ready bla bla', /ready takes at most one address/],
  ])('rejects %j', async (body, reason) => {
    expect((await setupBlock(body)).errors.join('\n')).toMatch(reason);
  });
});

describe('prometheus setup (CoreDNS plugin/metrics setup_test.go)', () => {
  it.each([
    ['prometheus', 'localhost:9153'],
    ['prometheus localhost:53', 'localhost:53'],
    ['prometheus {\n  runtime_metrics\n}', 'localhost:9153'],
    ['prometheus localhost:53 {\n  runtime_metrics\n}', 'localhost:53'],
  ])('accepts %j', async (body, addr) => {
    expect((await setupPlugin<Http>(body, 'prometheus')).address.text).toBe(addr);
  });

  it.each([
    ['prometheus {}', /"\{\}" has no port/],
    ['prometheus {\n  runtime_metrics extra_arg\n}', /runtime_metrics takes no arguments/],
    ['prometheus /foo', /"\/foo" has no port/],
    ['prometheus a b c', /prometheus takes at most one address/],
    ['prometheus {\n  nosuch\n}', /unknown prometheus option "nosuch"/],
  ])('rejects %j', async (body, reason) => {
    expect((await setupBlock(body)).errors.join('\n')).toMatch(reason);
  });
});
