/**
 * KeyedPostings against a plain model (a Set of ids per key, an array of keys per document) under
 * random sets, replacements and clears: every key's members (through has, forEach, size and
 * orInto), every document's keys in order, and the distinct keys agree after each step. The runs
 * take keys through each layout (one id, a list, a bitset and back), reuse ids, and compact the
 * arena of key lists.
 */
import { describe, expect, it } from 'vitest';
import { Bitset } from '../../workers/shard/bm25/bitset.js';
import { KeyedPostings } from '../../workers/shard/filter/keyed-postings.js';
import { rng } from '../helpers/random-corpus.js';

/** The model: what a document holds and who holds a key. */
class Model {
  readonly docs = new Map<number, string[]>();
  readonly members = new Map<string, Set<number>>();
  set(id: number, keys: string[]): void {
    this.docs.set(id, [...keys]);
    for (const k of keys) {
      let s = this.members.get(k);
      if (!s) this.members.set(k, (s = new Set()));
      s.add(id);
    }
  }
  clear(id: number): void {
    for (const k of new Set(this.docs.get(id))) {
      const s = this.members.get(k)!;
      s.delete(id);
      if (s.size === 0) this.members.delete(k);
    }
    this.docs.delete(id);
  }
}

/** Whether two id lists are equal, element by element. */
const sameIds = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * Asserts that `p` holds exactly what `m` does, over ids below `maxId`. The comparisons are plain
 * code and the disagreements one assertion at the end: an expect() per key and id was ~15 s of a
 * run over 55,000 keys.
 */
function agree(p: KeyedPostings, m: Model, maxId: number, r: () => number): void {
  expect(new Set(p.keys())).toEqual(new Set(m.members.keys()));
  expect(p.keyCount).toBe(m.members.size);
  const wrong: string[] = [];
  for (const [key, want] of m.members) {
    const sorted = [...want].sort((a, b) => a - b);
    const got: number[] = [];
    p.forEach(key, (id) => got.push(id));
    if (!sameIds(got, sorted)) wrong.push(`forEach(${key}): ${got.join(',')} instead of ${sorted.join(',')}`);
    // orInto at a capacity that cuts some members off (ids at or past it are never members of a bitset).
    const capacity = Math.floor(r() * (maxId + 40));
    const out = new Bitset(capacity);
    p.orInto(key, out);
    const members: number[] = [];
    out.forEach((id) => members.push(id));
    const below = sorted.filter((id) => id < capacity);
    if (!sameIds(members, below)) wrong.push(`orInto(${key}) below ${capacity}: ${members.join(',')} instead of ${below.join(',')}`);
    for (let i = 0; i < 20; i++) {
      const id = Math.floor(r() * (maxId + 10));
      if (p.has(key, id) !== want.has(id)) wrong.push(`has(${key}, ${id}) is ${p.has(key, id)}`);
    }
    if (wrong.length > 20) break;
  }
  const none: number[] = [];
  p.forEach('never-a-key', (id) => none.push(id));
  expect(none).toEqual([]);
  expect(p.has('never-a-key', 0)).toBe(false);
  for (let id = 0; id < maxId + 10 && wrong.length <= 20; id++) {
    const want = m.docs.get(id) ?? [];
    const keys = p.keysOf(id);
    if (keys.length !== want.length || keys.some((k, i) => k !== want[i])) wrong.push(`keysOf(${id}): ${JSON.stringify(keys)} instead of ${JSON.stringify(want)}`);
    if (p.firstKey(id) !== (want[0] ?? null)) wrong.push(`firstKey(${id}): ${p.firstKey(id)} instead of ${want[0] ?? null}`);
  }
  expect(wrong.slice(0, 20)).toEqual([]);
}

describe('KeyedPostings', () => {
  it.each([
    // Few keys over many documents: bitsets.
    { seed: 1, docs: 3000, keys: 6, maxKeys: 3, steps: 6000 },
    // Many keys of a few documents each: single ids and short lists.
    { seed: 2, docs: 400, keys: 500, maxKeys: 4, steps: 3000 },
    // Skewed: one key on most documents, a long tail, repeated values in a document.
    { seed: 3, docs: 2000, keys: 60, maxKeys: 5, steps: 8000 },
  ])('agrees with a plain model (seed $seed: $docs ids, $keys keys)', ({ seed, docs, keys, maxKeys, steps }) => {
    const r = rng(seed);
    const p = new KeyedPostings();
    const m = new Model();
    const pickKey = (): string => (seed === 3 && r() < 0.5 ? 'common' : `k${Math.floor(r() ** 2 * keys)}`);
    for (let step = 0; step < steps; step++) {
      // Ids below a bound that rises then falls, so keys grow into bitsets and shrink back to lists.
      const phase = step / steps;
      const bound = Math.max(1, Math.floor(docs * (phase < 0.6 ? phase / 0.6 : 1.6 - phase)));
      const id = Math.floor(r() * bound);
      const roll = r();
      p.clear(id);
      m.clear(id);
      if (roll < 0.7 || phase < 0.6) {
        const n = Math.floor(r() * (maxKeys + 1));
        const ks = Array.from({ length: n }, pickKey);
        p.set(id, ks);
        m.set(id, ks);
      }
      if (step % Math.floor(steps / 6) === 0) agree(p, m, docs, r);
    }
    // Clear the upper half: keys shrink from bitsets back to lists and single ids.
    for (let id = docs >> 1; id < docs; id++) {
      p.clear(id);
      m.clear(id);
    }
    agree(p, m, docs, r);
    // Then the rest in a random order: near the end each key's few members are back in a list or one id.
    const rest = Array.from({ length: docs }, (_, id) => id).sort(() => r() - 0.5);
    rest.forEach((id, i) => {
      p.clear(id);
      m.clear(id);
      if (i === Math.floor(docs * 0.9) || i === Math.floor(docs * 0.97)) agree(p, m, docs, r);
    });
    agree(p, m, docs, r);
    expect(p.keyCount).toBe(0);
  });

  it('keeps key lists whose ids do not pack into the entry (two past 2^15, three past 2^10) in the arena', () => {
    const p = new KeyedPostings();
    const m = new Model();
    // Unique keys: 400 documents of three take key ids up to 1,200 (past 2^10: the last packed ones
    // border on it), 20,000 of two up to 41,200 (past 2^15), then documents of three again.
    const keysOf = (id: number): string[] => (id >= 400 && id < 20_400 ? [`a${id}`, `b${id}`] : [`a${id}`, `b${id}`, `c${id}`]);
    for (let id = 0; id < 22_000; id++) {
      p.set(id, keysOf(id));
      m.set(id, keysOf(id));
    }
    for (let id = 0; id < 22_000; id += 7) {
      expect(p.keysOf(id)).toEqual(keysOf(id));
      expect(p.firstKey(id)).toBe(`a${id}`);
      for (const k of keysOf(id)) {
        const holders: number[] = [];
        p.forEach(k, (h) => holders.push(h));
        expect(holders).toEqual([id]);
      }
    }
    // Free every other document's keys, reuse the ids with other keys: freed key ids are taken again.
    for (let id = 0; id < 22_000; id += 2) {
      p.clear(id);
      m.clear(id);
      p.set(id, [`z${id}`, 'shared']);
      m.set(id, [`z${id}`, 'shared']);
    }
    agree(p, m, 22_000, rng(4));
  });

  it('frees a key whose bitset empties (ids so low that it never turns back into a list)', () => {
    const p = new KeyedPostings();
    const m = new Model();
    for (let id = 0; id < 100; id++) {
      p.set(id, ['k']);
      m.set(id, ['k']);
    }
    agree(p, m, 100, rng(5));
    for (let id = 99; id >= 0; id--) p.clear(id);
    expect(p.keyCount).toBe(0);
    expect([...p.keys()]).toEqual([]);
    // Its key id is free again, and the next key starts from nothing.
    p.set(3, ['other']);
    expect(p.keysOf(3)).toEqual(['other']);
    expect(p.has('k', 3)).toBe(false);
  });

  it('compacts its arena of key lists: rewriting the same documents does not grow it', () => {
    const p = new KeyedPostings();
    const rewrite = (round: number): void => {
      for (let id = 0; id < 5000; id++) {
        p.clear(id);
        p.set(id, [`a${(id + round) % 7}`, `b${id % 3}`, 'c', 'd']);
      }
    };
    // Four keys a document: too many to pack into its entry.
    rewrite(0);
    const first = p.bytes();
    for (let round = 1; round < 20; round++) rewrite(round);
    expect(p.bytes()).toBeLessThan(first * 2);
    for (let id = 0; id < 5000; id++) expect(p.keysOf(id)).toEqual([`a${(id + 19) % 7}`, `b${id % 3}`, 'c', 'd']);
  });

  it('holds a million documents of 1-3 of 20 tags in under 12 bytes each', () => {
    const p = new KeyedPostings();
    const r = rng(7);
    for (let id = 0; id < 1_000_000; id++) {
      const n = 1 + Math.floor(r() * 3);
      p.set(id, Array.from({ length: n }, () => `tag-${Math.floor(r() * 20)}`));
    }
    expect(p.bytes() / 1_000_000).toBeLessThan(12);
    let holders = 0;
    p.forEach('tag-3', () => holders++);
    expect(holders).toBeGreaterThan(90_000);
  });
});
