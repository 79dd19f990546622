/**
 * The per-user rollups' set encoding (store/user-set.ts) against plain arrays and Sets: every set,
 * sparse or dense, decodes to its members, is stored in the smaller encoding, and unions count
 * exactly, however the sets overlap and whatever their largest member.
 */
import { describe, expect, it } from 'vitest';
import { addToDense, decodeUserSet, encodeUserSet, unionSorted, UserBits } from '../../store/user-set.js';
import { rng } from '../helpers/random-corpus.js';

/** `n` distinct members below `universe`, ascending. */
function randomSet(r: () => number, n: number, universe: number): number[] {
  const s = new Set<number>();
  while (s.size < Math.min(n, universe)) s.add(Math.floor(r() * universe));
  return [...s].sort((a, b) => a - b);
}

describe('user sets', () => {
  it('decode to their members in the smaller encoding, for empty, sparse, dense and huge members', () => {
    const r = rng(5);
    const cases = [[], [0], [7], [8], [127], [128], [2 ** 31 - 1], [0, 1, 2, 3, 4, 5, 6, 7], [3, 2 ** 28, 2 ** 31 - 1]];
    for (let i = 0; i < 200; i++) cases.push(randomSet(r, Math.floor(r() * 3000), [100, 5000, 1_000_000][i % 3]!));
    let dense = 0;
    for (const members of cases) {
      const encoded = encodeUserSet(members);
      expect(decodeUserSet(encoded)).toEqual(members);
      if (encoded[0] === 1) dense++;
      // Never larger than the other encoding would be.
      const bitset = 1 + (members.length === 0 ? 0 : Math.floor(members.at(-1)! / 8) + 1);
      expect(encoded.length).toBeLessThanOrEqual(bitset);
    }
    expect(dense).toBeGreaterThan(20);
    expect(dense).toBeLessThan(cases.length - 20);
  });

  it('union and count exactly', () => {
    const r = rng(6);
    for (let round = 0; round < 50; round++) {
      const sets = Array.from({ length: 1 + Math.floor(r() * 8) }, () => randomSet(r, Math.floor(r() * 2000), r() < 0.5 ? 3000 : 200_000));
      const bits = new UserBits();
      for (const s of sets) bits.addEncoded(encodeUserSet(s));
      const extra = randomSet(r, 50, 300_000);
      for (const m of extra) bits.add(m);
      const all = new Set([...sets.flat(), ...extra]);
      expect(bits.count()).toBe(all.size);
      expect(() => encodeUserSet([2 ** 31])).toThrow(RangeError);
      // Added in place to a dense set: the union, and how many were new; refused past its bitset or for a sparse set.
      const dense = encodeUserSet(randomSet(r, 500, 1000));
      expect(dense[0]).toBe(1);
      const more = Array.from({ length: 50 }, () => Math.floor(r() * 1000));
      const before = decodeUserSet(dense);
      const merged = addToDense(dense, more)!;
      const union = [...new Set([...before, ...more])].sort((a, b) => a - b);
      expect(decodeUserSet(merged.encoded)).toEqual(union);
      expect(merged.added).toBe(union.length - before.length);
      expect(decodeUserSet(dense)).toEqual(before);
      expect(addToDense(dense, [(dense.length - 1) * 8])).toBeUndefined();
      expect(addToDense(encodeUserSet([5, 900_000]), [5])).toBeUndefined();
      expect(sets.reduce<number[]>((u, s) => unionSorted(u, s), [])).toEqual([...new Set(sets.flat())].sort((a, b) => a - b));
    }
  });
});
