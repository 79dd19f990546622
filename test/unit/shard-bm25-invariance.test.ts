import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Bm25Index, type Bm25Hits } from '../../workers/shard/bm25/bm25-index.js';
import { fnv1a } from '../../core/domain/fnv1a.js';

const WORDS = ['protein', 'cell', 'gene', 'cancer', 'virus', 'immune', 'brain', 'insulin', 'receptor', 'tumor', 'mouse', 'dose'];

/** Coordinator: sum stats and dfs over shards, search each with the global stats, merge top-k. */
function scatterGather(shards: Bm25Index[], query: string, k: number): { ids: string[]; scores: number[] } {
  const terms = shards[0]!.analyzer.analyze(query);
  const docFreqs = new Float64Array(terms.length);
  let docCount = 0;
  let totalLength = 0;
  for (const s of shards) {
    const st = s.stats();
    docCount += st.docCount;
    totalLength += st.totalLength;
    s.termDocFreqs(terms).forEach((df, i) => (docFreqs[i] = docFreqs[i]! + df));
  }
  const hits: { id: string; score: number }[] = [];
  for (const s of shards) {
    const h: Bm25Hits = s.search(terms, k, { docCount, totalLength, docFreqs });
    h.chunkIds.forEach((id, i) => hits.push({ id, score: h.scores[i]! }));
  }
  hits.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const top = hits.slice(0, k);
  return { ids: top.map((h) => h.id), scores: top.map((h) => h.score) };
}

function build(n: number, docs: [string, string][], removed: Set<string>): Bm25Index[] {
  const shards = Array.from({ length: n }, () => new Bm25Index({ compactMinDead: 2, compactDeadRatio: 0.1 }));
  const shardOf = (id: string) => shards[fnv1a(id) % n]!;
  for (const [id, text] of docs) shardOf(id).upsert(id, text);
  for (const id of removed) shardOf(id).remove(id);
  return shards;
}

describe('BM25 scores do not depend on the shard count', () => {
  it('1, 2 and 4 shards give bit-identical rankings and scores with global stats', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(60), fc.array(fc.nat(WORDS.length - 1), { minLength: 1, maxLength: 20 })), { minLength: 1, maxLength: 60 }),
        fc.array(fc.nat(60), { maxLength: 15 }),
        fc.array(fc.array(fc.nat(WORDS.length - 1), { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 1, max: 20 }),
        (rawDocs, removedIds, queries, k) => {
          const docs = rawDocs.map(([id, ws]): [string, string] => [`doc-${id}`, ws.map((w) => WORDS[w]).join(' ')]);
          const removed = new Set(removedIds.map((id) => `doc-${id}`));
          const one = build(1, docs, removed);
          const two = build(2, docs, removed);
          const four = build(4, docs, removed);
          for (const q of queries) {
            const text = q.map((w) => WORDS[w]).join(' ');
            const ref = scatterGather(one, text, k);
            expect(scatterGather(two, text, k)).toEqual(ref);
            expect(scatterGather(four, text, k)).toEqual(ref);
          }
        },
      ),
      { seed: 4242, numRuns: 200 },
    );
  });

  it('local-only statistics would differ (the test above is not vacuous)', () => {
    const docs: [string, string][] = [];
    for (let i = 0; i < 40; i++) docs.push([`doc-${i}`, i % 3 === 0 ? 'gene cancer cancer' : 'gene protein cell']);
    const four = build(4, docs, new Set());
    const terms = four[0]!.analyzer.analyze('cancer gene');
    const local = four.map((s) => s.search(terms, 1, { ...s.stats(), docFreqs: s.termDocFreqs(terms) }).scores[0]);
    expect(new Set(local).size).toBeGreaterThan(1);
  });
});
