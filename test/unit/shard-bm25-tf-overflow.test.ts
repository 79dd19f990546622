import { describe, expect, it } from 'vitest';
import { loadBm25Snapshot, saveBm25Snapshot } from '../../workers/shard/persist/bm25-snapshot.js';
import { Bm25Index, bm25Idf, type PairQuery } from '../../workers/shard/bm25/bm25-index.js';
import { PAIR_WEIGHT, queryPairs } from '../../workers/shard/bm25/proximity.js';
import { pairTf } from '../helpers/proximity-oracle.js';

// Postings store a tf in one byte and a tf of 255 or more in an overflow map: scores must be those
// of the exact tf (clamped at 65,535 as before), through deletes, compaction, id reuse and snapshots.

const K1 = 0.9;
const B = 0.4;
/** Term frequencies around the one-byte limit, and past the u16 clamp. */
const TFS = [1, 2, 254, 255, 256, 300, 1000, 70_000];

/** One list's contribution, with the operations in the order the top-k computes them. */
function contribution(index: Bm25Index, df: number, tf: number, dl: number, weight = 1): number {
  const { docCount, totalLength } = index.stats();
  const avgdl = totalLength / docCount;
  const w = weight * bm25Idf(docCount, df) * (K1 + 1);
  const norm = K1 * (1 - B) + ((K1 * B) / avgdl) * dl;
  return (w * tf) / (tf + norm);
}

function search(index: Bm25Index, q: string, pairs = false, k = 100) {
  const terms = index.analyzer.analyze(q);
  const stats = { ...index.stats(), docFreqs: index.termDocFreqs(terms) };
  let pq: PairQuery | null = null;
  if (pairs) {
    const p = queryPairs(terms, (t) => index.isStopTerm(t));
    pq = { pairs: p, docFreqs: index.pairDocFreqs(p), weight: PAIR_WEIGHT };
  }
  const h = index.search(terms, k, stats, null, pq);
  return new Map(h.chunkIds.map((id, i) => [id, h.scores[i]!]));
}

/** An index holding chunk `tf<n>` = "apple" n times then "river", plus filler chunks. */
function build(): Bm25Index {
  const index = new Bm25Index({ k1: K1, b: B, compactMinDead: 1, compactDeadRatio: 0 });
  for (const tf of TFS) index.upsert(`tf${tf}`, `${'apple '.repeat(tf)}river`);
  for (let i = 0; i < 20; i++) index.upsert(`filler${i}`, `stone cloud tiger river ${i % 3 === 0 ? 'apple' : ''}`);
  return index;
}

function expectExactTfs(index: Bm25Index, tfs: readonly number[]): void {
  const got = search(index, 'apple');
  const df = index.termDocFreqs(['appl'])[0]!;
  for (const tf of tfs) {
    const stored = Math.min(tf, 0xffff);
    expect(got.get(`tf${tf}`)).toBe(contribution(index, df, stored, tf + 1));
  }
}

describe('one-byte term frequencies with an overflow map', () => {
  it('scores every tf as its exact value, on both sides of 255', () => {
    expectExactTfs(build(), TFS);
  });

  it('gives the exact top-k when several lists hold large tfs, whatever k (every pruning path)', () => {
    const index = new Bm25Index({ k1: K1, b: B });
    const words = ['apple', 'river', 'stone'];
    const docs: number[][] = [];
    // Deterministic pseudo-random tfs, a third of them 255 or more.
    let x = 12345;
    const next = () => (x = (Math.imul(x, 1103515245) + 12345) >>> 0) % 600;
    for (let d = 0; d < 400; d++) {
      const tfs = words.map(() => (next() < 400 ? next() % 4 : 200 + next()));
      docs.push(tfs);
      index.upsert(`d${d}`, words.map((w, i) => `${w} `.repeat(tfs[i]!)).join('') + 'cloud');
    }
    const dfs = words.map((_, i) => docs.filter((tfs) => tfs[i]! > 0).length);
    // Every query of one to three of the words: one list (document-at-a-time) and several.
    for (const query of [[0], [1], [2], [0, 1], [1, 2], [0, 1, 2]]) {
      const exact = docs.map((tfs) => {
        const dl = tfs.reduce((a, b) => a + b, 1);
        let score = 0;
        for (const i of query) if (tfs[i]! > 0) score += contribution(index, dfs[i]!, tfs[i]!, dl);
        return score;
      });
      const order = exact
        .map((score, d) => ({ id: `d${d}`, score }))
        .filter((e) => e.score > 0)
        .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
      for (const k of [1, 3, 10, 50, 400]) {
        const got = [...search(index, query.map((i) => words[i]).join(' '), false, k)];
        expect(got).toEqual(order.slice(0, k).map((e) => [e.id, e.score]));
      }
    }
  });

  it('keeps exact tfs through deletes, compaction and reuse of the freed ids', () => {
    const index = build();
    index.remove('tf300');
    index.remove('tf1000'); // compactMinDead 1: purged at once, the ids can be reused
    index.upsert('tf3', 'apple apple apple river');
    index.upsert('tf400', `${'apple '.repeat(400)}river`);
    expect(search(index, 'apple').has('tf300')).toBe(false);
    expectExactTfs(index, [1, 2, 3, 254, 255, 256, 400, 70_000]);
    // Once no posting of 255 or more is left, the overflow maps are given back.
    const empty = new Bm25Index().memoryReport()['postings tf overflow'];
    expect(index.memoryReport()['postings tf overflow']).toBeGreaterThan(empty!);
    for (const tf of [255, 256, 400, 70_000]) index.remove(`tf${tf}`);
    index.compact();
    expect(index.memoryReport()['postings tf overflow']).toBe(empty);
  });

  it('snapshots the exact tfs', () => {
    const index = build();
    const copy = loadBm25Snapshot(saveBm25Snapshot(index));
    expect(copy.exportState().postingTfs).toEqual(index.exportState().postingTfs);
    expectExactTfs(copy, TFS);
    expect(Math.max(...copy.exportState().postingTfs)).toBe(0xffff);
  });

  it('scores a proximity pair occurring 255 times or more by its exact frequency', () => {
    const index = new Bm25Index({ k1: K1, b: B });
    const words = (n: number) => Array.from({ length: n }, () => 'apple river').join(' ').split(' ');
    for (const n of [3, 200, 300]) index.upsert(`pair${n}`, words(n).join(' '));
    index.upsert('other', 'apple stone cloud river');
    const got = search(index, 'apple river', true);
    const [dfA, dfR] = index.termDocFreqs(['appl', 'river']);
    for (const n of [3, 200, 300]) {
      const content = words(n);
      const tf = pairTf(content, 'apple', 'river');
      expect(tf).toBe(2 * n - 1);
      const want =
        contribution(index, dfA!, n, 2 * n) + contribution(index, dfR!, n, 2 * n) + contribution(index, 3, tf, 2 * n, PAIR_WEIGHT);
      expect(got.get(`pair${n}`)).toBe(want);
    }
  });
});
