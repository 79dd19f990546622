/**
 * The size measures behind every body and field limit (`core/domain/limits.ts`), checked against
 * what they stand for: the UTF-8 length TextEncoder gives, and the byte length and depth of the
 * text JSON.stringify writes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { measureJson, utf8Length } from '../../core/domain/limits.js';

/** Nesting depth of a JSON value the way measureJson counts it (a scalar is 0). */
function depthOf(v: unknown): number {
  if (v === null || typeof v !== 'object') return 0;
  const kids = Array.isArray(v) ? v : Object.values(v);
  return 1 + kids.reduce((m: number, k) => Math.max(m, depthOf(k)), 0);
}

describe('utf8Length', () => {
  it('is the UTF-8 length TextEncoder gives, lone surrogates included', () => {
    const encoder = new TextEncoder();
    fc.assert(
      fc.property(fc.string({ unit: fc.oneof(fc.constant('\ud800'), fc.constant('\udc00'), fc.constantFrom('a', 'é', '€', '😀'), fc.string({ unit: 'binary', maxLength: 1 })) }), (s) => {
        expect(utf8Length(s)).toBe(encoder.encode(s).length);
      }),
      { numRuns: 500 },
    );
  });

  it('answers above the bound for a string over it', () => {
    expect(utf8Length('x'.repeat(11), 10)).toBeGreaterThan(10);
    expect(utf8Length('é'.repeat(6), 10)).toBeGreaterThan(10);
    expect(utf8Length('é'.repeat(5), 10)).toBe(10);
  });
});

describe('measureJson', () => {
  it('is the byte length and depth of the JSON text, never below it, exact without escapes', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = JSON.stringify(v);
        const actual = Buffer.byteLength(text, 'utf8');
        const m = measureJson(v, Infinity, Infinity);
        expect(m.over).toBe(false);
        expect(m.depth).toBe(depthOf(v));
        if (text.includes('\\')) expect(m.bytes).toBeGreaterThanOrEqual(actual);
        else expect(m.bytes).toBe(actual);
      }),
      { numRuns: 1000 },
    );
  });

  it('counts each escaped unit at its longest', () => {
    expect(measureJson('a"b\\c\n', Infinity, Infinity).bytes).toBe(2 + 6 + 3 * 5);
  });

  it('stops once past either bound', () => {
    expect(measureJson({ a: 'x'.repeat(100) }, 50, 10).over).toBe(true);
    expect(measureJson([[[[]]]], 1000, 3)).toMatchObject({ over: true, depth: 4 });
    expect(measureJson([[[[]]]], 1000, 4)).toMatchObject({ over: false, depth: 4 });
  });
});
