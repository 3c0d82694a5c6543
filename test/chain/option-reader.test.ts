// The option reader every plugin setup uses: for each kind of mistake one wording, naming the
// line (file:line), the option, the bad value (cut by excerpt) and the fix; and what each typed
// read returns when the value is good.
import { describe, expect, it } from 'vitest';
import { corefileErrors, parseCorefile } from '../../src/chain/corefile.js';
import { OptionReader } from '../../src/chain/option-reader.js';

/** The first directive of `. { BODY }`. */
function reader(body: string): OptionReader {
  const [block] = parseCorefile(`. {\n${body}\n}\n`, 'Corefile');
  return OptionReader.of(block!.directives[0]!);
}

/** Every error `read` throws, as `file:line: reason`; [] when it throws none. */
function errors(body: string, read: (r: OptionReader) => unknown): string[] {
  try {
    read(reader(body));
    return [];
  } catch (err) {
    const found = corefileErrors(err);
    if (!found) throw err;
    return found.map((e) => e.message);
  }
}

describe('OptionReader: values read', () => {
  it.each([
    ['demo 1 2', (r: OptionReader) => r.arity(1, 3, 'demo A [B] [C]').args, ['1', '2']],
    ['demo 30', (r: OptionReader) => r.ttl(0), 30],
    ['demo +7', (r: OptionReader) => r.int(0, 'COUNT', { min: 0 }), 7],
    ['demo 1m30s', (r: OptionReader) => r.duration(0, 'interval'), 90_000],
    ['demo 0', (r: OptionReader) => r.duration(0, 'jitter', { min: 1000, zero: true }), 0],
    ['demo verify', (r: OptionReader) => r.choice(0, 'mode', ['immediate', 'verify']), 'verify'],
    ['demo a 10.0.0.0/24 Example.COM', (r: OptionReader) => r.zones(1, ['block.']), ['0.0.10.in-addr.arpa.', 'example.com.']],
    ['demo a', (r: OptionReader) => r.zones(1, ['block.']), ['block.']],
  ] as const)('%s', (body, read, want) => {
    expect(read(reader(body))).toEqual(want);
  });

  it('block: each line goes to its handler, in order', () => {
    const seen: string[] = [];
    reader('demo {\n  one 1\n  two\n  one 3\n}').block({ one: (o) => seen.push(`one=${o.int(0, 'N')}`), two: (o) => seen.push(`two:${o.noArgs().count}`) });
    expect(seen).toEqual(['one=1', 'two:0', 'one=3']);
  });

  it('block: a line no option takes goes to `other` when it takes it', () => {
    const inline: string[] = [];
    reader('demo {\n  10.0.0.1 a.example\n}').block(
      { ttl: () => undefined },
      {
        other: (o) => {
          inline.push(o.name);
          return true;
        },
      },
    );
    expect(inline).toEqual(['10.0.0.1']);
  });
});

const LONG = 'x'.repeat(300);

describe('OptionReader: one wording per mistake', () => {
  it.each([
    // arity (CoreDNS's ArgErr), with the usage as the fix
    [
      'demo',
      (r: OptionReader) => r.arity(1, 3, 'demo A [B] [C]'),
      'Corefile:2: demo: wrong number of arguments: 0 given, 1 to 3 expected; usage `demo A [B] [C]`',
    ],
    ['demo 1 2', (r: OptionReader) => r.arity(1, 1, 'demo A'), 'Corefile:2: demo: wrong number of arguments: 2 given, 1 expected; usage `demo A`'],
    ['demo 1 2', (r: OptionReader) => r.arity(0, 1, 'demo [A]'), 'Corefile:2: demo: wrong number of arguments: 2 given, at most 1 expected; usage `demo [A]`'],
    [
      'demo',
      (r: OptionReader) => r.arity(2, Infinity, 'demo A B...'),
      'Corefile:2: demo: wrong number of arguments: 0 given, at least 2 expected; usage `demo A B...`',
    ],
    ['demo x', (r: OptionReader) => r.noArgs(), 'Corefile:2: demo takes no arguments, got "x"'],
    ['demo {\n  x\n}', (r: OptionReader) => r.noBlock(), 'Corefile:2: demo takes no option block'],
    // integers and TTLs
    ['demo 1x', (r: OptionReader) => r.int(0, 'COUNT'), 'Corefile:2: demo: COUNT "1x" is not an integer'],
    ['demo -1', (r: OptionReader) => r.int(0, 'COUNT', { min: 0 }), 'Corefile:2: demo: COUNT must be at least 0: -1'],
    ['demo 3601', (r: OptionReader) => r.ttl(0), 'Corefile:2: demo: ttl must be in range [0, 3600]: 3601'],
    ['demo', (r: OptionReader) => r.ttl(0), 'Corefile:2: demo: missing ttl'],
    // durations
    ['demo 5', (r: OptionReader) => r.duration(0, 'interval'), 'Corefile:2: demo: interval "5" is not a duration; write e.g. 500ms, 5s or 1m'],
    ['demo 5x', (r: OptionReader) => r.duration(0, '', { examples: '30s' }), 'Corefile:2: demo: "5x" is not a duration; write e.g. 30s'],
    ['demo -1s', (r: OptionReader) => r.duration(0, 'interval'), 'Corefile:2: demo: interval "-1s" must not be negative'],
    ['demo 1s', (r: OptionReader) => r.duration(0, 'interval', { min: 2000 }), 'Corefile:2: demo: interval "1s" must be at least 2s'],
    ['demo 500ms', (r: OptionReader) => r.duration(0, 'jitter', { min: 1000, zero: true }), 'Corefile:2: demo: jitter "500ms" must be 0 or at least 1s'],
    ['demo 6m', (r: OptionReader) => r.duration(0, 'ttl', { max: 300_000 }), 'Corefile:2: demo: ttl "6m" must be at most 5m0s'],
    // choices and zones
    [
      'demo verfy',
      (r: OptionReader) => r.choice(0, 'mode', ['immediate', 'verify']),
      'Corefile:2: demo: mode "verfy" is not one of immediate or verify (did you mean verify?)',
    ],
    ['demo a..b', (r: OptionReader) => r.zones(0, []), /^Corefile:2: demo: bad zone "a\.\.b": /],
    // values echoed are cut and escaped
    [`demo ${LONG}`, (r: OptionReader) => r.int(0, 'COUNT'), `Corefile:2: demo: COUNT "${'x'.repeat(40)}..." is not an integer`],
    ['demo "a\\u0001b"', (r: OptionReader) => r.duration(0, 'interval'), /interval "a.*b" is not a duration/],
  ] as const)('%j', (body, read, want) => {
    const got = errors(body, read);
    expect(got).toHaveLength(1);
    if (typeof want === 'string') expect(got[0]).toBe(want);
    else expect(got[0]).toMatch(want);
  });

  it('block: an unknown option names the plugin, the valid options and the nearest one; every bad line is reported', () => {
    const got = errors('demo {\n  prefech 1\n  size x\n  bogus\n  tls\n}', (r) =>
      r.block({ prefetch: () => undefined, size: (o) => o.int(0, 'SIZE') }, { unsupported: { tls: 'the endpoint serves plain HTTP' } }),
    );
    expect(got).toEqual([
      'Corefile:3: unknown demo option "prefech" (did you mean prefetch?); valid options: prefetch, size',
      'Corefile:4: demo size: SIZE "x" is not an integer',
      'Corefile:5: unknown demo option "bogus"; valid options: prefetch, size',
      'Corefile:6: demo tls is not supported: the endpoint serves plain HTTP',
    ]);
  });

  it('block: with one option, the message says so', () => {
    expect(errors('demo {\n  monitro x\n}', (r) => r.block({ monitor: () => undefined }))).toEqual([
      'Corefile:3: unknown demo option "monitro"; the only option is monitor',
    ]);
  });
});
