import { describe, expect, it } from 'vitest';
import { goDurationString, parseGoDuration } from '../../src/pkg/duration.js';
import { setupBlock, setupPlugin } from '../helpers/setup.js';

// Expected values are what Go's time.ParseDuration returns, in milliseconds.
const accepted: Array<[string, number]> = [
  ['0', 0],
  ['-0', 0],
  ['+0', 0],
  ['5s', 5000],
  ['30s', 30000],
  ['1478s', 1478000],
  ['-5s', -5000],
  ['+5s', 5000],
  ['+2s', 2000],
  ['5.0s', 5000],
  ['5.6s', 5600],
  ['5.s', 5000],
  ['.5s', 500],
  ['1.0s', 1000],
  ['1.00s', 1000],
  ['1.004s', 1004],
  ['100.00100s', 100001],
  ['10ns', 1e-5],
  ['11us', 0.011],
  ['12µs', 0.012],
  ['12μs', 0.012],
  ['1µs', 0.001],
  ['13ms', 13],
  ['14s', 14000],
  ['15m', 900000],
  ['16h', 57600000],
  ['3h30m', 12600000],
  ['10.5s4m', 250500],
  ['-2m3.4s', -123400],
  ['1h2m3s4ms5us6ns', 3723004.005006],
  ['39h9m14.425s', 140_954_425],
  ['0s', 0],
  ['0.100000000000000000000h', 360000],
];

const rejected = ['', '3', '-', 's', '.', '-.', '.s', '+.s', '1d', '1sm', '1.5.5s', '5 s', ' 5s', '1e3s', '--5s', '9300000000000000000ns', '3000000h'];

describe('parseGoDuration (Go time.ParseDuration)', () => {
  it.each(accepted)('%s', (text, ms) => {
    expect(parseGoDuration(text)).toBeCloseTo(ms, 9);
  });
  it.each(rejected)('rejects %j', (text) => {
    expect(parseGoDuration(text)).toBeUndefined();
  });
});

describe('goDurationString (Go Duration.String)', () => {
  const cases: Array<[number, string]> = [
    [0, '0s'],
    [0.000001, '1ns'],
    [0.0011, '1.1µs'],
    [2.2, '2.2ms'],
    [500, '500ms'],
    [1000, '1s'],
    [1500, '1.5s'],
    [90_000, '1m30s'],
    [300_000, '5m0s'],
    [3_600_000, '1h0m0s'],
    [4_980_000, '1h23m0s'],
    [-1500, '-1.5s'],
  ];
  it.each(cases)('%d ms', (ms, text) => {
    expect(goDurationString(ms)).toBe(text);
  });
});

// health lameduck and errors consolidate used a second parser that refused these.
describe('every plugin reads durations with the one parser', () => {
  it.each([
    ['.5s', 500],
    ['+2s', 2000],
    ['1500µs', 1.5],
  ])('health lameduck %s', async (text, ms) => {
    const p = await setupPlugin<{ lameduckMs: number }>(`health :1234 {\n  lameduck ${text}\n}`, 'health');
    expect(p.lameduckMs).toBeCloseTo(ms, 9);
  });
  it('errors consolidate .5s', async () => {
    expect((await setupBlock('errors {\n  consolidate .5s ^x$\n}')).errors).toEqual([]);
  });
});
