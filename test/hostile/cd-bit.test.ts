// The CD bit: a reply to a QUERY copies the query's CD bit (RFC 4035 3.1.6:
// "the name server side MUST copy the setting of the CD bit from a query to the corresponding
// response"; miekg/dns SetReply copies it, so CoreDNS does). Checked with dig over UDP and TCP,
// for answers built fresh and for answers served again from the answer cache, which was filled
// by a query with the other setting.
import { execFile } from 'node:child_process';
import { expect, it } from 'vitest';
import { parseDig, type Observed } from '../helpers/dns-format.js';
import { serverForSuite } from '../helpers/suite.js';
import { which } from '../helpers/server.js';
import { describeNeeding } from '../helpers/tools.js';
import { fixture, serverArgs } from '../server/raw.js';

const dig = which('dig');

function digFlags(port: number, name: string, cd: boolean, tcp: boolean): Promise<Observed> {
  const args = ['@127.0.0.1', '-p', String(port), '+norec', '+time=3', '+tries=1', cd ? '+cdflag' : '+nocdflag', tcp ? '+tcp' : '+notcp', name, 'A'];
  return new Promise((resolve, reject) => {
    execFile(dig!, args, { timeout: 10_000 }, (err, stdout) => {
      const obs = parseDig(stdout);
      if (obs.rcode === '') reject(new Error(`dig ${args.join(' ')} gave no answer: ${err?.message ?? ''}\n${stdout}`));
      else resolve(obs);
    });
  });
}

describeNeeding(['dig'], 'the CD bit', () => {
  const suite = serverForSuite(serverArgs, { mustSurvive: true });

  it('is copied from the query, fresh and from the answer cache, over UDP and TCP', async () => {
    const port = suite.server.port;
    for (const tcp of [false, true]) {
      // Fresh with CD; then without CD from the cache (filled with CD); then with CD again.
      for (const [name, order] of [
        [fixture.nginx, [true, false, true]],
        ['nope.default.svc.cluster.local', [false, true, false]],
      ] as const) {
        for (const cd of order) {
          const r = await digFlags(port, name, cd, tcp);
          expect(r.rcode).toBe(name === fixture.nginx ? 'NOERROR' : 'NXDOMAIN');
          expect(r.flags.includes('cd'), `${name} cd=${cd} tcp=${tcp}`).toBe(cd);
        }
      }
    }
  });
});
