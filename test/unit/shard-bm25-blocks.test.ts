import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Bitset } from '../../workers/shard/bm25/bitset.js';
import { Bm25Index } from '../../workers/shard/bm25/bm25-index.js';
import { bruteForceTf as bruteForce, close } from '../helpers/bm25-tf-oracle.js';

// Block-max MaxScore edge cases the small oracle test cannot reach: lists spanning many 128-posting
// blocks, several doc-id windows, tombstones and filters inside blocks, recycled (out-of-order)
// ids, and floods of exact ties (tiny vocabulary, short docs) across block and window boundaries.
const VOCAB = ['apple', 'river', 'stone', 'cloud', 'tiger', 'lamp', 'ocean', 'seed'];
const K1 = 0.9;
const B = 0.4;

/** Small deterministic PRNG so each property run builds its corpus quickly. */
function prng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
}

describe('Bm25Index block-max pruning against brute force', () => {
  it('matches the oracle on multi-block, multi-window corpora with deletes, recycled ids and filters', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.integer({ min: 300, max: 9000 }),
        fc.integer({ min: 1, max: 6 }),
        fc.double({ min: 0, max: 0.5, noNaN: true }),
        (seed, docs, maxWords, deleteRate) => {
          const rand = prng(seed);
          // compactMinDead high: tombstones stay inside blocks; a second pass re-adds some ids.
          const index = new Bm25Index({ k1: K1, b: B, compactMinDead: 1 << 30 });
          const live = new Map<string, Map<string, number>>();
          const lens = new Map<string, number>();
          const add = (id: string) => {
            const n = 1 + Math.floor(rand() * maxWords);
            // Skewed word choice: early words are dense (many blocks), late ones sparse.
            const words = Array.from({ length: n }, () => VOCAB[Math.floor(rand() ** 2 * VOCAB.length)]!);
            index.upsert(id, words.join(' '));
            const tf = new Map<string, number>();
            for (const t of index.analyzer.analyze(words.join(' '))) tf.set(t, (tf.get(t) ?? 0) + 1);
            live.set(id, tf);
            lens.set(id, n);
          };
          for (let i = 0; i < docs; i++) add(`d${i.toString().padStart(5, '0')}`);
          for (let i = 0; i < docs; i++) {
            if (rand() < deleteRate) {
              const id = `d${i.toString().padStart(5, '0')}`;
              index.remove(id);
              live.delete(id);
            }
          }
          if (rand() < 0.5) index.compact(); // frees ids so the re-adds below land out of order
          for (let i = 0; i < docs / 10; i++) add(`r${i}`);
          const st = index.stats();
          expect(st.docCount).toBe(live.size);
          for (let qn = 0; qn < 6; qn++) {
            const qlen = 1 + Math.floor(rand() * 4);
            const words = Array.from({ length: qlen }, () => VOCAB[Math.floor(rand() * VOCAB.length)]!);
            const terms = index.analyzer.analyze(words.join(' '));
            const k = [1, 3, 10, 37, 200][Math.floor(rand() * 5)]!;
            let allow: Bitset | null = null;
            let allowed: Set<string> | null = null;
            if (qn % 2 === 1) {
              const keep = rand();
              allowed = new Set([...live.keys()].filter(() => rand() < keep));
              allow = Bitset.of(index.capacity, [...allowed].map((c) => index.internalId(c)!));
            }
            const got = index.search(terms, k, { ...st, docFreqs: index.termDocFreqs(terms) }, allow);
            const all = bruteForce(live, lens, terms, allowed);
            const oracle = new Map(all.map((x) => [x.id, x.score]));
            const want = all.slice(0, k);
            expect(got.chunkIds.length).toBe(want.length);
            for (let i = 0; i < want.length; i++) {
              if (!close(got.scores[i]!, want[i]!.score)) expect.fail(`k=${k} rank ${i}: score ${got.scores[i]} != ${want[i]!.score}`);
              // Equal scores must come out by chunk id like the oracle's; only near-equal ones (float noise) may swap.
              if (got.chunkIds[i] !== want[i]!.id) {
                const og = oracle.get(got.chunkIds[i]!);
                if (og === undefined || !close(og, want[i]!.score)) expect.fail(`k=${k} rank ${i}: got ${got.chunkIds[i]} want ${want[i]!.id}`);
              }
            }
          }
        },
      ),
      { seed: 777, numRuns: 25 },
    );
  });

  it('breaks a flood of exact ties by chunk id across many blocks and windows', () => {
    const index = new Bm25Index({ compactMinDead: 1 << 30 });
    const ids: string[] = [];
    // 20,000 identical docs: every block bound equals every score, so pruning sits exactly at theta.
    for (let i = 0; i < 20_000; i++) {
      const id = `c${((i * 7919) % 20_000).toString().padStart(5, '0')}`;
      ids.push(id);
      index.upsert(id, 'apple river');
    }
    index.remove('c00000');
    index.remove('c00002');
    const terms = index.analyzer.analyze('apple');
    const hits = index.search(terms, 5, { ...index.stats(), docFreqs: index.termDocFreqs(terms) });
    expect(hits.chunkIds).toEqual(['c00001', 'c00003', 'c00004', 'c00005', 'c00006']);
    const allow = Bitset.of(index.capacity, ['c19999', 'c10000', 'c00002'].map((c) => index.internalId(c)).filter((x): x is number => x !== undefined));
    const filtered = index.search(terms, 5, { ...index.stats(), docFreqs: index.termDocFreqs(terms) }, allow);
    expect(filtered.chunkIds).toEqual(['c10000', 'c19999']);
  });

  it('termCount counts terms with live documents only', () => {
    const index = new Bm25Index({ compactMinDead: 0 });
    expect(index.termCount).toBe(0);
    index.upsert('a', 'apple river');
    index.upsert('b', 'apple stone');
    expect(index.termCount).toBe(3);
    index.remove('b');
    expect(index.termCount).toBe(2);
    index.upsert('a', 'cloud');
    expect(index.termCount).toBe(1);
    index.upsert('c', 'cloud cloud tiger');
    expect(index.termCount).toBe(2);
  });
});
