import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Bitset } from '../../workers/shard/bm25/bitset.js';

describe('Bitset', () => {
  it('behaves like a Set of ids under set/and/or/andNot/not', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 200 }), fc.array(fc.nat(199)), fc.array(fc.nat(199)), (cap, xs, ys) => {
        const a = xs.filter((x) => x < cap);
        const b = ys.filter((y) => y < cap);
        const A = new Set(a);
        const B = new Set(b);
        const all = Array.from({ length: cap }, (_, i) => i);
        const sorted = (s: Iterable<number>) => [...s].sort((x, y) => x - y);
        expect([...Bitset.of(cap, a)]).toEqual(sorted(A));
        expect(Bitset.of(cap, a).count()).toBe(A.size);
        expect([...Bitset.of(cap, a).and(Bitset.of(cap, b))]).toEqual(sorted(A).filter((x) => B.has(x)));
        expect([...Bitset.of(cap, a).or(Bitset.of(cap, b))]).toEqual(sorted(new Set([...a, ...b])));
        expect([...Bitset.of(cap, a).andNot(Bitset.of(cap, b))]).toEqual(sorted(A).filter((x) => !B.has(x)));
        const not = Bitset.of(cap, a).not();
        expect([...not]).toEqual(all.filter((x) => !A.has(x)));
        expect(not.count()).toBe(cap - A.size);
        for (let i = -1; i <= cap + 1; i++) expect(Bitset.of(cap, a).has(i)).toBe(A.has(i));
      }),
      { seed: 7, numRuns: 300 },
    );
  });

  it('full() has every id below capacity and none past it', () => {
    const f = Bitset.full(70);
    expect(f.count()).toBe(70);
    expect(f.has(69)).toBe(true);
    expect(f.has(70)).toBe(false);
    const ids: number[] = [];
    f.forEach((id) => ids.push(id));
    expect(ids).toHaveLength(70);
  });

  it('rejects ids outside the capacity on set', () => {
    expect(() => new Bitset(10).set(10)).toThrow(RangeError);
    expect(() => new Bitset(10).set(-1)).toThrow(RangeError);
  });

  it('and() with a smaller bitset drops ids past its capacity', () => {
    const a = Bitset.full(100).and(Bitset.full(40));
    expect(a.count()).toBe(40);
  });
});
