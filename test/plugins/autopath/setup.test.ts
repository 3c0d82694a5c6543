// CoreDNS plugin/autopath/setup_test.go, ported: zones, @PLUGIN or a resolv.conf search list.
import { describe, it, expect } from 'vitest';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { setupBlock, setupPlugin } from '../../helpers/setup.js';

type Autopath = { zones: string[] };

describe('autopath setup (CoreDNS setup_test.go)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-autopath-setup-'));
  const resolv = path.join(dir, 'resolv.conf');
  fs.writeFileSync(resolv, 'nameserver 1.2.3.4\ndomain foo.com.\nsearch bar.com baz.com\noptions ndots:5\n');

  it.each([
    ['autopath @kubernetes', ['.']],
    ['autopath example.org @kubernetes', ['example.org.']],
    ['autopath 10.0.0.0/8 @kubernetes', ['10.in-addr.arpa.']],
    [`autopath ${resolv}`, ['.']],
  ])('accepts %j', async (body, zones) => {
    const p = await setupPlugin<Autopath>(body, 'autopath');
    expect(p.zones).toEqual(zones);
  });

  it.each([
    ['autopath kubernetes', /autopath: cannot read .*kubernetes/],
    ['autopath', /autopath: wrong number of arguments: 0 given, at least 1 expected; usage `autopath \[ZONES...\] RESOLV-CONF\|@PLUGIN`/],
    ['autopath ""', /autopath: RESOLV-CONF is empty: write a resolv.conf path or @PLUGIN/],
    ['autopath bad..zone @kubernetes', /autopath: bad zone "bad..zone"/],
  ])('rejects %j', async (body, reason) => {
    expect((await setupBlock(body)).errors.join('\n')).toMatch(reason);
  });

  it.each([
    [
      'autopath',
      ['2: autopath: wrong number of arguments: 0 given, at least 1 expected; usage `autopath [ZONES...] RESOLV-CONF|@PLUGIN`, e.g. `autopath @kubernetes`'],
    ],
    ['autopath @kubernetes {\n  x\n}', ['2: autopath takes no option block']],
  ])('rejects %j, word for word', async (body, errors) => {
    expect((await setupBlock(body)).errors).toEqual(errors);
  });

  it('names the resolv.conf it cannot read', async () => {
    const file = path.join(dir, 'missing.conf');
    expect((await setupBlock(`autopath ${file}`)).errors).toEqual([`2: autopath: cannot read ${file}: ENOENT: no such file or directory, open '${file}'`]);
  });

  it('accepts a zone outside the block, as CoreDNS does', async () => {
    const p = await setupPlugin<Autopath>('autopath example.net @kubernetes', 'autopath', { key: 'example.org' });
    expect(p.zones).toEqual(['example.net.']);
  });

  it('refuses a resolv.conf that is a FIFO instead of hanging', async () => {
    const fifo = path.join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    expect((await setupBlock(`autopath ${fifo}`)).errors.join('\n')).toMatch(/it is a FIFO/);
  });
});
