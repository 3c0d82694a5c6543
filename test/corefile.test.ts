import { describe, it, expect } from 'vitest';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  parseCorefile,
  loadCorefile,
  checkDuplicateKeys,
  CorefileError,
  corefileErrors,
  excerpt,
  type Directive,
  type ServerBlock,
} from '../src/chain/corefile.js';

const FIX = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'corefile');

const parse = (text: string, env: Record<string, string | undefined> = {}) => parseCorefile(text, 'Corefile', { env });

/** Directive tree without file/line, for compact expectations. */
type Shape = { name: string; args: string[]; block?: Shape[] };
const shape = (ds: Directive[]): Shape[] => ds.map((d) => (d.block ? { name: d.name, args: d.args, block: shape(d.block) } : { name: d.name, args: d.args }));
const zones = (blocks: ServerBlock[]) => blocks.flatMap((b) => b.keys.map((k) => k.zone));

function parseError(text: string, env: Record<string, string | undefined> = {}): CorefileError {
  try {
    parse(text, env);
  } catch (e) {
    expect(e).toBeInstanceOf(CorefileError);
    return e as CorefileError;
  }
  throw new Error('expected a CorefileError');
}

const KUBEADM = `.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30
    loop
    reload
    loadbalance
}
`;

describe('kubeadm Corefile', () => {
  it('parses to the expected tree', () => {
    const blocks = parse(KUBEADM);
    expect(blocks).toHaveLength(1);
    const b = blocks[0]!;
    expect(b.keys).toEqual([{ raw: '.:53', zone: '.', port: 53 }]);
    expect(b.file).toBe('Corefile');
    expect(b.line).toBe(1);
    expect(shape(b.directives)).toEqual([
      { name: 'errors', args: [] },
      { name: 'health', args: [], block: [{ name: 'lameduck', args: ['5s'] }] },
      { name: 'ready', args: [] },
      {
        name: 'kubernetes',
        args: ['cluster.local', 'in-addr.arpa', 'ip6.arpa'],
        block: [
          { name: 'pods', args: ['insecure'] },
          { name: 'fallthrough', args: ['in-addr.arpa', 'ip6.arpa'] },
          { name: 'ttl', args: ['30'] },
        ],
      },
      { name: 'prometheus', args: [':9153'] },
      { name: 'forward', args: ['.', '/etc/resolv.conf'], block: [{ name: 'max_concurrent', args: ['1000'] }] },
      { name: 'cache', args: ['30'] },
      { name: 'loop', args: [] },
      { name: 'reload', args: [] },
      { name: 'loadbalance', args: [] },
    ]);
  });

  it('records file and 1-based line of every directive', () => {
    const d = parse(KUBEADM)[0]!.directives;
    expect(d.map((x) => x.line)).toEqual([2, 3, 6, 7, 12, 13, 16, 17, 18, 19]);
    expect(d[1]!.block![0]).toEqual({ name: 'lameduck', args: ['5s'], file: 'Corefile', line: 4 });
    expect(d[3]!.block!.map((x) => x.line)).toEqual([8, 9, 10]);
  });
});

describe('server blocks and keys', () => {
  it('parses several blocks', () => {
    const blocks = parse('example.org {\n whoami\n}\n\nexample.net:1053 {\n log\n errors\n}\n');
    expect(blocks.map((b) => b.keys)).toEqual([
      [{ raw: 'example.org', zone: 'example.org.' }],
      [{ raw: 'example.net:1053', zone: 'example.net.', port: 1053 }],
    ]);
    expect(blocks.map((b) => b.line)).toEqual([1, 5]);
    expect(shape(blocks[1]!.directives)).toEqual([
      { name: 'log', args: [] },
      { name: 'errors', args: [] },
    ]);
  });

  it('accepts keys separated by spaces and/or commas, and a trailing comma continues the list', () => {
    const b = parse('cluster.local:53 example.org:53, Example.NET,a.test,\n  b.test {\n whoami\n}\n');
    expect(b[0]!.keys.map((k) => [k.zone, k.port])).toEqual([
      ['cluster.local.', 53],
      ['example.org.', 53],
      ['example.net.', undefined],
      ['a.test.', undefined],
      ['b.test.', undefined],
    ]);
  });

  it('strips dns:// and keeps a port-less key port-less', () => {
    const b = parse('dns://cluster.local:53 dns://example.org {\n}\n');
    expect(b[0]!.keys).toEqual([
      { raw: 'dns://cluster.local:53', zone: 'cluster.local.', port: 53 },
      { raw: 'dns://example.org', zone: 'example.org.' },
    ]);
  });

  it('names the root zone with ".", ".:53" and ":53"', () => {
    expect(parse('. {\n}\n')[0]!.keys).toEqual([{ raw: '.', zone: '.' }]);
    expect(parse('.:53 {\n}\n')[0]!.keys).toEqual([{ raw: '.:53', zone: '.', port: 53 }]);
    expect(parse(':53 {\n}\n')[0]!.keys).toEqual([{ raw: ':53', zone: '.', port: 53 }]);
    expect(parse('Example.ORG.:0 {\n}\n')[0]!.keys).toEqual([{ raw: 'Example.ORG.:0', zone: 'example.org.', port: 0 }]);
  });

  it('allows a block on one line, an empty block, "{" on the next line and keys without a body', () => {
    expect(shape(parse('. { whoami }\n')[0]!.directives)).toEqual([{ name: 'whoami', args: [] }]);
    expect(parse('example.org {}\n')[0]!.directives).toEqual([]);
    expect(shape(parse('example.org\n{\n log\n}\n')[0]!.directives)).toEqual([{ name: 'log', args: [] }]);
    const keysOnly = parse('example.org:1053\n');
    expect(keysOnly).toEqual([{ keys: [{ raw: 'example.org:1053', zone: 'example.org.', port: 1053 }], directives: [], file: 'Corefile', line: 1 }]);
  });

  it('allows a single brace-less server block, as Caddy does', () => {
    const b = parse('example.org\nwhoami\nlog\n');
    expect(b).toHaveLength(1);
    expect(shape(b[0]!.directives)).toEqual([
      { name: 'whoami', args: [] },
      { name: 'log', args: [] },
    ]);
  });

  it('nests blocks and ends a line at "}"', () => {
    const b = parse('. {\n  health { lameduck 5s }\n  outer a {\n    inner b {\n      leaf c\n    }\n  }\n}\n');
    expect(shape(b[0]!.directives)).toEqual([
      { name: 'health', args: [], block: [{ name: 'lameduck', args: ['5s'] }] },
      { name: 'outer', args: ['a'], block: [{ name: 'inner', args: ['b'], block: [{ name: 'leaf', args: ['c'] }] }] },
    ]);
    const forward = parse('. {\n forward . 1.1.1.1 { policy random }\n}\n')[0]!.directives[0]!;
    expect(forward).toMatchObject({ name: 'forward', args: ['.', '1.1.1.1'], block: [{ name: 'policy', args: ['random'] }] });
  });
});

describe('reverse CIDR keys (CoreDNS plugin/normalize.go SplitHostPort + plugin/pkg/cidr Split/Reverse)', () => {
  const keysOf = (key: string) => parse(`${key} {\n}\n`)[0]!.keys;

  it('maps octet-aligned IPv4 prefixes to one in-addr.arpa zone', () => {
    expect(keysOf('10.0.0.0/24')).toEqual([{ raw: '10.0.0.0/24', zone: '0.0.10.in-addr.arpa.' }]);
    expect(keysOf('10.0.0.0/8:53')).toEqual([{ raw: '10.0.0.0/8:53', zone: '10.in-addr.arpa.', port: 53 }]);
    expect(keysOf('192.168.1.7/32')).toEqual([{ raw: '192.168.1.7/32', zone: '7.1.168.192.in-addr.arpa.' }]);
    expect(keysOf('0.0.0.0/0')).toEqual([{ raw: '0.0.0.0/0', zone: 'in-addr.arpa.' }]);
    // Host bits are cleared first, like Go's net.ParseCIDR.
    expect(keysOf('10.1.2.3/16')[0]!.zone).toBe('1.10.in-addr.arpa.');
  });

  it("splits a shorter non-aligned IPv4 prefix into the next boundary's subnets", () => {
    expect(keysOf('10.0.0.0/15')).toEqual([
      { raw: '10.0.0.0/15', zone: '0.10.in-addr.arpa.', network: '10.0.0.0/15' },
      { raw: '10.0.0.0/15', zone: '1.10.in-addr.arpa.', network: '10.0.0.0/15' },
    ]);
    const k = keysOf('10.9.3.0/18:1053');
    expect(k).toHaveLength(64);
    expect(k.slice(0, 3).map((x) => x.zone)).toEqual(['0.9.10.in-addr.arpa.', '1.9.10.in-addr.arpa.', '2.9.10.in-addr.arpa.']);
    expect(k[63]).toEqual({ raw: '10.9.3.0/18:1053', zone: '63.9.10.in-addr.arpa.', port: 1053, network: '10.9.0.0/18' });
  });

  it('splits a longer-than-/24 prefix into /32 zones (no enclosing /24 zone)', () => {
    const k = keysOf('10.0.0.0/25');
    expect(k).toHaveLength(128);
    expect(k[0]).toEqual({ raw: '10.0.0.0/25', zone: '0.0.0.10.in-addr.arpa.', network: '10.0.0.0/25' });
    expect(k[127]!.zone).toBe('127.0.0.10.in-addr.arpa.');
    expect(keysOf('10.0.0.128/26').map((x) => x.zone)[0]).toBe('128.0.0.10.in-addr.arpa.');
  });

  it('maps nibble-aligned IPv6 prefixes to one ip6.arpa zone', () => {
    expect(keysOf('fd00::/64')).toEqual([{ raw: 'fd00::/64', zone: '0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa.' }]);
    expect(keysOf('2001:db8::/32:53')).toEqual([{ raw: '2001:db8::/32:53', zone: '8.b.d.0.1.0.0.2.ip6.arpa.', port: 53 }]);
    expect(keysOf('2001:db8::/112')[0]!.zone).toBe('0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.');
  });

  it('splits non-nibble IPv6 prefixes (CoreDNS normalize_test.go cases)', () => {
    expect(keysOf('2001:db8::/29').map((x) => x.zone)).toEqual(['8', '9', 'a', 'b', 'c', 'd', 'e', 'f'].map((n) => `${n}.b.d.0.1.0.0.2.ip6.arpa.`));
    expect(keysOf('2001:db8::/30').map((x) => x.zone)).toEqual(['8', '9', 'a', 'b'].map((n) => `${n}.b.d.0.1.0.0.2.ip6.arpa.`));
    const k = keysOf('2001:db8::/115');
    expect(k.map((x) => x.zone)).toEqual(['0', '1'].map((n) => `${n}.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa.`));
    expect(k[0]!.network).toBe('2001:db8::/115');
  });

  it('rejects invalid CIDRs', () => {
    expect(parseError('::fFFF:B:F/115 {\n}\n').message).toMatch(/^Corefile:1: invalid CIDR/);
    expect(parseError('. {\n}\n10.0.0.0/33 {\n}\n').message).toMatch(/^Corefile:3: '10\.0\.0\.0\/33' .* is not a valid CIDR/);
    expect(parseError('10.0.0.01/24 {\n}\n').message).toMatch(/not a valid CIDR/);
  });
});

describe('tokens', () => {
  it('strips comments, but not inside quotes', () => {
    const b = parse('# header\n. { # trailing\n  log "a # b" c#d\n  # whole line\n}\n');
    expect(shape(b[0]!.directives)).toEqual([{ name: 'log', args: ['a # b', 'c'] }]);
  });

  it('handles quoted strings with \\" escapes, kept backslashes and newlines', () => {
    const b = parse('. {\n  x "a b" "say \\"hi\\"" "C:\\\\dir" "" "two\nlines" after\n  y\n}\n');
    const [x, y] = b[0]!.directives;
    expect(x!.args).toEqual(['a b', 'say "hi"', 'C:\\\\dir', '', 'two\nlines', 'after']);
    expect(y).toMatchObject({ name: 'y', line: 4 });
  });

  it('treats quoted braces as plain text', () => {
    const b = parse('. {\n  template "{" "}"\n}\n');
    expect(b[0]!.directives[0]!.args).toEqual(['{', '}']);
  });

  it('substitutes {$VAR}, {%VAR%} and {env.VAR}; a variable set to empty vanishes from a longer token', () => {
    const env = { ZONE: 'cluster.local', PORT: '1053', UP: '1.1.1.1', TTL: '30', EMPTY: '' };
    const b = parse('{$ZONE}:{$PORT} {\n  forward . {%UP%} "{env.UP}"\n  ttl {env.TTL}x{$EMPTY}\n}\n', env);
    expect(b[0]!.keys).toEqual([{ raw: 'cluster.local:1053', zone: 'cluster.local.', port: 1053 }]);
    expect(shape(b[0]!.directives)).toEqual([
      { name: 'forward', args: ['.', '1.1.1.1', '1.1.1.1'] },
      { name: 'ttl', args: ['30x'] },
    ]);
  });

  it('keeps a substituted value as one token even with spaces', () => {
    expect(parse('. {\n  log {$V}\n}\n', { V: 'a b' })[0]!.directives[0]!.args).toEqual(['a b']);
  });

  it('defaults to process.env', () => {
    process.env.CLUSTERDNS_COREFILE_TEST = 'from-env.test';
    try {
      expect(parseCorefile('{$CLUSTERDNS_COREFILE_TEST} {\n}\n', 'Corefile')[0]!.keys[0]!.zone).toBe('from-env.test.');
    } finally {
      delete process.env.CLUSTERDNS_COREFILE_TEST;
    }
  });
});

describe('snippets and imports', () => {
  it('splices a snippet at top level, in a server block and in a directive block', () => {
    const text = [
      '(common) {',
      '  errors',
      '  cache 30',
      '}',
      '(opts) {',
      '  policy random',
      '}',
      '(server) {',
      '  extra.test {',
      '    log',
      '  }',
      '}',
      'example.org {',
      '  import common',
      '  forward . 1.1.1.1 {',
      '    import opts',
      '  }',
      '}',
      'import server',
    ].join('\n');
    const b = parse(text);
    expect(b).toHaveLength(2);
    expect(shape(b[0]!.directives)).toEqual([
      { name: 'errors', args: [] },
      { name: 'cache', args: ['30'] },
      { name: 'forward', args: ['.', '1.1.1.1'], block: [{ name: 'policy', args: ['random'] }] },
    ]);
    // Spliced lines keep the location where they were written.
    expect(b[0]!.directives[0]).toMatchObject({ file: 'Corefile', line: 2 });
    expect(b[1]!.keys[0]!.zone).toBe('extra.test.');
    expect(shape(b[1]!.directives)).toEqual([{ name: 'log', args: [] }]);
  });

  it('expands a snippet on the same line after "{"', () => {
    const b = parse('(s) {\n  log\n}\n. { import s }\n');
    expect(shape(b[0]!.directives)).toEqual([{ name: 'log', args: [] }]);
  });

  it('imports files and globs relative to the Corefile directory', () => {
    const file = path.join(FIX, 'Corefile');
    const blocks = loadCorefile(file, { env: {} });
    expect(zones(blocks)).toEqual(['a.example.', 'b.example.', 'cluster.local.']);
    expect(shape(blocks[0]!.directives)).toEqual([
      { name: 'errors', args: [] },
      { name: 'cache', args: ['30'] },
    ]);
    expect(blocks[0]!.file).toBe(path.join(FIX, 'servers', 'a.conf'));
    expect(shape(blocks[2]!.directives)).toEqual([
      { name: 'errors', args: [] },
      { name: 'cache', args: ['30'] },
      { name: 'prometheus', args: [':9153'] },
      { name: 'forward', args: ['.', '/etc/resolv.conf'], block: [{ name: 'max_concurrent', args: ['1000'] }] },
      { name: 'kubernetes', args: ['cluster.local'] },
    ]);
    const fwd = blocks[2]!.directives[3]!;
    expect(fwd.file).toBe(path.join(FIX, 'conf.d', 'plugins.conf'));
    expect(fwd.line).toBe(2);
    expect(fwd.block![0]!.line).toBe(3);
    expect(blocks[2]!.directives[4]).toMatchObject({ file, line: 12 });
  });

  it('uses opts.readFile for imports', () => {
    const files: Record<string, string> = { [path.resolve('/cfg/extra.conf')]: 'log\nerrors\n' };
    const b = parseCorefile('. {\n import extra.conf\n}\n', '/cfg/Corefile', {
      env: {},
      readFile: (p) => {
        const t = files[p];
        if (t === undefined) throw new Error('ENOENT');
        return t;
      },
    });
    expect(shape(b[0]!.directives)).toEqual([
      { name: 'log', args: [] },
      { name: 'errors', args: [] },
    ]);
  });

  it('warns, like CoreDNS, when a glob matches nothing', () => {
    const warnings: string[] = [];
    const b = parseCorefile('import none/*.conf\n. {\n whoami\n}\n', path.join(FIX, 'emptyglob.Corefile'), { env: {}, onWarning: (w) => warnings.push(w) });
    expect(zones(b)).toEqual(['.']);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/emptyglob\.Corefile:1: no files match/);
  });
});

describe('errors carry file:line and say how to fix', () => {
  it.each([
    ['unbalanced: block never closed', '. {\n  log\n', 1, /never closed; add a matching '}'/],
    // The '}' lines up with '. {', so the block it was written for is that one: health's is open.
    [
      'unbalanced: nested block never closed',
      '. {\n  health {\n    lameduck 5s\n}\n',
      2,
      /never closed; add a matching '\}' \(the '\}' on line 4 lines up with the block of line 1/,
    ],
    [
      'unbalanced: nested block never closed, more after it',
      'a.org {\n  kubernetes {\n    manifests m\n  forward . 1.1.1.1\n}\nb.org {\n  log\n}\n',
      2,
      /never closed/,
    ],
    ['unbalanced: every nested block closed, the server block not', '. {\n  health {\n    lameduck 5s\n  }\n', 1, /never closed; add a matching '\}'$/],
    ['unbalanced: a server block left open before the next', 'a.org {\n  log\nb.org {\n  log\n}\n', 1, /never closed/],
    ['unbalanced: stray }', '. {\n}\n}\n', 3, /unexpected '}' with no matching '{'/],
    ['unterminated quote', '. {\n  log "abc\n}\n', 2, /unterminated quoted string/],
    ['missing server block body', 'example.org\n.:53 {\n  whoami\n}\n', 1, /missing server block body/],
    ['{ on its own line inside a block', '. {\n  health\n  {\n  }\n}\n', 3, /same line as its directive/],
    ['tokens after a closing }', '. {\n  health { lameduck 5s } log\n}\n', 2, /unexpected 'log' after '}'/],
    ['empty key from commas', 'a.test,,b.test {\n}\n', 1, /empty server block key/],
    ['empty quoted key', 'a.test "" {\n}\n', 1, /empty server block key/],
    ['trailing comma before {', 'a.test, {\n}\n', 1, /remove the trailing comma/],
    ['non-numeric port', 'example.org:dns {\n}\n', 1, /bad port 'dns'.*must be a number/],
    ['port > 65535', '. {\n}\nexample.org:70000 {\n}\n', 3, /bad port 70000.*0 to 65535/],
    ['colon without port', 'example.org: {\n}\n', 1, /has no port/],
    ['https3 transport', 'https3://. {\n}\n', 1, /transport https3:\/\/ .* not supported: it runs over QUIC, which Node 20 does not have/],
    [
      'quic transport names the schemes served',
      'quic://. {\n}\n',
      1,
      /which Node 20 does not have; use dns:\/\/, tls:\/\/, https:\/\/, grpc:\/\/ or no scheme/,
    ],
    ['quic transport', 'quic://. {\n}\n', 1, /transport quic:\/\/ .* not supported: it runs over QUIC, which Node 20 does not have/],
    ['unknown scheme', 'udp://. {\n}\n', 1, /unknown scheme udp:\/\//],
    ['bad domain name', 'a..b {\n}\n', 1, /not a valid domain name/],
    [
      'duplicate key across blocks',
      'example.org:53 {\n}\n\nEXAMPLE.org.:53 {\n}\n',
      4,
      /cannot serve dns:\/\/example\.org\.:53 - it is already defined by the server block at Corefile:1/,
    ],
    ['duplicate key within a block', 'example.org example.org {\n}\n', 1, /cannot serve dns:\/\/example\.org\. - it is already defined earlier in this block/],
    ['duplicate via CIDR split', '10.0.0.0/15 {\n}\n1.10.in-addr.arpa {\n}\n', 3, /cannot serve dns:\/\/1\.10\.in-addr\.arpa\./],
    ['unknown snippet / import target', '. {\n  import nosuch\n}\n', 2, /no snippet \(nosuch\) is defined above this line and no file .* exists/],
    ['snippet used before its definition', '. {\n  import s\n}\n(s) {\n  log\n}\n', 2, /no snippet \(s\)/],
    ['import without argument', '. {\n  import\n  log\n}\n', 2, /import needs one argument/],
    ['import with two arguments', '(s) {\n}\n. {\n  import s t\n}\n', 4, /exactly one argument/],
    ['import with two wildcards', 'import *.d/*.conf\n', 1, /only one wildcard/],
    ['snippet redefined', '(s) {\n}\n(s) {\n}\n', 3, /already defined/],
    ['snippet without braces', '(s)\n', 1, /must be followed by '\{ \.\.\. \}'/],
    ['snippet never closed', '(s) {\n  log\n', 1, /never closed/],
    ['snippet importing itself', '(s) {\n  import s\n}\n. {\n  import s\n}\n', 2, /import cycle: snippet \(s\) imports snippet \(s\)/],
    [
      'snippets importing each other',
      '(a) {\n  import b\n}\n(b) {\n  import a\n}\n. {\n  import a\n}\n',
      5,
      /import cycle: snippet \(a\) imports snippet \(b\) imports snippet \(a\)/,
    ],
  ])('%s', (_name, text, line, msg) => {
    const e = parseError(text);
    expect(e.file).toBe('Corefile');
    expect(e.line).toBe(line);
    expect(e.reason).toMatch(msg);
    expect(e.message).toBe(`Corefile:${line}: ${e.reason}`);
  });

  it('reports errors inside imported files with that file and line', () => {
    const e = (() => {
      try {
        parseCorefile('. {\n import bad.conf\n}\n', '/cfg/Corefile', { env: {}, readFile: () => 'log\nforward . {\n' });
      } catch (err) {
        return err as CorefileError;
      }
      throw new Error('expected error');
    })();
    expect(e).toBeInstanceOf(CorefileError);
    expect(e.file).toBe(path.resolve('/cfg/bad.conf'));
    expect(e.line).toBe(2);
    expect(e.reason).toMatch(/never closed in this imported file/);
  });

  it('detects file import cycles', () => {
    const root = path.join(FIX, 'cycle', 'Corefile');
    expect(() => loadCorefile(root, { env: {} })).toThrow(CorefileError);
    try {
      loadCorefile(root, { env: {} });
    } catch (e) {
      const err = e as CorefileError;
      expect(err.file).toBe(path.join(FIX, 'cycle', 'b.conf'));
      expect(err.line).toBe(1);
      expect(err.reason).toContain(
        `import cycle: ${path.join(FIX, 'cycle', 'a.conf')} imports ${path.join(FIX, 'cycle', 'b.conf')} imports ${path.join(FIX, 'cycle', 'a.conf')}`,
      );
    }
  });

  it('reports a missing import file at the import line', () => {
    const file = path.join(FIX, 'missing.Corefile');
    try {
      loadCorefile(file, { env: {} });
      throw new Error('expected error');
    } catch (e) {
      expect(e).toBeInstanceOf(CorefileError);
      expect((e as CorefileError).message).toMatch(
        new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2: import nothere\\.conf: .*no file .*nothere\\.conf exists`),
      );
    }
  });

  it('reports an unreadable Corefile', () => {
    expect(() => loadCorefile(path.join(FIX, 'does-not-exist'))).toThrow(/cannot read Corefile/);
  });
});

describe('checkDuplicateKeys with the CLI default port', () => {
  it('treats a port-less key as the default port', () => {
    const blocks = parse('example.org {\n}\nexample.org:53 {\n}\n');
    expect(() => checkDuplicateKeys(blocks, 1053)).not.toThrow();
    expect(() => checkDuplicateKeys(blocks, 53)).toThrow(/Corefile:3: cannot serve dns:\/\/example\.org\.:53 - it is already defined/);
  });
});

describe('every error of a run, in line order', () => {
  const all = (text: string, opts: Parameters<typeof parseCorefile>[2] = { env: {} }): string[] => {
    try {
      parseCorefile(text, '/cfg/Corefile', opts);
    } catch (e) {
      return (corefileErrors(e) ?? []).map((x) => x.message);
    }
    return [];
  };

  it('goes on after a failed import and reports the imported file after the Corefile', () => {
    const files: Record<string, string> = { '/cfg/bad.conf': 'log "unterminated\n', '/cfg/ok.conf': 'log\n' };
    const readFile = (p: string): string => {
      const t = files[p];
      if (t === undefined) throw new Error(`ENOENT: ${p}`);
      return t;
    };
    expect(all('. {\n  import bad.conf\n  import ok.conf\n  import {$NOPE}\n}\nx..y {\n}\n', { env: {}, readFile })).toEqual([
      "/cfg/Corefile:4: environment variable NOPE is not set (used in '{$NOPE}'); set it, or write the value instead",
      "/cfg/Corefile:6: zone in key 'x..y' is not a valid domain name: it has an empty label (two dots in a row or a leading dot)",
      '/cfg/bad.conf:1: unterminated quoted string: add the closing "',
    ]);
  });

  it('reports a snippet cycle and keeps parsing', () => {
    expect(all('(a) {\n  import a\n}\n. {\n  import a\n}\nbad:port {\n}\n')).toEqual([
      '/cfg/Corefile:2: import cycle: snippet (a) imports snippet (a); remove one of these imports',
      "/cfg/Corefile:7: bad port 'port' in key 'bad:port': the port must be a number, e.g. 'bad:53'",
    ]);
  });

  it('stops at a brace error, keeping what was found before it', () => {
    expect(all('a..b {\n}\n}\nc..d {\n}\n')).toEqual([
      "/cfg/Corefile:1: zone in key 'a..b' is not a valid domain name: it has an empty label (two dots in a row or a leading dot)",
      "/cfg/Corefile:3: unexpected '}' with no matching '{'",
    ]);
  });

  it('stops after maxErrors and says so', () => {
    const text = Array.from({ length: 20 }, (_, i) => `k${i}..x {\n}\n`).join('');
    const got = all(text, { env: {}, limits: { maxErrors: 5 } });
    expect(got).toHaveLength(6);
    expect(got[5]).toMatch(/stopped after 5 errors \(--max-corefile-errors\)/);
  });
});

describe('excerpt', () => {
  it('cuts at 40 characters and escapes control and non-ASCII characters', () => {
    expect(excerpt('a'.repeat(41))).toBe(`${'a'.repeat(40)}...`);
    expect(excerpt('a\u0000b\u001bc\u00e9')).toBe('a\\x00b\\x1bc\\xe9');
    expect(excerpt('short')).toBe('short');
  });

  it('a CorefileError never carries a word of more than 200 characters', () => {
    const e = new CorefileError('f', 1, `bad "${'z'.repeat(5000)}" here; /a/path/that/stays/whole`);
    expect(e.reason).toBe(`bad ${`"${'z'.repeat(39)}`}... here; /a/path/that/stays/whole`);
  });
});

describe('unknown plugins', () => {
  it('names the nearest supported plugin when the name is a misspelling of one', async () => {
    const { setupBlock } = await import('./helpers/setup.js');
    const r = await setupBlock('  kubernets cluster.local\n  forwrd . 127.0.0.1\n  Cache\n  frobnicate');
    expect(r.errors).toEqual([
      expect.stringMatching(/^2: unknown plugin "kubernets"; did you mean kubernetes\? \(supported: .*\)$/),
      expect.stringMatching(/^3: unknown plugin "forwrd"; did you mean forward\? /),
      expect.stringMatching(/^4: unknown plugin "Cache"; did you mean cache\? /),
      expect.stringMatching(/^5: unknown plugin "frobnicate" \(supported: /),
    ]);
  });
});
