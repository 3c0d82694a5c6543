// etcd: Corefile syntax (accepted and rejected snippets with their errors), path/msg helpers
// against CoreDNS's msg tests, and startup with etcd unreachable: SERVFAIL and not ready until
// the first read, then answers, ready and the revision metric once etcd is up.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCorefile } from '../../../src/chain/corefile.js';
import { parseEtcd } from '../../../src/plugins/etcd/setup.js';
import { keyDomain, namePath, pathWithWildcard } from '../../../src/plugins/etcd/path.js';
import { group, parseService, targetStrip, type KeyedService } from '../../../src/plugins/etcd/msg.js';
import { digQuery } from '../../helpers/clients.js';
import { etcdBinary } from '../../helpers/etcd.js';
import { freePort, startServer, which } from '../../helpers/server.js';
import { retryFor, waitUntil } from '../../helpers/wait.js';
import { spawn } from 'node:child_process';
import { Etcd3 } from 'etcd3';
import { describeNeeding } from '../../helpers/tools.js';

const dig = which('dig');

function parse(text: string): ReturnType<typeof parseEtcd> {
  const blocks = parseCorefile(text, 'Corefile');
  const b = blocks[0]!;
  return parseEtcd(
    b.directives.find((d) => d.name === 'etcd')!,
    b.keys.map((k) => k.zone),
  );
}

describe('etcd Corefile syntax', () => {
  it('defaults as CoreDNS: path skydns, localhost:2379, lease TTLs 30 s to 24 h, the block zones', () => {
    expect(parse('skydns.local {\n  etcd\n}\n')).toEqual({
      zones: ['skydns.local.'],
      path: 'skydns',
      endpoints: ['http://localhost:2379'],
      minLeaseTtl: 30,
      maxLeaseTtl: 86400,
      changesetTimeoutMs: 60_000,
      lookupLimit: 4096,
    });
  });

  it('reads every option', () => {
    const cfg = parse(
      'skydns.local 10.0.0.0/24 {\n  etcd skydns.local 10.0.0.0/24 {\n    path /mydns\n    endpoint http://127.0.0.1:2379 http://127.0.0.1:4001\n    credentials root secret\n    min-lease-ttl 60\n    max-lease-ttl 1h\n    fallthrough in-addr.arpa\n    changeset_timeout 5m\n    lookup_limit 100\n    stubzones\n  }\n}\n',
    );
    expect(cfg).toEqual({
      zones: ['skydns.local.', '0.0.10.in-addr.arpa.'],
      path: '/mydns',
      endpoints: ['http://127.0.0.1:2379', 'http://127.0.0.1:4001'],
      username: 'root',
      password: 'secret',
      minLeaseTtl: 60,
      maxLeaseTtl: 3600,
      fallthrough: ['in-addr.arpa.'],
      changesetTimeoutMs: 300_000,
      lookupLimit: 100,
    });
  });

  const rejected: [string, string][] = [
    ['etcd {\n    endpoint\n  }', 'Corefile:3: etcd endpoint: wrong number of arguments: 0 given, at least 1 expected'],
    ['etcd {\n    endpoint localhost:2379\n  }', 'Corefile:3: etcd endpoint: "localhost:2379" is not an http:// or https:// URL'],
    ['etcd {\n    credentials root\n  }', 'Corefile:3: etcd credentials: wrong number of arguments: 1 given, 2 expected'],
    ['etcd {\n    min-lease-ttl soon\n  }', 'Corefile:3: etcd min-lease-ttl: "soon" is not a TTL'],
    ['etcd {\n    max-lease-ttl -5s\n  }', 'Corefile:3: etcd max-lease-ttl: "-5s" must not be negative'],
    ['etcd {\n    min-lease-ttl 25h\n  }', 'Corefile:2: etcd: min-lease-ttl (90000s) is above max-lease-ttl (86400s)'],
    ['etcd {\n    path\n  }', 'Corefile:3: etcd path: wrong number of arguments: 0 given, 1 expected'],
    ['etcd {\n    tls /nonexistent/ca.pem\n  }', 'Corefile:3: etcd tls: file /nonexistent/ca.pem does not exist'],
    ['etcd {\n    bogus 1\n  }', 'Corefile:3: unknown etcd option "bogus"'],
    ['etcd {\n    changeset_timeout 0\n  }', 'Corefile:3: etcd changeset_timeout: "0" must be more than 0'],
    ['etcd {\n    lookup_limit 0\n  }', 'Corefile:3: etcd lookup_limit: N must be at least 1: 0'],
    ['etcd other.zone', "Corefile:2: etcd: zone other.zone. is not inside the server block's zones"],
  ];
  for (const [snippet, error] of rejected) {
    it(`rejects: ${snippet.replace(/\s+/g, ' ')}`, () => {
      expect(() => parse(`skydns.local {\n  ${snippet}\n}\n`)).toThrow(error);
    });
  }
});

describe('etcd setup errors, word for word', () => {
  // Every message of etcd/setup.ts, whole: the table above matches the start of some of them.
  const errorOf = (snippet: string): string => {
    try {
      parse(`skydns.local {\n  ${snippet}\n}\n`);
    } catch (err) {
      return (err as Error).message;
    }
    return 'accepted';
  };
  const ca = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-etcd-setup-')), 'ca.pem');
  fs.writeFileSync(ca, '');
  const rows: [string, string][] = [
    ['etcd {\n    path a b\n  }', 'Corefile:3: etcd path: wrong number of arguments: 2 given, 1 expected; usage `path PATH`, e.g. `path /skydns`'],
    ['etcd {\n    path /\n  }', 'Corefile:3: etcd path: must name a key prefix such as /skydns, not the root'],
    [
      'etcd {\n    endpoint\n  }',
      'Corefile:3: etcd endpoint: wrong number of arguments: 0 given, at least 1 expected; usage `endpoint URL...`, e.g. `endpoint http://127.0.0.1:2379`',
    ],
    [
      'etcd {\n    endpoint http://127.0.0.1:2379 ftp://x\n  }',
      'Corefile:3: etcd endpoint: "ftp://x" is not an http:// or https:// URL with a host, e.g. http://127.0.0.1:2379',
    ],
    [
      'etcd {\n    credentials root\n  }',
      'Corefile:3: etcd credentials: wrong number of arguments: 1 given, 2 expected; usage `credentials USERNAME PASSWORD`',
    ],
    ['etcd {\n    tls a b c d\n  }', 'Corefile:3: etcd tls: wrong number of arguments: 4 given, at most 3 expected; usage `tls [CERT KEY] [CACERT]`'],
    ['etcd {\n    tls /nonexistent/ca.pem\n  }', 'Corefile:3: etcd tls: file /nonexistent/ca.pem does not exist'],
    [`etcd {\n    tls ${ca}\n  }`, 'Corefile:2: etcd: tls is set but an endpoint is http://; use https:// endpoints with tls'],
    [
      'etcd {\n    min-lease-ttl\n  }',
      'Corefile:3: etcd min-lease-ttl: wrong number of arguments: 0 given, 1 expected; usage `min-lease-ttl TTL`, e.g. `min-lease-ttl 30s`',
    ],
    [
      'etcd {\n    max-lease-ttl 1h 2h\n  }',
      'Corefile:3: etcd max-lease-ttl: wrong number of arguments: 2 given, 1 expected; usage `max-lease-ttl TTL`, e.g. `max-lease-ttl 30s`',
    ],
    ['etcd {\n    min-lease-ttl soon\n  }', 'Corefile:3: etcd min-lease-ttl: "soon" is not a TTL; write e.g. 30, 30s, 5m, 1h or 2h30m'],
    ['etcd {\n    max-lease-ttl -5s\n  }', 'Corefile:3: etcd max-lease-ttl: "-5s" must not be negative'],
    ['etcd {\n    max-lease-ttl 5000000000\n  }', 'Corefile:3: etcd max-lease-ttl: "5000000000" is too large: the maximum is 4294967295 seconds'],
    ['etcd {\n    min-lease-ttl 25h\n  }', 'Corefile:2: etcd: min-lease-ttl (90000s) is above max-lease-ttl (86400s)'],
    ['etcd {\n    lookup_limit many\n  }', 'Corefile:3: etcd lookup_limit: N "many" is not an integer'],
    [
      'etcd {\n    changeset_timeout\n  }',
      'Corefile:3: etcd changeset_timeout: wrong number of arguments: 0 given, 1 expected; usage `changeset_timeout DURATION`, e.g. `changeset_timeout 60s`',
    ],
    [
      'etcd {\n    bogus 1\n  }',
      'Corefile:3: unknown etcd option "bogus"; valid options: path, endpoint, credentials, tls, min-lease-ttl, max-lease-ttl, ' +
        'fallthrough, changeset_timeout, lookup_limit',
    ],
    [
      'etcd other.zone',
      "Corefile:2: etcd: zone other.zone. is not inside the server block's zones (skydns.local.); queries for it would never reach the plugin",
    ],
  ];
  for (const [snippet, error] of rows) {
    it(`rejects: ${snippet.replace(/\s+/g, ' ')}`, () => {
      expect(errorOf(snippet)).toBe(error);
    });
  }

  it('accepts tls with https endpoints', () => {
    const cfg = parse(`skydns.local {\n  etcd {\n    tls ${ca}\n    endpoint https://127.0.0.1:2379\n  }\n}\n`);
    expect([cfg.tls, cfg.endpoints]).toEqual([{ ca }, ['https://127.0.0.1:2379']]);
  });
});

describe('SkyDNS paths and values (CoreDNS msg tests)', () => {
  it('maps names to keys and back', () => {
    for (const p of ['mydns', 'skydns', '/skydns', '/skydns/'])
      expect(namePath('service.staging.skydns.local.', p)).toBe(`/${p.replace(/\//g, '')}/local/skydns/staging/service`);
    expect(keyDomain('/skydns/local/cluster/staging/service/')).toBe('service.staging.cluster.local.');
    expect(keyDomain('/skydns/local/cluster/staging/service')).toBe('service.staging.cluster.local.');
    expect(pathWithWildcard('prod.*.skydns.test.', 'skydns')).toEqual({ path: '/skydns/test/skydns', star: true });
    expect(pathWithWildcard('a.any.b.test.', 'skydns')).toEqual({ path: '/skydns/test/b', star: true });
  });

  it('targetstrip drops labels from the left, or keeps the name when it would overshoot', () => {
    expect(targetStrip('a.b.example.org.', 1)).toBe('b.example.org.');
    expect(targetStrip('a.b.example.org.', 9)).toBe('a.b.example.org.');
  });

  it('group: the shortest key decides; disagreement at that level keeps everything (group_test.go)', () => {
    const s = (key: string, grp: string): KeyedService => ({ ...(parseService('{}') as KeyedService), key, group: grp });
    expect(group([s('/s/a', 'g1'), s('/s/b/c', 'g1'), s('/s/b/d', 'g2')]).map((x) => x.key)).toEqual(['/s/a', '/s/b/c']);
    expect(group([s('/s/a', 'g1'), s('/s/b', 'g2'), s('/s/b/d', 'g2')]).map((x) => x.key)).toEqual(['/s/a', '/s/b', '/s/b/d']);
    expect(group([s('/s/a', ''), s('/s/b/c', 'g1')]).map((x) => x.key)).toEqual(['/s/a', '/s/b/c']);
  });

  it('reads values with Go encoding/json rules: case-insensitive names, null fields, exact types', () => {
    expect(parseService('{"Host":"10.0.0.1","PORT":53,"ttl":null}')).toMatchObject({ host: '10.0.0.1', port: 53, ttl: 0 });
    expect(parseService('null')).toMatchObject({ host: '' });
    expect(parseService('{"port":1.5}')).toMatch(/"port" must be an integer/);
    expect(parseService('{"ttl":-1}')).toMatch(/"ttl" must be an integer from 0 to 4294967295/);
    expect(parseService('{"mail":"yes"}')).toMatch(/"mail" must be true or false/);
    expect(parseService('[1]')).toMatch(/a JSON array, not an object/);
    expect(parseService('{"extra":1}')).toMatch(/unknown field "extra"/);
  });
});

describeNeeding(['etcd', 'dig'], 'etcd unreachable at startup', () => {
  it('answers SERVFAIL and reports not ready until the first read; then serves, is ready, exports the revision', async () => {
    const clientPort = await freePort();
    const peerPort = await freePort();
    const readyPort = await freePort();
    const metricsPort = await freePort();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'clusterdns-etcd-late-'));
    const url = `http://127.0.0.1:${clientPort}`;
    fs.writeFileSync(
      path.join(dir, 'Corefile'),
      `skydns.test {\n    bind 127.0.0.1\n    ready 127.0.0.1:${readyPort}\n    prometheus 127.0.0.1:${metricsPort}\n    etcd {\n        endpoint ${url}\n    }\n}\n`,
    );
    const server = await startServer(['--conf', path.join(dir, 'Corefile')], { timeoutMs: 20_000, until: 'listening' });
    let etcd: ReturnType<typeof spawn> | undefined;
    try {
      expect((await digQuery(dig!, server.port, 'a.skydns.test.', 'A', false)).rcode).toBe('SERVFAIL');
      const notReady = await fetch(`http://127.0.0.1:${readyPort}/ready`);
      expect([notReady.status, await notReady.text()]).toEqual([503, 'etcd']);
      // The ready line waits for the first read; the line before it says why, in words.
      expect(server.logs.some((l) => l.includes('"clusterdns ready"'))).toBe(false);
      const waiting = server.logs.find((l) => l.includes('clusterdns listening; not ready yet'));
      expect(waiting).toContain(`etcd at ${url}`);
      expect(waiting).not.toMatch(/UNAVAILABLE|Resolution note/);
      etcd = spawn(
        etcdBinary!,
        [
          '--data-dir',
          path.join(dir, 'data'),
          '--listen-client-urls',
          url,
          '--advertise-client-urls',
          url,
          '--listen-peer-urls',
          `http://127.0.0.1:${peerPort}`,
          '--initial-advertise-peer-urls',
          `http://127.0.0.1:${peerPort}`,
          '--initial-cluster',
          `default=http://127.0.0.1:${peerPort}`,
          '--log-level',
          'error',
          '--logger',
          'zap',
        ],
        { stdio: 'ignore' },
      );
      const client = new Etcd3({ hosts: url });
      let rev = 0;
      try {
        rev = await retryFor(
          'etcd to take a write',
          async () => Number((await client.put('/skydns/test/skydns/a').value('{"host":"10.5.0.1"}').exec()).header.revision),
          15_000,
          100,
        );
      } finally {
        client.close();
      }
      await waitUntil(
        'an answer after etcd came up',
        async () => (await digQuery(dig!, server.port, 'a.skydns.test.', 'A', false)).answer[0] === 'a.skydns.test. 300 IN A 10.5.0.1',
        10_000,
        100,
      );
      const ready = await fetch(`http://127.0.0.1:${readyPort}/ready`);
      expect(ready.status).toBe(200);
      await waitUntil('the ready line once etcd was read', () => server.logs.some((l) => l.includes('"clusterdns ready"')), 5000);
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      expect(metrics).toContain(`clusterdns_etcd_revision{zones="skydns.test."} ${rev}`);
      expect(metrics).toContain('clusterdns_etcd_watch_connected{zones="skydns.test."} 1');
      expect(metrics).toMatch(/clusterdns_etcd_lag_seconds\{zones="skydns.test."\} 0/);
    } finally {
      await server.stop();
      if (etcd && etcd.exitCode === null) {
        const e = etcd;
        await new Promise<void>((resolve) => {
          e.once('exit', () => resolve());
          process.kill(e.pid!, 'SIGKILL');
        });
      }
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 40_000);
});
