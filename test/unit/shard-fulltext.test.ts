import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadBm25Snapshot, saveBm25Snapshot } from '../../workers/shard/persist/bm25-snapshot.js';
import { Bm25Index, bm25Idf, type PairQuery } from '../../workers/shard/bm25/bm25-index.js';
import { PAIR_WEIGHT, queryPairs } from '../../workers/shard/bm25/proximity.js';
import { pairTf } from '../helpers/proximity-oracle.js';

// Content words plus stop words ("the", "of", "and"), which pairs must skip over.
const VOCAB = ['apple', 'river', 'stone', 'cloud', 'tiger', 'lamp', 'the', 'of', 'and', 'ocean'];
const STOP = new Set(['the', 'of', 'and']);
const K1 = 0.9;
const B = 0.4;

interface Scored {
  id: string;
  score: number;
}

/** Fulltext by hand: BM25 of the words plus 0.2 x BM25 of the adjacent query pairs, every doc scored. */
function bruteForce(live: Map<string, string[]>, query: string[]): Scored[] {
  const docs = [...live].map(([id, words]) => ({ id, words, content: words.filter((w) => !STOP.has(w)) }));
  const N = docs.length;
  const total = docs.reduce((n, d) => n + d.words.length, 0);
  if (N === 0 || total === 0) return [];
  const avgdl = total / N;
  const qc = query.filter((w) => !STOP.has(w));
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < qc.length; i++) if (qc[i] !== qc[i + 1]) pairs.push([qc[i]!, qc[i + 1]!]);
  const out: Scored[] = [];
  for (const d of docs) {
    const norm = K1 * (1 - B + (B * d.words.length) / avgdl);
    let score = 0;
    let matched = false;
    for (const q of query) {
      const tf = d.words.filter((t) => t === q).length;
      if (tf === 0) continue;
      matched = true;
      const df = docs.filter((x) => x.words.includes(q)).length;
      score += (bm25Idf(N, df) * tf * (K1 + 1)) / (tf + norm);
    }
    for (const [a, b] of pairs) {
      const tf = pairTf(d.content, a, b);
      if (tf === 0) continue;
      const df = docs.filter((x) => pairTf(x.content, a, b) > 0).length;
      score += (PAIR_WEIGHT * bm25Idf(N, df) * tf * (K1 + 1)) / (tf + norm);
    }
    if (matched) out.push({ id: d.id, score });
  }
  return out.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Coordinator as the core runs it: stats and pair dfs summed over shards, then each shard searched. */
function fulltext(shards: Bm25Index[], query: string, k: number): Scored[] {
  const terms = shards[0]!.analyzer.analyze(query);
  const pairs = queryPairs(terms, (t) => shards[0]!.isStopTerm(t));
  const docFreqs = new Float64Array(terms.length);
  const pairDfs = new Float64Array(pairs.length);
  let docCount = 0;
  let totalLength = 0;
  for (const s of shards) {
    const st = s.stats();
    docCount += st.docCount;
    totalLength += st.totalLength;
    s.termDocFreqs(terms).forEach((df, i) => (docFreqs[i] = docFreqs[i]! + df));
    s.pairDocFreqs(pairs).forEach((df, i) => (pairDfs[i] = pairDfs[i]! + df));
  }
  const pq: PairQuery = { pairs, docFreqs: pairDfs, weight: PAIR_WEIGHT };
  const hits: Scored[] = [];
  for (const s of shards) {
    const h = s.search(terms, k, { docCount, totalLength, docFreqs }, null, pq);
    h.chunkIds.forEach((id, i) => hits.push({ id, score: h.scores[i]! }));
  }
  return hits.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).slice(0, k);
}

const close = (a: number, b: number): boolean => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

function expectSameTopK(got: Scored[], all: Scored[], k: number): void {
  const want = all.slice(0, k);
  const oracle = new Map(all.map((s) => [s.id, s.score]));
  expect(got.length).toBe(want.length);
  for (let i = 0; i < want.length; i++) {
    if (!close(got[i]!.score, want[i]!.score)) expect.fail(`rank ${i}: score ${got[i]!.score} != oracle ${want[i]!.score}`);
    if (got[i]!.id !== want[i]!.id && !close(oracle.get(got[i]!.id) ?? NaN, want[i]!.score)) {
      expect.fail(`rank ${i}: got ${got[i]!.id} want ${want[i]!.id}`);
    }
  }
}

const fnv = (s: string): number => {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
};

type Op = { kind: 'upsert'; id: number; words: number[] } | { kind: 'remove'; id: number };
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('upsert' as const), id: fc.nat(30), words: fc.array(fc.nat(VOCAB.length - 1), { maxLength: 16 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove' as const), id: fc.nat(30) }) },
);

describe('fulltext (BM25 + proximity pairs)', () => {
  it('equals brute force on random corpora with updates and deletes, for 1, 2 and 3 shards', () => {
    fc.assert(
      fc.property(
        fc.array(opArb, { minLength: 1, maxLength: 60 }),
        fc.array(fc.array(fc.nat(VOCAB.length - 1), { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 1, max: 15 }),
        (ops, queries, k) => {
          const live = new Map<string, string[]>();
          const layouts = [1, 2, 3].map((n) => Array.from({ length: n }, () => new Bm25Index({ k1: K1, b: B, compactMinDead: 2, compactDeadRatio: 0.1 })));
          for (const op of ops) {
            const id = `c${op.id}`;
            for (const shards of layouts) {
              const s = shards[fnv(id) % shards.length]!;
              if (op.kind === 'upsert') s.upsert(id, op.words.map((w) => VOCAB[w]).join(' '));
              else s.remove(id);
            }
            if (op.kind === 'upsert') live.set(id, op.words.map((w) => VOCAB[w]!));
            else live.delete(id);
          }
          for (const q of queries) {
            const words = q.map((w) => VOCAB[w]!);
            const want = bruteForce(live, words);
            for (const shards of layouts) expectSameTopK(fulltext(shards, words.join(' '), k), want, k);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('ranks a document with the query words next to each other above one with them apart', () => {
    const index = new Bm25Index();
    index.upsert('near', 'heart attack risk rises in winter months');
    index.upsert('far', 'heart rate rises in winter and the attack risk too');
    const terms = index.analyzer.analyze('heart attack');
    const pairs = queryPairs(terms, (t) => index.isStopTerm(t));
    const stats = { ...index.stats(), docFreqs: index.termDocFreqs(terms) };
    const plain = index.search(terms, 2, stats);
    const full = index.search(terms, 2, stats, null, { pairs, docFreqs: index.pairDocFreqs(pairs), weight: PAIR_WEIGHT });
    expect(full.chunkIds[0]).toBe('near');
    expect(full.scores[0]! - plain.scores[plain.chunkIds.indexOf('near')]!).toBeGreaterThan(0);
    // The far document has no pair, so its score is its BM25 score.
    expect(full.scores[full.chunkIds.indexOf('far')]).toBeCloseTo(plain.scores[plain.chunkIds.indexOf('far')]!, 12);
  });

  it('keeps the term sequences through a snapshot', () => {
    const index = new Bm25Index();
    index.upsert('a', 'deep sea fish glow in the dark');
    index.upsert('b', 'fish of the deep sea');
    index.upsert('c', 'sea deep blue');
    index.remove('c');
    const copy = loadBm25Snapshot(saveBm25Snapshot(index));
    const pairs: [string, string][] = [['deep', 'sea']];
    expect(copy.pairDocFreqs(pairs)).toEqual(index.pairDocFreqs(pairs));
    expect(copy.pairDocFreqs(pairs)).toEqual([2]);
  });

  it('docsContaining is every live document holding all the words', () => {
    const index = new Bm25Index();
    index.upsert('a', 'red apples and green pears');
    index.upsert('b', 'green apples');
    index.upsert('c', 'red wine');
    index.remove('b');
    index.upsert('d', 'an apple, red');
    const ids = (text: string): string[] => {
      const out: string[] = [];
      index.docsContaining(text, index.capacity).forEach((id) => void out.push(index.chunkId(id)!));
      return out.sort();
    };
    expect(ids('red apple')).toEqual(['a', 'd']); // stemmed: apples -> appl
    expect(ids('green')).toEqual(['a']);
    expect(ids('"red wine"')).toEqual(['c']);
    expect(ids('unknown red')).toEqual([]);
    expect(ids('...')).toEqual([]);
  });
});
