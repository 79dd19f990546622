/**
 * facade/present/json-bytes.ts against its oracle, `Buffer.from(JSON.stringify(value))`: the same
 * bytes for any value fast-check can build (escapes, surrogates, -0, NaN, holes, undefined, null
 * prototypes, Dates, Maps, typed arrays, boxed values, getters), the same error for what
 * JSON.stringify refuses (bigint, cycles).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonBytes, jsonFragment } from '../../facade/present/json-bytes.js';

/** The oracle's bytes, or the class of the error it throws. */
function reference(v: object): Buffer | string {
  try {
    return Buffer.from(JSON.stringify(v), 'utf8');
  } catch (err) {
    return (err as Error).constructor.name;
  }
}

function ours(v: object): Buffer | string {
  try {
    return jsonBytes(v);
  } catch (err) {
    return (err as Error).constructor.name;
  }
}

const same = (v: object): void => {
  const a = ours(v);
  const b = reference(v);
  if (typeof a === 'string' || typeof b === 'string') expect(a).toEqual(b);
  else expect(a.toString('hex')).toBe(b.toString('hex'));
};

describe('jsonBytes', () => {
  it('writes what JSON.stringify writes, for any value', () => {
    const anything = fc.anything({
      withBigInt: true,
      withBoxedValues: true,
      withDate: true,
      withMap: true,
      withSet: true,
      withNullPrototype: true,
      withObjectString: true,
      withSparseArray: true,
      withTypedArray: true,
      withUnicodeString: true,
    });
    fc.assert(fc.property(fc.oneof(fc.array(anything), fc.dictionary(fc.string({ unit: 'binary' }), anything)), same), { numRuns: 3000 });
  });

  it('writes strings of every kind: escapes, lone and paired surrogates, long two-byte text', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 3000 }), { maxLength: 20 }), (strings) => same({ strings, [strings[0] ?? 'k']: strings })),
      { numRuns: 500 },
    );
    for (const lone of ['\ud800', '\udfff', 'x\udc00', 'é\ud83d', '\ud83d\ude00\ude00', 'a'.repeat(60) + '\ud800']) same({ lone, [lone]: 1 });
    same({ s: 'a\u0000b\u001f"\\\ud800\udc00\udc00x\ud83d\ude00 é ß 𝄞 \u2028', n: [-0, 0.1, 1e21, 1e-7, NaN, Infinity, -Infinity], u: [undefined, () => 1], o: { u: undefined, f: () => 1 } });
  });

  it('answers a search page the same, and leaves toJSON, getters and class instances to JSON.stringify', () => {
    const page = { score_chunks: Array.from({ length: 10 }, (_, i) => ({ metadata: [{ id: `id-${i}`, chunk_html: `Abstract ${i}: β-catenin and “quoted” <mark><b>cells</b></mark>`, tag_set: ['a', 'b'], metadata: { nested: [1, { x: null }] }, location: null }], highlights: ['x'], score: i / 3 })), corrected_query: null, total_chunk_pages: 0 };
    same(page);
    same({ when: new Date(0), custom: { toJSON: () => 'custom' }, get lazy() { return [1, 2]; } });
    class Point { constructor(readonly x: number) {} }
    same({ p: new Point(1), arr: Object.assign([1, 2], { toJSON: () => 'arr' }) });
  });

  it('throws what JSON.stringify throws: bigint, cycles', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => jsonBytes(cyclic)).toThrow(TypeError);
    expect(() => jsonBytes({ n: 1n })).toThrow(TypeError);
    // And the next call is whole again.
    same({ after: 'the failure' });
  });

  it('writes answers larger than its scratch buffer, and small ones after them', () => {
    same({ big: 'é'.repeat(3_000_000), arr: Array.from({ length: 1000 }, (_, i) => 'x'.repeat(i)) });
    same({ small: true });
  });

  it('writes a fragment as the value it was made from, wherever it sits, and so does JSON.stringify', () => {
    fc.assert(
      fc.property(fc.array(fc.dictionary(fc.string({ unit: 'binary' }), fc.jsonValue())), fc.jsonValue(), (parts, tail) => {
        const plain = { parts, tail, nested: [{ parts }] };
        const withFragments = { parts: parts.map(jsonFragment), tail, nested: [{ parts: parts.map(jsonFragment) }] };
        const expected = reference(plain) as Buffer;
        expect(jsonBytes(withFragments).toString('hex')).toBe(expected.toString('hex'));
        // JSON.stringify (the writer's fallback for unusual values) reads the fragment's text back.
        expect(Buffer.from(JSON.stringify(withFragments), 'utf8').toString('hex')).toBe(expected.toString('hex'));
        expect(jsonBytes({ ...withFragments, when: new Date(0) }).toString('hex')).toBe((reference({ ...plain, when: new Date(0) }) as Buffer).toString('hex'));
      }),
      { numRuns: 500 },
    );
  });
});
