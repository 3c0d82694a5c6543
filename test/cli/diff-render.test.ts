// The parts of `clusterdns diff` output that the edit table cannot reach with admissible manifests:
// when colour is used, and Markdown cells holding what Markdown or HTML would read as markup.
import { describe, expect, it } from 'vitest';
import { useColor } from '../../src/cli/diff.js';
import { mdCell, mdCode } from '../../src/cli/diff-render.js';

describe('diff output: colour', () => {
  const tty = { isTTY: true } as unknown as NodeJS.WritableStream;
  const pipe = {} as NodeJS.WritableStream;

  it('auto: on a terminal unless NO_COLOR is set to something; never on a pipe', () => {
    expect(useColor('auto', tty, {})).toBe(true);
    expect(useColor('auto', tty, { NO_COLOR: '1' })).toBe(false);
    // no-color.org: an empty NO_COLOR does not count.
    expect(useColor('auto', tty, { NO_COLOR: '' })).toBe(true);
    expect(useColor('auto', pipe, {})).toBe(false);
  });

  it('always and never override both', () => {
    expect(useColor('always', pipe, { NO_COLOR: '1' })).toBe(true);
    expect(useColor('never', tty, {})).toBe(false);
  });
});

describe('diff output: Markdown cells', () => {
  it('escape table pipes, HTML and inline markup, and keep to one line', () => {
    expect(mdCell('a|b')).toBe('a\\|b');
    expect(mdCell('<script>alert(1)</script>')).toBe('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(mdCell('"><img src=x onerror=alert(1)>')).toBe('"&gt;&lt;img src=x onerror=alert(1)&gt;');
    expect(mdCell('*b* _i_ [l](u) ~s~ `c` \\')).toBe('\\*b\\* \\_i\\_ \\[l\\](u) \\~s\\~ \\`c\\` \\\\');
    expect(mdCell('one\ntwo\r\n\tthree\x1b[31m')).toBe('one two three \\[31m');
  });

  it('code spans hold values as written, pipes escaped; a value with a backtick falls back to escaped text', () => {
    expect(mdCode('_http._tcp.api.shop.svc.cluster.local.')).toBe('`_http._tcp.api.shop.svc.cluster.local.`');
    expect(mdCode('"v=1|x"')).toBe('`"v=1\\|x"`');
    expect(mdCode('<b>')).toBe('`<b>`');
    expect(mdCode('a`b|c')).toBe('a\\`b\\|c');
    expect(mdCode('x\ny')).toBe('`x y`');
  });
});
