/**
 * Search features on top of ranking, through HTTP against brute force from the store:
 * stop-word removal, quoted and negated terms, autocomplete, sort_by (field and re-scoring),
 * sort_options post-ranking, scoring_options, highlights in responses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../helpers/api.js';
import { createTenant } from '../helpers/fixtures.js';
import { randomChunks } from '../helpers/random-corpus.js';
import { bruteForceBm25, loadChunks, type OracleChunk } from '../helpers/search-oracle.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { createAnalyzer } from '../../workers/shard/bm25/analyzer.js';

let stack: Stack;
let ds: Client;
let datasetId: string;
let chunks: OracleChunk[];
const analyzer = createAnalyzer();

const bm25 = (body: Record<string, unknown>) => ds.post('/api/chunk/search', { search_type: 'bm25', page_size: 20, ...body });
const scored = (res: { body: any }) => res.body.chunks.map((x: any) => ({ id: x.chunk.id as string, score: x.score as number }));
const idsOf = (res: { body: any }) => res.body.chunks.map((x: any) => x.chunk.id as string);

function expectScores(actual: { id: string; score: number }[], expected: { id: string; score: number }[], what: string): void {
  expect(actual.map((a) => a.score), what).toEqual(expected.map((e) => expect.closeTo(e.score, 9)));
  expect(new Set(actual.map((a) => a.id)), what).toEqual(new Set(expected.map((e) => e.id)));
}

beforeAll(async () => {
  stack = await startStack({ env: { QUARRY_CORE_IN_PROCESS: 'false' } });
  const tenant = await createTenant(stack);
  ds = tenant.ds;
  datasetId = tenant.datasetId;
  const payloads = randomChunks(300, 11).map((p, i) => ({ ...p, weight: i % 7 === 0 ? 2.5 : i % 5 === 0 ? 0.5 : 0 }));
  for (let i = 0; i < payloads.length; i += 100) {
    const res = await ds.post('/api/chunk', payloads.slice(i, i + 100));
    expect(res.status, res.text).toBe(200);
  }
  chunks = await loadChunks(stack, datasetId);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe('query syntax', () => {
  it('remove_stop_words drops stop words, and keeps a query made only of them', async () => {
    const plain = await bm25({ query: 'protein heart' });
    const stripped = await bm25({ query: 'the protein of the heart', remove_stop_words: true });
    expect(stripped.status, stripped.text).toBe(200);
    expectScores(scored(stripped), scored(plain), 'stop words removed');
    const only = await bm25({ query: 'the of', remove_stop_words: true });
    expectScores(scored(only), bruteForceBm25(chunks, 'the of', null).slice(0, 20), 'only stop words');
  });

  it('use_quote_negated_terms requires quoted phrases and excludes -words', async () => {
    const res = await bm25({ query: '"quick fox" -virus gene', use_quote_negated_terms: true, page_size: 100 });
    expect(res.status, res.text).toBe(200);
    const words = (id: string) => new Set(analyzer.analyze(chunks.find((c) => c.id === id)!.text));
    const filter = {
      must: [{ field: 'content', match_all: ['quick fox'] }],
      must_not: [{ field: 'content', match_any: ['virus'] }],
    };
    const expected = bruteForceBm25(chunks, 'quick fox virus gene', filter).slice(0, 100);
    expect(expected.length).toBeGreaterThan(3);
    expectScores(scored(res), expected, 'quoted and negated');
    for (const id of idsOf(res)) {
      const w = words(id);
      expect(w.has('quick') && w.has('fox') && !w.has('viru')).toBe(true);
    }
    // Without the flag the syntax is plain text.
    const literal = await bm25({ query: '"quick fox" -virus gene', page_size: 100 });
    expect(idsOf(literal).length).toBeGreaterThan(idsOf(res).length);
    const empty = await bm25({ query: '"" -', use_quote_negated_terms: true });
    expect(empty.status).toBe(400);
    expect(empty.body.message).toMatch(/Query cannot be empty/);
  });
});

describe('autocomplete', () => {
  it('completes the word being typed and requires the query words', async () => {
    const res = await ds.post('/api/chunk/autocomplete', { search_type: 'bm25', query: 'heart prot', page_size: 50 });
    expect(res.status, res.text).toBe(200);
    expect(res.body.chunks.length).toBeGreaterThan(0);
    for (const id of idsOf(res)) {
      const text = chunks.find((c) => c.id === id)!.text.toLowerCase();
      expect(text).toMatch(/\bheart\b/);
      expect(text).toMatch(/\bprot\w*/);
    }
    const allMatching = chunks.filter((c) => /\bheart\b/i.test(c.text) && /\bprot\w*/i.test(c.text));
    expect(res.body.chunks.length).toBe(Math.min(50, allMatching.length));
  });

  it('extend_results appends other matches after the completions', async () => {
    const strict = await ds.post('/api/chunk/autocomplete', { search_type: 'bm25', query: 'heart prot', page_size: 200 });
    const extended = await ds.post('/api/chunk/autocomplete', { search_type: 'bm25', query: 'heart prot', page_size: 200, extend_results: true });
    expect(extended.status, extended.text).toBe(200);
    const n = strict.body.chunks.length;
    expect(idsOf(extended).slice(0, n)).toEqual(idsOf(strict));
    expect(extended.body.chunks.length).toBeGreaterThan(n);
    expect(new Set(idsOf(extended)).size).toBe(extended.body.chunks.length);
  });
});

describe('sort_options', () => {
  it('sort_by a field orders the prefetched matches by it', async () => {
    const res = await bm25({ query: 'gene', sort_options: { sort_by: { field: 'num_value', direction: 'asc' } }, page_size: 30 });
    expect(res.status, res.text).toBe(200);
    const matches = bruteForceBm25(chunks, 'gene', null).map((h) => chunks.find((c) => c.id === h.id)!);
    const expected = matches
      .filter((c) => c.numValue !== null)
      .sort((a, b) => a.numValue! - b.numValue!)
      .slice(0, 30)
      .map((c) => c.numValue);
    expect(res.body.chunks.map((x: any) => x.chunk.num_value)).toEqual(expected);
  });

  it('sort_by rerank_type re-scores the prefetched candidates with another search type', async () => {
    // use_weights off: sort options otherwise multiply by chunk weights (the reference's default).
    const res = await bm25({ query: 'quick fox trial', sort_options: { use_weights: false, sort_by: { rerank_type: 'fulltext', prefetch_amount: 50 } }, page_size: 10 });
    expect(res.status, res.text).toBe(200);
    // The candidates are the bm25 top 50 as served (brute force ties at the cut may order differently).
    const candidates = new Set(idsOf(await bm25({ query: 'quick fox trial', page_size: 50 })));
    expect(candidates.size).toBe(50);
    const expected = bruteForceBm25(chunks, 'quick fox trial', null, 0.9, 0.4, true).filter((h) => candidates.has(h.id)).slice(0, 10);
    expectScores(scored(res), expected, 'fulltext re-scoring of the bm25 top 50');
  });

  it('applies weights, recency, location and tag weights to the page as the reference formulas say', async () => {
    const base = await bm25({ query: 'cancer dose', page_size: 15 });
    const page = base.body.chunks.map((x: any) => ({ id: x.chunk.id, score: x.score, c: x.chunk }));
    const norm = (xs: number[]) => {
      const lo = Math.min(...xs);
      const hi = Math.max(...xs);
      return (v: number) => (hi > lo ? (v - lo) / (hi - lo) : 1);
    };
    // use_weights (default true with sort_options) then recency_bias 0.5.
    const w = page.map((p: any) => ({ ...p, score: p.c.weight !== 0 ? p.score * p.c.weight : p.score }));
    const ns = norm(w.map((p: any) => p.score));
    const stamps = w.filter((p: any) => p.c.time_stamp).map((p: any) => Date.parse(`${p.c.time_stamp}Z`));
    const nt = norm(stamps);
    const recency = w
      .map((p: any) => ({ id: p.id, score: ns(p.score) / 0.5 + 0.5 * (p.c.time_stamp ? nt(Date.parse(`${p.c.time_stamp}Z`)) : 0) }))
      .sort((a: any, b: any) => b.score - a.score);
    const got = await bm25({ query: 'cancer dose', page_size: 15, sort_options: { recency_bias: 0.5 } });
    expect(got.status, got.text).toBe(200);
    expectScores(scored(got), recency, 'weights + recency');

    const tagged = page
      .map((p: any) => ({ id: p.id, score: p.score * (p.c.tag_set.includes('red') ? 3 : 1) * (p.c.tag_set.includes('blue') ? 0.5 : 1) }))
      .sort((a: any, b: any) => b.score - a.score);
    const tw = await bm25({ query: 'cancer dose', page_size: 15, sort_options: { use_weights: false, tag_weights: { red: 3, blue: 0.5 } } });
    expectScores(scored(tw), tagged, 'tag weights');

    const km = (a: { lat: number; lon: number }, b: { lat: number; lon: number }) => {
      const r = Math.PI / 180;
      const h = Math.sin(((b.lat - a.lat) * r) / 2) ** 2 + Math.cos(a.lat * r) * Math.cos(b.lat * r) * Math.sin(((b.lon - a.lon) * r) / 2) ** 2;
      return 2 * 6371.0088 * Math.asin(Math.sqrt(h));
    };
    const center = { lat: 45, lon: 0 };
    const nsr = norm(page.map((p: any) => p.score));
    const dists = page.filter((p: any) => p.c.location).map((p: any) => km(center, p.c.location));
    const nd = norm(dists);
    const located = page
      .map((p: any) => ({ id: p.id, score: 0.7 * nsr(p.score) + 0.3 * (1 - (p.c.location ? nd(km(center, p.c.location)) : 1)) }))
      .sort((a: any, b: any) => b.score - a.score);
    const lb = await bm25({ query: 'cancer dose', page_size: 15, sort_options: { use_weights: false, location_bias: { location: center, bias: 0.3 } } });
    expectScores(scored(lb), located, 'location bias');
  });

  it('folds the legacy flat keys into sort options', async () => {
    const nested = await bm25({ query: 'brain', sort_options: { tag_weights: { green: 4 } } });
    const flat = await bm25({ query: 'brain', tag_weights: { green: 4 } });
    expect(scored(flat)).toEqual(scored(nested));
    expect(scored(flat)).not.toEqual(scored(await bm25({ query: 'brain' })));
  });
});

describe('scoring_options', () => {
  it('fulltext_boost multiplies the phrase words weight in the query', async () => {
    const plain = await bm25({ query: 'mice virus', page_size: 50 });
    const boosted = await bm25({ query: 'mice virus', page_size: 50, scoring_options: { fulltext_boost: { phrase: 'virus', boost_factor: 4 } } });
    expect(boosted.status, boosted.text).toBe(200);
    const withVirus = (id: string) => analyzer.analyze(chunks.find((c) => c.id === id)!.text).includes('viru');
    const p = new Map<string, number>(scored(plain).map((x: any) => [x.id as string, x.score as number]));
    for (const b of scored(boosted)) {
      if (!p.has(b.id)) continue;
      if (withVirus(b.id)) expect(b.score).toBeGreaterThan(p.get(b.id)!);
      else expect(b.score).toBeCloseTo(p.get(b.id)!, 9);
    }
  });
});

describe('highlights in responses', () => {
  it('marks the query in chunk_html and lists the highlights only when asked', async () => {
    const res = await bm25({ query: 'vaccine', highlight_options: { highlight_results: true }, page_size: 5 });
    expect(res.status, res.text).toBe(200);
    for (const x of res.body.chunks) {
      expect(x.chunk.chunk_html).toMatch(/<mark><b>vaccine<\/b><\/mark>/i);
      expect(x.highlights.map((h: string) => h.toLowerCase())).toContain('vaccine');
    }
    const none = await bm25({ query: 'vaccine', page_size: 5 });
    expect(none.body.chunks.every((x: any) => x.highlights === null && !x.chunk.chunk_html.includes('<mark>'))).toBe(true);
    const slim = await bm25({ query: 'vaccine', page_size: 5, slim_chunks: true, highlight_options: {} });
    expect(slim.body.chunks.every((x: any) => x.highlights === null && x.chunk.chunk_html === undefined)).toBe(true);
    const tags = await bm25({ query: 'vaccine', page_size: 5, highlight_options: { pre_tag: '<em>', post_tag: '</em>' } });
    expect(tags.body.chunks[0].chunk.chunk_html).toMatch(/<em>vaccine<\/em>/i);
  });
});

describe('typo correction', () => {
  const typo = (query: string, typo_options: Record<string, unknown> = { correct_typos: true }) => bm25({ query, typo_options });

  it('corrects misspelled words to dataset words and searches with the correction', async () => {
    const res = await typo('protien vacine');
    expect(res.status, res.text).toBe(200);
    expect(res.body.corrected_query).toBe('protein vaccine');
    expect(scored(res)).toEqual(scored(await bm25({ query: 'protein vaccine' })));
  });

  it('leaves correct, English, disabled and out-of-range words alone (corrected_query null)', async () => {
    expect((await typo('protein vaccine')).body.corrected_query).toBeNull();
    // "runing" is English by the dictionary's rules (run + ing), never corrected.
    expect((await typo('runing')).body.corrected_query).toBeNull();
    expect((await typo('protien', { correct_typos: true, disable_on_word: ['Protien'] })).body.corrected_query).toBeNull();
    // 4 letters: outside the default 5-8 ranges.
    expect((await typo('gnee')).body.corrected_query).toBeNull();
    expect((await typo('gnee', { correct_typos: true, one_typo_word_range: { min: 3, max: 8 }, two_typo_word_range: { min: 3 } })).body.corrected_query).toBe('gene');
    expect((await typo('protien', { correct_typos: false })).body.corrected_query).toBeNull();
    expect((await bm25({ query: 'protien' })).body.corrected_query).toBeNull();
  });

  it('quotes and requires a dataset word that is not English when prioritize_domain_specifc_words', async () => {
    expect((await ds.post('/api/chunk', { tracking_id: 'domain', chunk_html: 'quarrybase vaccine notes' })).status).toBe(200);
    const res = await typo('quarrybase vacine');
    expect(res.body.corrected_query).toBe('"quarrybase" vaccine');
    expect(idsOf(res).length).toBe(1);
    const loose = await typo('quarrybase vacine', { correct_typos: true, prioritize_domain_specifc_words: false });
    expect(loose.body.corrected_query).toBe('quarrybase vaccine');
    expect(idsOf(loose).length).toBeGreaterThan(1);
    expect((await ds.del('/api/chunk/tracking_id/domain')).status).toBe(204);
  });

  it('keeps the vocabulary through a core restart and keeps counting writes', async () => {
    await stack.kill('core', 'SIGTERM');
    await stack.start('core');
    expect((await typo('protien vacine')).body.corrected_query).toBe('protein vaccine');
    expect((await ds.post('/api/chunk', { tracking_id: 'domain2', chunk_html: 'quarrytwo vaccine notes' })).status).toBe(200);
    expect((await typo('quarrytwo vacine')).body.corrected_query).toBe('"quarrytwo" vaccine');
    expect((await ds.del('/api/chunk/tracking_id/domain2')).status).toBe(204);
    // Gone from the vocabulary with its chunk: no longer a dataset word, so not quoted (and not English).
    expect((await typo('quarrytwo vacine')).body.corrected_query).toBe('quarrytwo vaccine');
  }, 60_000);

  it('rejects bad typo options with a 400 naming the field', async () => {
    const res = await typo('x', { correct_typos: true, one_typo_word_range: { min: 9, max: 2 } });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/one_typo_word_range/);
  });
});
