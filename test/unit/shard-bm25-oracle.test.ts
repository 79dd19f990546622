import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Bitset } from '../../workers/shard/bm25/bitset.js';
import { Bm25Index, bm25Idf, type Bm25Hits } from '../../workers/shard/bm25/bm25-index.js';

// Words chosen to survive Porter unchanged or collapse predictably; "gone" never occurs in docs.
const VOCAB = ['apple', 'river', 'stone', 'cloud', 'tiger', 'lamp', 'ocean', 'seed', 'glass', 'wolf', 'maple', 'zinc'];
const K1 = 0.9;
const B = 0.4;

interface Scored {
  id: string;
  score: number;
}

/** Textbook BM25 over the plain list of live documents: every doc scored, nothing pruned. */
function bruteForce(live: Map<string, string>, index: Bm25Index, query: string[], allow: Set<string> | null): Scored[] {
  const docs = [...live].map(([id, text]) => ({ id, tokens: index.analyzer.analyze(text) }));
  const N = docs.length;
  const total = docs.reduce((n, d) => n + d.tokens.length, 0);
  if (N === 0 || total === 0) return [];
  const avgdl = total / N;
  const out: Scored[] = [];
  for (const d of docs) {
    if (allow !== null && !allow.has(d.id)) continue;
    let score = 0;
    let matched = false;
    for (const q of query) {
      const tf = d.tokens.filter((t) => t === q).length;
      if (tf === 0) continue;
      matched = true;
      const df = docs.filter((x) => x.tokens.includes(q)).length;
      score += (bm25Idf(N, df) * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * d.tokens.length) / avgdl));
    }
    if (matched) out.push({ id: d.id, score });
  }
  return out.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

const close = (a: number, b: number): boolean => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

/** Same top-k as the oracle; documents may swap places only when their oracle scores are within 1e-9. */
function expectSameTopK(got: Bm25Hits, all: Scored[], k: number): void {
  const want = all.slice(0, k);
  const oracle = new Map(all.map((s) => [s.id, s.score]));
  expect(got.chunkIds.length).toBe(want.length);
  expect(new Set(got.chunkIds).size).toBe(got.chunkIds.length);
  for (let i = 0; i < want.length; i++) {
    const g = got.chunkIds[i]!;
    const w = want[i]!;
    if (!close(got.scores[i]!, w.score)) expect.fail(`rank ${i}: score ${got.scores[i]} != oracle ${w.score}`);
    if (g !== w.id) {
      const og = oracle.get(g);
      if (og === undefined || !close(og, w.score)) expect.fail(`rank ${i}: got ${g} (oracle ${og}) want ${w.id} (${w.score})`);
    }
  }
}

type Op = { kind: 'upsert'; id: number; words: number[] } | { kind: 'remove'; id: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('upsert' as const), id: fc.nat(24), words: fc.array(fc.nat(VOCAB.length - 1), { maxLength: 14 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('remove' as const), id: fc.nat(24) }) },
);
const queryArb = fc.record({
  words: fc.array(fc.nat(VOCAB.length), { minLength: 1, maxLength: 6 }), // index VOCAB.length = unknown word
  k: fc.integer({ min: 1, max: 12 }),
  filterSeed: fc.array(fc.boolean(), { minLength: 25, maxLength: 25 }),
  useFilter: fc.boolean(),
});

describe('Bm25Index against brute-force BM25', () => {
  it('returns the oracle top-k (ids and scores) after random upserts, updates and deletes', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(opArb, { maxLength: 40 }), { minLength: 1, maxLength: 3 }),
        fc.array(queryArb, { minLength: 1, maxLength: 6 }),
        fc.constantFrom(0, 1, 3, 1024),
        (phases, queries, compactMinDead) => {
          const index = new Bm25Index({ k1: K1, b: B, compactMinDead, compactDeadRatio: 0.1 });
          const live = new Map<string, string>();
          // Writes and searches interleave so that cached per-term bounds see later writes.
          for (const ops of phases) {
            for (const op of ops) {
              const chunk = `c${op.id}`;
              if (op.kind === 'upsert') {
                const text = op.words.map((w) => VOCAB[w]).join(' ');
                index.upsert(chunk, text);
                live.set(chunk, text);
              } else {
                expect(index.remove(chunk)).toBe(live.delete(chunk));
              }
            }
            const st = index.stats();
            expect(st.docCount).toBe(live.size);
            for (const q of queries) {
              const terms = index.analyzer.analyze(q.words.map((w) => VOCAB[w] ?? 'gone').join(' '));
              const dfs = index.termDocFreqs(terms);
              terms.forEach((t, i) => {
                const df = [...live.values()].filter((text) => index.analyzer.analyze(text).includes(t)).length;
                expect(dfs[i]).toBe(df);
              });
              let allow: Bitset | null = null;
              let allowed: Set<string> | null = null;
              if (q.useFilter) {
                allowed = new Set([...live.keys()].filter((c) => q.filterSeed[Number(c.slice(1))]));
                allow = Bitset.of(index.capacity, [...allowed].map((c) => index.internalId(c)!));
              }
              const got = index.search(terms, q.k, { ...st, docFreqs: dfs }, allow);
              expectSameTopK(got, bruteForce(live, index, terms, allowed), q.k);
            }
          }
        },
      ),
      { seed: 20261122, numRuns: 300 },
    );
  });

  it('breaks exact score ties by chunk id ascending, also at the k boundary', () => {
    const index = new Bm25Index({ compactMinDead: 0 });
    for (const id of ['d', 'b', 'e', 'a', 'c']) index.upsert(id, 'apple river');
    index.upsert('z', 'apple apple river');
    const terms = index.analyzer.analyze('apple');
    const stats = { ...index.stats(), docFreqs: index.termDocFreqs(terms) };
    const hits = index.search(terms, 3, stats);
    expect(hits.chunkIds).toEqual(['z', 'a', 'b']);
    expect(hits.scores[1]).toBe(hits.scores[2]);
    expect(hits.scores[0]).toBeGreaterThan(hits.scores[1]!);
  });

  it('never returns deleted or replaced text, before and after compaction', () => {
    for (const compactMinDead of [0, 1024]) {
      const index = new Bm25Index({ compactMinDead });
      index.upsert('a', 'tiger stone');
      index.upsert('b', 'tiger ocean');
      index.upsert('a', 'ocean lamp'); // replaces: "tiger" must no longer find a
      index.remove('b');
      index.upsert('c', 'lamp'); // may reuse a recycled internal id
      const search = (q: string) => {
        const terms = index.analyzer.analyze(q);
        return index.search(terms, 10, { ...index.stats(), docFreqs: index.termDocFreqs(terms) }).chunkIds;
      };
      expect(search('tiger')).toEqual([]);
      expect(search('ocean')).toEqual(['a']);
      expect(search('lamp').sort()).toEqual(['a', 'c']);
      expect(index.stats()).toEqual({ docCount: 2, totalLength: 3 });
      expect([...index.termDocFreqs(['tiger', 'ocean', 'lamp'])]).toEqual([0, 1, 2]);
    }
  });

  it('counts a repeated query term once per occurrence', () => {
    const index = new Bm25Index();
    index.upsert('a', 'apple river');
    index.upsert('b', 'stone');
    const once = index.search(['appl'], 1, { ...index.stats(), docFreqs: [1] });
    const twice = index.search(['appl', 'appl'], 1, { ...index.stats(), docFreqs: [1, 1] });
    expect(twice.scores[0]).toBeCloseTo(2 * once.scores[0]!, 12);
  });
});
