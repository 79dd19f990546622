/**
 * POST /api/chunk_group/search and POST /api/chunk_group/group_oriented_search end to end:
 * search within a group returns only its members and equals a chunk search with the group filter
 * (and exhaustive BM25); group-oriented search equals a brute-force grouping of the exhaustive
 * BM25 ranking (a chunk in several groups counts in each, groups by their best chunk, pages,
 * group_size, total pages); shapes per API version; 400/404 cases.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../helpers/api.js';
import { createTenant } from '../helpers/fixtures.js';
import { randomChunks, randomFilter, rng } from '../helpers/random-corpus.js';
import { bruteForceBm25, loadChunks, type OracleChunk } from '../helpers/search-oracle.js';
import { startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
let ds: Client;
let datasetId: string;
let chunks: OracleChunk[];
let byId: Map<string, OracleChunk>;
/** Group id by tracking id. */
const groupIds = new Map<string, string>();

const GROUPS = 15;
const QUERIES = ['fox quick', 'gene trial dose', 'protein', 'cancer cells mice', 'heart brain virus vaccine', 'running runner study'];

type Scored = { id: string; score: number };
const scored = (list: any[]): Scored[] => list.map((x) => ({ id: (x.chunk ?? x.metadata[0]).id as string, score: x.score as number }));

/** Asserts scores equal in order (ids may differ only among tied scores) and each id has its true score. */
function expectRanking(actual: Scored[], expected: Scored[], truth: Map<string, number>, what: string): void {
  expect(actual.map((a) => a.score), what).toEqual(expected.map((e) => expect.closeTo(e.score, 9)));
  for (const a of actual) expect(truth.get(a.id), `${what}: ${a.id}`).toBeCloseTo(a.score, 9);
}

/** Groups of a ranking in rank order, each with its best `perGroup` chunks. */
function bruteForceGroups(ranking: Scored[], perGroup: number): { id: string; hits: Scored[] }[] {
  const all = new Map<string, Scored[]>();
  for (const r of ranking) {
    for (const g of byId.get(r.id)!.groupIds) {
      if (!all.has(g)) all.set(g, []);
      const list = all.get(g)!;
      if (list.length < perGroup) list.push(r);
    }
  }
  return [...all.entries()].map(([id, hits]) => ({ id, hits }));
}

beforeAll(async () => {
  stack = await startStack();
  const tenant = await createTenant(stack);
  ds = tenant.ds;
  datasetId = tenant.datasetId;
  // Groups sg-0..sg-14 of uneven sizes; every sixth chunk in two groups, every eleventh in none.
  const r = rng(77);
  const skewed = () => `sg-${Math.floor(GROUPS * r() * r())}`;
  const payloads = randomChunks(240, 5).map((p, i) => ({
    ...p,
    group_tracking_ids: i % 11 === 0 ? [] : i % 6 === 0 ? [...new Set([skewed(), skewed()])] : [skewed()],
  }));
  for (let i = 0; i < payloads.length; i += 120) {
    const res = await ds.post('/api/chunk', payloads.slice(i, i + 120));
    expect(res.status, res.text).toBe(200);
  }
  chunks = await loadChunks(stack, datasetId);
  byId = new Map(chunks.map((c) => [c.id, c]));
  for (let g = 0; g < GROUPS; g++) {
    const res = await ds.get(`/api/chunk_group/tracking_id/sg-${g}`);
    if (res.status === 200) groupIds.set(`sg-${g}`, res.body.id);
  }
  expect(groupIds.size).toBeGreaterThan(8);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe('search within a group', () => {
  it('returns only the group\'s members and equals a chunk search with the group filter and exhaustive BM25', async () => {
    const r = rng(12);
    let nonEmpty = 0;
    for (const [k, query] of QUERIES.entries()) {
      const tid = `sg-${k % GROUPS}`;
      const gid = groupIds.get(tid)!;
      const filters = k % 2 === 0 ? undefined : randomFilter(r, chunks.map((c) => c.id));
      const ref = k % 3 === 0 ? { group_tracking_id: tid } : { group_id: gid };
      const body = { query, search_type: k % 4 === 3 ? 'fulltext' : 'bm25', page_size: 7, get_total_pages: true, filters };
      const res = await ds.post('/api/chunk_group/search', { ...body, ...ref });
      expect(res.status, res.text).toBe(200);
      expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
      for (const x of res.body.chunks) expect(byId.get(x.chunk.id)!.groupIds, query).toContain(gid);
      const groupFilter = { ...(filters ?? {}), must: [...((filters?.must as unknown[]) ?? []), { field: 'group_ids', match_any: [gid] }] };
      const plain = await ds.post('/api/chunk/search', { ...body, filters: groupFilter });
      expect(plain.status, plain.text).toBe(200);
      expect(scored(res.body.chunks)).toEqual(scored(plain.body.chunks));
      expect(res.body.total_pages).toBe(plain.body.total_pages);
      const all = bruteForceBm25(chunks, query, groupFilter, 0.9, 0.4, body.search_type === 'fulltext');
      expectRanking(scored(res.body.chunks), all.slice(0, 7), new Map(all.map((h) => [h.id, h.score])), `${query} in ${tid}`);
      expect(res.body.total_pages).toBe(Math.ceil(all.length / 7));
      if (all.length > 0) nonEmpty++;
    }
    expect(nonEmpty).toBeGreaterThan(2);
  });

  it('pages, and answers V1 with bookmarks and the group', async () => {
    const tid = 'sg-1';
    const body = { query: 'gene protein fox', search_type: 'bm25', group_tracking_id: tid, page_size: 3 };
    const one = await ds.post('/api/chunk_group/search', { ...body, page: 1 });
    const two = await ds.post('/api/chunk_group/search', { ...body, page: 2 });
    const both = await ds.post('/api/chunk_group/search', { ...body, page_size: 6 });
    expect([...scored(one.body.chunks), ...scored(two.body.chunks)].map((x) => x.score)).toEqual(scored(both.body.chunks).map((x) => x.score));
    const v1 = await ds.post('/api/chunk_group/search', body, { 'x-api-version': 'V1' });
    expect(v1.status, v1.text).toBe(200);
    expect(v1.body).toMatchObject({ group: { id: groupIds.get(tid), tracking_id: tid, file_id: null }, corrected_query: null, total_pages: 0 });
    expect(scored(v1.body.bookmarks)).toEqual(scored(one.body.chunks));
    expect(v1.body.bookmarks[0].metadata).toHaveLength(1);
  });
});

describe('group-oriented search', () => {
  it('equals a brute-force grouping of the exhaustive ranking, page by page, for several group sizes and filters', async () => {
    const r = rng(33);
    let compared = 0;
    for (const [k, query] of QUERIES.entries()) {
      const filters = k % 2 === 1 ? randomFilter(r, chunks.map((c) => c.id)) : undefined;
      const searchType = k === 2 ? 'fulltext' : 'bm25';
      const ranking = bruteForceBm25(chunks, query, filters, 0.9, 0.4, searchType === 'fulltext');
      const truth = new Map(ranking.map((h) => [h.id, h.score]));
      // A page of one group with many chunks makes the fetched prefix grow past its first length.
      for (const [pageSize, groupSize] of [[4, 3], [4, 1], [4, 5], [1, 8]] as const) {
        const expected = bruteForceGroups(ranking, groupSize);
        for (const page of [1, 2, 3]) {
          const res = await ds.post('/api/chunk_group/group_oriented_search', {
            query,
            search_type: searchType,
            filters,
            page,
            page_size: pageSize,
            group_size: groupSize,
            get_total_pages: true,
          });
          expect(res.status, res.text).toBe(200);
          const want = expected.slice((page - 1) * pageSize, page * pageSize);
          const got = res.body.results as any[];
          const what = `"${query}" page_size ${pageSize} group_size ${groupSize} page ${page}`;
          expect(res.body.total_pages, what).toBe(Math.ceil(expected.length / pageSize));
          expect(res.body.corrected_query).toBeNull();
          // Groups rank by their best chunk: the same best scores, page by page.
          expect(got.map((g) => g.chunks[0].score), what).toEqual(want.map((g) => expect.closeTo(g.hits[0]!.score, 9)));
          for (const g of got) {
            const oracle = expected.find((e) => e.id === g.group.id);
            expect(oracle, `${what}: group ${g.group.tracking_id}`).toBeDefined();
            expectRanking(scored(g.chunks), oracle!.hits, truth, `${what}: group ${g.group.tracking_id}`);
            for (const x of g.chunks) expect(byId.get(x.chunk.id)!.groupIds).toContain(g.group.id);
            expect(g.group).toMatchObject({ id: g.group.id, dataset_id: datasetId, tag_set: [] });
            expect(g.file_id).toBeNull();
          }
          compared += got.length;
        }
      }
    }
    expect(compared).toBeGreaterThan(50);
  });

  it('puts a chunk in every group it belongs to, defaults group_size to 3, shows no chunks with group_size 0', async () => {
    const query = 'fox quick gene protein cancer';
    const ranking = bruteForceBm25(chunks, query, null);
    const multi = ranking.find((h) => byId.get(h.id)!.groupIds.length > 1)!;
    expect(multi).toBeDefined();
    const res = await ds.post('/api/chunk_group/group_oriented_search', { query, search_type: 'bm25', page_size: 100 });
    expect(res.status, res.text).toBe(200);
    const holding = (res.body.results as any[]).filter((g) => g.chunks.some((x: any) => x.chunk.id === multi.id)).map((g) => g.group.id);
    const expectedHolding = bruteForceGroups(ranking, 3).filter((g) => g.hits.some((h) => h.id === multi.id)).map((g) => g.id);
    expect(holding.sort()).toEqual(expectedHolding.sort());
    expect(expectedHolding.length).toBeGreaterThan(0);
    expect(Math.max(...res.body.results.map((g: any) => g.chunks.length))).toBe(3);
    expect(res.body.total_pages).toBe(0);
    const empty = await ds.post('/api/chunk_group/group_oriented_search', { query, search_type: 'bm25', page_size: 5, group_size: 0 });
    expect(empty.body.results.map((g: any) => g.group.id)).toEqual(res.body.results.slice(0, 5).map((g: any) => g.group.id));
    expect(empty.body.results.every((g: any) => g.chunks.length === 0)).toBe(true);
  });

  it('answers V1 with group_chunks of GroupScoreChunk and total_chunk_pages', async () => {
    const body = { query: 'gene trial', search_type: 'bm25', page_size: 3, group_size: 2, get_total_pages: true, slim_chunks: true };
    const v2 = await ds.post('/api/chunk_group/group_oriented_search', body);
    const v1 = await ds.post('/api/chunk_group/group_oriented_search', body, { 'x-api-version': 'V1' });
    expect(v1.status, v1.text).toBe(200);
    expect(v1.body.total_chunk_pages).toBe(v2.body.total_pages);
    expect(v1.body.corrected_query).toBeNull();
    expect(v1.body.group_chunks.map((g: any) => g.group_id)).toEqual(v2.body.results.map((g: any) => g.group.id));
    const g = v1.body.group_chunks[0];
    expect(g).toMatchObject({ group_tracking_id: expect.stringMatching(/^sg-/), group_dataset_id: datasetId, group_tag_set: [], file_id: null });
    expect(typeof g.group_created_at).toBe('string');
    expect(g.metadata[0].metadata[0]).not.toHaveProperty('chunk_html');
    expect(scored(g.metadata)).toEqual(scored(v2.body.results[0].chunks));
  });

  it('corrects typos like the chunk search and reports corrected_query, in both group searches', async () => {
    const typo = { correct_typos: true };
    const over = await ds.post('/api/chunk_group/group_oriented_search', { query: 'protien vacine', search_type: 'bm25', typo_options: typo });
    expect(over.status, over.text).toBe(200);
    expect(over.body.corrected_query).toBe('protein vaccine');
    const plain = await ds.post('/api/chunk_group/group_oriented_search', { query: 'protein vaccine', search_type: 'bm25' });
    expect(over.body.results.map((g: any) => scored(g.chunks))).toEqual(plain.body.results.map((g: any) => scored(g.chunks)));
    expect(plain.body.corrected_query).toBeNull();
    const within = await ds.post('/api/chunk_group/search', { query: 'protien', search_type: 'bm25', group_tracking_id: 'sg-0', typo_options: typo });
    expect(within.status, within.text).toBe(200);
    expect(within.body.corrected_query).toBe('protein');
    const bad = await ds.post('/api/chunk_group/search', { query: 'x', search_type: 'bm25', group_tracking_id: 'sg-0', typo_options: { correct_typos: true, one_typo_word_range: { min: 9, max: 2 } } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/one_typo_word_range/);
  });

  it('highlights chunks inside groups when asked', async () => {
    const res = await ds.post('/api/chunk_group/group_oriented_search', { query: 'protein', search_type: 'bm25', page_size: 2, highlight_options: { highlight_results: true } });
    expect(res.status, res.text).toBe(200);
    const first = res.body.results[0].chunks[0];
    expect(first.highlights.join(' ')).toMatch(/protein/i);
    expect(first.chunk.chunk_html).toMatch(/<mark><b>protein<\/b><\/mark>/i);
  });
});

describe('bad group search requests', () => {
  it('400 naming the field, 404 for an unknown group, never 500', async () => {
    const bad: [string, unknown, RegExp, number?][] = [
      ['/api/chunk_group/search', { query: 'x', search_type: 'bm25' }, /group_id or group_tracking_id/],
      ['/api/chunk_group/search', { query: 'x', search_type: 'bm25', group_id: 'abc' }, /group_id/],
      ['/api/chunk_group/search', { query: 'x', group_tracking_id: 'sg-1' }, /search_type/],
      ['/api/chunk_group/search', { query: 'x', search_type: 'bm25', group_tracking_id: 'sg-1', page_size: 20_000 }, /page_size/],
      ['/api/chunk_group/search', { query: '  ', search_type: 'bm25', group_tracking_id: 'sg-1' }, /Query cannot be empty/],
      ['/api/chunk_group/search', { query: 'x', search_type: 'bm25', group_tracking_id: 'no-such-group' }, /no-such-group/, 404],
      ['/api/chunk_group/search', { query: 'x', search_type: 'bm25', group_id: '00000000-0000-4000-8000-000000000000' }, /00000000/, 404],
      ['/api/chunk_group/group_oriented_search', { query: 'x' }, /search_type/],
      ['/api/chunk_group/group_oriented_search', { query: 'x', search_type: 'bm25', group_size: -1 }, /group_size/],
      ['/api/chunk_group/group_oriented_search', { query: 'x', search_type: 'bm25', group_size: 'three' }, /group_size/],
      ['/api/chunk_group/group_oriented_search', { query: 'x', search_type: 'bm25', group_size: 1e6 }, /MAX_LIMIT/],
      ['/api/chunk_group/group_oriented_search', { query: 'x', search_type: 'bm25', page: 'two' }, /page/],
      ['/api/chunk_group/group_oriented_search', { query: 'x', search_type: 'bm25', filters: { must: [{ field: 'nope', match_any: ['x'] }] } }, /nope/],
    ];
    for (const [path, body, message, status] of bad) {
      const res = await ds.post(path, body);
      expect(res.status, `${path} ${JSON.stringify(body)} → ${res.text}`).toBe(status ?? 400);
      expect(res.body.message, JSON.stringify(body)).toMatch(message);
    }
  });
});
