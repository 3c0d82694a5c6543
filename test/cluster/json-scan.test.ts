// scanJson finds duplicate keys by comparing small objects' keys in place and materialising a Map
// only for large objects or escaped keys; it must find what a Map of every object's keys finds
// (keys, offsets, order) and the same List items, on valid JSON and on text that is not JSON.
import { describe, expect, it } from 'vitest';
import { prng } from '../helpers/prng.js';
import { type JsonScan, scanJson } from '../../src/cluster/read/json-scan.js';

/** The plain reading: a Map of keys per object, every key decoded. */
function reference(text: string): JsonScan {
  const out: JsonScan = { itemStarts: [], itemEnds: [], duplicates: [] };
  const stack: { obj: boolean; keys: Map<string, number>; expectKey: boolean; items: boolean; pendingKey?: string }[] = [];
  let scalarStart = -1;
  const top = () => stack[stack.length - 1];
  const endScalar = (at: number): void => {
    if (scalarStart >= 0 && top()?.items) out.itemEnds.push(at);
    scalarStart = -1;
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === ' ' || ch === '\n' || ch === '\r' || ch === '\t') {
      endScalar(i);
      continue;
    }
    const frame = top();
    if (ch === '"') {
      let end = i + 1;
      for (;;) {
        const q = text.indexOf('"', end);
        if (q < 0) {
          end = text.length;
          break;
        }
        let b = 0;
        for (let j = q - 1; j > i && text[j] === '\\'; j--) b++;
        end = q + 1;
        if (b % 2 === 0) break;
      }
      if (frame?.obj && frame.expectKey) {
        const raw = text.slice(i + 1, end - 1);
        const key = raw.includes('\\') ? (JSON.parse(text.slice(i, end)) as string) : raw;
        const first = frame.keys.get(key);
        if (first !== undefined) out.duplicates.push({ key, at: i, first });
        else frame.keys.set(key, i);
        frame.pendingKey = key;
        frame.expectKey = false;
      } else if (frame?.items) {
        out.itemStarts.push(i);
        out.itemEnds.push(end);
      }
      i = end - 1;
    } else if (ch === '{' || ch === '[') {
      if (frame?.items) out.itemStarts.push(i);
      const items = ch === '[' && stack.length === 1 && frame?.obj === true && frame.pendingKey === 'items';
      stack.push({ obj: ch === '{', keys: new Map(), expectKey: ch === '{', items });
    } else if (ch === '}' || ch === ']') {
      endScalar(i);
      stack.pop();
      if (top()?.items) out.itemEnds.push(i + 1);
    } else if (ch === ',') {
      endScalar(i);
      if (frame?.obj) frame.expectKey = true;
    } else if (ch !== ':' && scalarStart < 0) {
      scalarStart = i;
      if (frame?.items) out.itemStarts.push(i);
    }
  }
  return out;
}

function same(text: string): void {
  let want: JsonScan | string;
  try {
    want = reference(text);
  } catch (e) {
    want = `throws ${(e as Error).name}`;
  }
  let got: JsonScan | string;
  try {
    got = scanJson(text);
  } catch (e) {
    got = `throws ${(e as Error).name}`;
  }
  expect(got, text).toEqual(want);
}

describe('scanJson', () => {
  it('finds duplicates in small and large objects, escaped or not, as a Map of every key does', () => {
    same('{"a":1,"b":2,"a":3,"a":4}');
    same('{"a":1,"\\u0061":2,"b":{"a":1,"a":2},"b":3}');
    same('{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k1":9,"k8":10,"k\\u0038":11}');
    same('{"ab":1,"ba":2,"a":3,"abc":4,"ab":5}');
    same('{"apiVersion":"v1","kind":"List","items":[{"a":1,"a":2},"s",3,null,[1,{"x":1,"x":2}],{}],"items":[]}');
    same('{"\\u0069tems":[{"a":1},2]}');
  });

  it('agrees on seeded random JSON and on text that is not JSON', () => {
    const rnd = prng(4242);
    const pick = <T>(a: readonly T[]): T => a[Math.floor(rnd() * a.length)]!;
    const keys = ['a', 'b', 'ab', 'ba', 'items', 'k', '\\u0061', '\\"', 'a\\\\', 'x y', ''];
    const value = (depth: number): string => {
      const r = rnd();
      if (depth < 4 && r < 0.3) {
        const n = Math.floor(rnd() * (rnd() < 0.2 ? 14 : 5));
        return `{${Array.from({ length: n }, () => `"${pick(keys)}"${pick(['', ' '])}:${value(depth + 1)}`).join(pick([',', ', ', ',\n  ']))}}`;
      }
      if (depth < 4 && r < 0.5) return `[${Array.from({ length: Math.floor(rnd() * 4) }, () => value(depth + 1)).join(',')}]`;
      return pick(['1', '-2.5e3', 'true', 'null', '"s"', '"a\\"b"', '"\\\\"', '""']);
    };
    for (let t = 0; t < 3000; t++) {
      let text = `{"kind":"List","items":[${Array.from({ length: Math.floor(rnd() * 4) }, () => value(1)).join(',\n')}]${rnd() < 0.3 ? ',"a":1,"a":2' : ''}}`;
      if (t % 3 === 0) {
        // Not JSON: characters dropped, doubled or replaced (unbalanced brackets, open strings).
        for (let k = 1 + Math.floor(rnd() * 3); k > 0; k--) {
          const at = Math.floor(rnd() * text.length);
          const r = rnd();
          text =
            r < 0.4
              ? text.slice(0, at) + text.slice(at + 1)
              : r < 0.7
                ? text.slice(0, at) + text[at] + text.slice(at)
                : text.slice(0, at) + pick(['}', ']', '"', '\v', '\\', ',']) + text.slice(at + 1);
        }
      }
      same(text);
    }
  });
});
