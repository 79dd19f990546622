import { describe, expect, it } from 'vitest';
import { lastWordBeingTyped, withCompletions } from '../../core/domain/completions.js';
import { Shard } from '../../workers/shard/shard.js';
import { Bm25Index } from '../../workers/shard/bm25/bm25-index.js';
import { textDoc } from '../../workers/shard/text-doc.js';

const doc = textDoc;

function corpus(): Shard {
  const shard = new Shard({ k1: 0.9, b: 0.4 });
  shard.apply(
    [
      doc('a', 'protein folding in yeast cells'),
      doc('b', 'proteins and protease activity'),
      doc('c', 'protest songs of the sixties'),
      doc('d', 'yeast genome'),
      doc('e', 'protein protein interaction'),
    ],
    [],
    1,
  );
  return shard;
}

describe('autocomplete completions', () => {
  it('lists live terms beginning with the prefix, most frequent first', () => {
    const index = new Bm25Index();
    index.upsert('1', 'protein protease');
    index.upsert('2', 'protein protest');
    index.upsert('3', 'protean');
    index.remove('3');
    expect(index.termsWithPrefix('prot', 10)).toEqual({ terms: ['protein', 'proteas', 'protest'], docFreqs: [2, 1, 1] });
    expect(index.termsWithPrefix('prot', 1).terms).toEqual(['protein']);
    expect(index.termsWithPrefix('zzz', 10).terms).toEqual([]);
    // Terms added after a lookup are found by the next one.
    index.upsert('4', 'protocol');
    expect(index.termsWithPrefix('proto', 10).terms).toEqual(['protocol']);
  });

  it('takes the last word as a prefix only while it is being typed', () => {
    expect(lastWordBeingTyped('yeast prot')).toBe('prot');
    expect(lastWordBeingTyped('yeast prot ')).toBeNull();
    expect(lastWordBeingTyped('Éclair')).toBe('éclair');
  });

  it('searches the completions of the last word as extra query words', () => {
    const shard = corpus();
    const plain = shard.search('yeast prot', null, 10, null, null, false);
    expect(plain.chunkIds).toEqual(['d', 'a']); // "prot" itself is not a word of any document
    const typed = shard.search('yeast prot', null, 10, null, null, false, false, null, true);
    expect(new Set(typed.chunkIds)).toEqual(new Set(['a', 'b', 'c', 'd', 'e']));
    expect(typed.chunkIds.indexOf('a')).toBeLessThan(typed.chunkIds.indexOf('d')); // yeast and a completion beat yeast alone
    // Scores are BM25 of the query words plus the completions.
    const stats = withCompletions(shard.termStats('yeast prot', false, true));
    expect(stats.terms).toEqual(['yeast', 'prot', 'protein', 'proteas', 'protest']);
    const manual = shard.index.search(stats.terms, 10, stats);
    expect(typed.scores).toEqual(Array.from(manual.scores));
  });

  it('a content condition with prefix_last_word matches any completion of its last word', () => {
    const shard = corpus();
    const hits = (value: string, prefix: boolean): string[] => {
      const r = shard.scroll({ must: [{ field: { field: 'content', match_any: [{ text: value }], prefix_last_word: prefix } }] }, null, 10, null, false);
      return r.chunkIds.sort();
    };
    expect(hits('prot', true)).toEqual(['a', 'b', 'c', 'e']);
    expect(hits('yeast prot', true)).toEqual(['a']);
    expect(hits('yeast', false)).toEqual(['a', 'd']);
    expect(hits('genome prot', true)).toEqual([]);
    // A word that is complete (followed by a space) is required as written.
    expect(hits('yeast prot ', true)).toEqual([]);
    // Without the flag a "*" is punctuation, not a convention: no document has the word "prot".
    expect(hits('prot*', false)).toEqual([]);
    expect(hits('prot', false)).toEqual([]);
  });
});

describe('query-time fulltext_boost', () => {
  it('multiplies the weight of query words that occur in the phrase', () => {
    const shard = corpus();
    const plain = shard.search('yeast genome', null, 10, null, null, false);
    const boosted = shard.search('yeast genome', null, 10, null, null, false, false, { phrase: 'genome', factor: 3 }, false);
    const stats = shard.termStats('yeast genome');
    // d holds both words, a only "yeast": the boost triples genome's part of d's score, a is unchanged.
    const only = (q: string, id: string) => {
      const r = shard.index.search(shard.index.analyzer.analyze(q), 10, { ...stats, docFreqs: shard.index.termDocFreqs(shard.index.analyzer.analyze(q)) });
      return r.scores[r.chunkIds.indexOf(id)]!;
    };
    expect(shard.index.termDocFreqs(shard.index.analyzer.analyze('genome'))[0]).toBe(1);
    const dPlain = plain.scores[plain.chunkIds.indexOf('d')]!;
    const dBoosted = boosted.scores[boosted.chunkIds.indexOf('d')]!;
    const yeastPart = dPlain - only('genome', 'd');
    expect(dBoosted).toBeCloseTo(yeastPart + 3 * only('genome', 'd'), 10);
    expect(boosted.scores[boosted.chunkIds.indexOf('a')]).toBeCloseTo(plain.scores[plain.chunkIds.indexOf('a')]!, 12);
  });
});

describe('ingestion fulltext_boost', () => {
  it('multiplies the phrase words term frequencies in the boosted chunk only', () => {
    const plain = new Bm25Index();
    const boosted = new Bm25Index();
    for (const index of [plain, boosted]) index.upsert('x', 'malaria vaccine trial results');
    plain.upsert('y', 'malaria malaria malaria vaccine study');
    boosted.upsert('y', 'malaria vaccine study', { phrase: 'Malaria', factor: 3 });
    const q = plain.analyzer.analyze('malaria');
    const score = (index: Bm25Index, id: string) => {
      const r = index.search(q, 10, { ...index.stats(), docFreqs: index.termDocFreqs(q) });
      return r.scores[r.chunkIds.indexOf(id)]!;
    };
    // Same tf (3) but a shorter document: the boosted chunk scores at least as high as three real occurrences.
    expect(score(boosted, 'y')).toBeGreaterThan(score(plain, 'y'));
    // A phrase word absent from the text adds nothing.
    const absent = new Bm25Index();
    absent.upsert('x', 'malaria vaccine trial results');
    absent.upsert('y', 'malaria vaccine study', { phrase: 'dengue', factor: 3 });
    const other = new Bm25Index();
    other.upsert('x', 'malaria vaccine trial results');
    other.upsert('y', 'malaria vaccine study');
    expect(score(absent, 'y')).toBe(score(other, 'y'));
  });
});

describe('chunk ids in filters and scroll (named by the BM25 index; the field store keeps none)', () => {
  const uuid = (n: number) => `0192f0a0-0000-7000-8000-${n.toString(16).padStart(12, '0')}`;

  it('has_id matches live chunks only, UUIDs and other ids alike, across deletes and rewrites', () => {
    const shard = new Shard({ k1: 0.9, b: 0.4 });
    shard.apply([doc(uuid(1), 'one'), doc(uuid(2), 'two'), doc('plain-3', 'three'), doc(uuid(4), 'four')], [], 1);
    const allowed = (ids: string[]): string[] => {
      const r = shard.scroll({ must: [{ has_id: { ids, tracking_ids: [] } }], must_not: [], should: [] }, null, 10, null, false);
      return r.chunkIds;
    };
    expect(allowed([uuid(2), 'plain-3', 'missing'])).toEqual([uuid(2), 'plain-3']);
    shard.apply([doc(uuid(2), 'two again')], [uuid(4)], 2);
    expect(allowed([uuid(2), uuid(4)])).toEqual([uuid(2)]);
    // A freed internal id taken by a new chunk answers for the new chunk only.
    shard.apply([doc(uuid(5), 'five')], [], 3);
    expect(allowed([uuid(4), uuid(5)])).toEqual([uuid(5)]);
    expect(shard.scroll(null, uuid(2), 10, null, false).chunkIds).toEqual([uuid(2), uuid(5), 'plain-3']);
  });
});
