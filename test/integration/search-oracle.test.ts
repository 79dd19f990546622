/**
 * The core's bm25 results (ids and scores), counts and scrolls equal brute force computed straight
 * from the store, on a random corpus with updates and deletes and random filters of every kind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../helpers/api.js';
import { createTenant } from '../helpers/fixtures.js';
import { randomChunks, randomFilter, randomQuery, rng } from '../helpers/random-corpus.js';
import { bruteForceBm25, filterHolds, loadChunks, type OracleChunk } from '../helpers/search-oracle.js';
import { startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
let ds: Client;
let datasetId: string;
let chunks: OracleChunk[];

/** Asserts ranked lists agree: scores within 1e-9 relative, ids wherever the score order is strict. */
function expectSameRanking(actual: { id: string; score: number }[], expected: { id: string; score: number }[], what: string): void {
  expect(actual.length, `${what}: result count`).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) {
    expect(Math.abs(actual[i]!.score - expected[i]!.score), `${what}: score at ${i}`).toBeLessThanOrEqual(1e-9 * Math.max(1, expected[i]!.score));
  }
  // Ids must match exactly where the expected scores are not tied within float noise.
  const tied = (i: number) =>
    (i > 0 && Math.abs(expected[i]!.score - expected[i - 1]!.score) < 1e-9) ||
    (i + 1 < expected.length && Math.abs(expected[i]!.score - expected[i + 1]!.score) < 1e-9);
  for (let i = 0; i < expected.length; i++) if (!tied(i)) expect(actual[i]!.id, `${what}: id at ${i}`).toBe(expected[i]!.id);
  expect(new Set(actual.map((x) => x.id))).toEqual(new Set(expected.map((x) => x.id)));
}

beforeAll(async () => {
  stack = await startStack();
  const tenant = await createTenant(stack);
  ds = tenant.ds;
  datasetId = tenant.datasetId;
  const payloads = randomChunks(400, 7);
  for (let i = 0; i < payloads.length; i += 100) {
    const res = await ds.post('/api/chunk', payloads.slice(i, i + 100));
    expect(res.status, res.text).toBe(200);
  }
  // Updates and deletes after ingest: the index must follow the store, not the first version.
  const r = rng(99);
  for (let i = 0; i < 40; i++) {
    const tid = `doc-${Math.floor(r() * 400)}`;
    const res = await ds.put('/api/chunk', { tracking_id: tid, chunk_html: `fox ${randomQuery(r)} quick`, tag_set: ['red'], num_value: 42 });
    expect([204, 404]).toContain(res.status);
  }
  for (let i = 0; i < 30; i++) await ds.del(`/api/chunk/tracking_id/doc-${Math.floor(r() * 400)}`);
  chunks = await loadChunks(stack, datasetId);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe('bm25 search against brute force from the store', () => {
  it('ranks exactly as exhaustive BM25 over the stored chunks, with and without random filters', async () => {
    const r = rng(2024);
    const ids = chunks.map((c) => c.id);
    let withResults = 0;
    for (let q = 0; q < 80; q++) {
      const query = randomQuery(r);
      const filters = q % 4 === 0 ? undefined : randomFilter(r, ids);
      const res = await ds.post('/api/chunk/search', { query, search_type: 'bm25', filters, page_size: 25, get_total_pages: true });
      expect(res.status, res.text).toBe(200);
      const expected = bruteForceBm25(chunks, query, filters);
      const actual = res.body.chunks.map((x: any) => ({ id: x.chunk.id, score: x.score }));
      expectSameRanking(actual, expected.slice(0, 25), `query "${query}" filters ${JSON.stringify(filters)}`);
      expect(res.body.total_pages).toBe(Math.ceil(expected.length / 25));
      if (expected.length > 0) withResults++;
    }
    expect(withResults).toBeGreaterThan(30);
  });

  it('fulltext ranks exactly as BM25 plus proximity pairs over the stored chunks, with content filters', async () => {
    const r = rng(77);
    const ids = chunks.map((c) => c.id);
    let withResults = 0;
    for (let q = 0; q < 40; q++) {
      const query = randomQuery(r);
      const base = q % 3 === 0 ? undefined : randomFilter(r, ids);
      const word = query.split(' ')[0]!;
      const filters = q % 5 === 1 ? { must_not: [{ field: 'content', match_any: [word] }] } : q % 5 === 2 ? { ...(base ?? {}), must: [...((base as any)?.must ?? []), { field: 'content', match_all: [word] }] } : base;
      const res = await ds.post('/api/chunk/search', { query, search_type: 'fulltext', filters, page_size: 25 });
      expect(res.status, res.text).toBe(200);
      const expected = bruteForceBm25(chunks, query, filters, 0.9, 0.4, true);
      const actual = res.body.chunks.map((x: any) => ({ id: x.chunk.id, score: x.score }));
      expectSameRanking(actual, expected.slice(0, 25), `fulltext "${query}" filters ${JSON.stringify(filters)}`);
      const count = await ds.post('/api/chunk/count', { query, search_type: 'fulltext', filters });
      expect(count.body.count).toBe(expected.length);
      if (expected.length > 0) withResults++;
    }
    expect(withResults).toBeGreaterThan(15);
  });

  it('a repeated query follows writes in between (no stale corpus statistics)', async () => {
    const query = 'gamma delta';
    const first = await ds.post('/api/chunk/search', { query, search_type: 'bm25', page_size: 10 });
    expectSameRanking(first.body.chunks.map((x: any) => ({ id: x.chunk.id, score: x.score })), bruteForceBm25(chunks, query, null).slice(0, 10), 'before');
    const added = await ds.post('/api/chunk', [{ tracking_id: 'stats-probe', chunk_html: 'gamma gamma delta probe' }]);
    expect(added.status, added.text).toBe(200);
    try {
      const now = await loadChunks(stack, datasetId);
      const again = await ds.post('/api/chunk/search', { query, search_type: 'bm25', page_size: 10 });
      expectSameRanking(again.body.chunks.map((x: any) => ({ id: x.chunk.id, score: x.score })), bruteForceBm25(now, query, null).slice(0, 10), 'after a write');
    } finally {
      expect((await ds.del('/api/chunk/tracking_id/stats-probe')).status).toBe(204);
    }
    const back = await ds.post('/api/chunk/search', { query, search_type: 'bm25', page_size: 10 });
    expect(back.body.chunks.map((x: any) => x.score)).toEqual(first.body.chunks.map((x: any) => x.score));
  });

  it('pages through results without gaps or repeats', async () => {
    const query = 'fox quick protein';
    const expected = bruteForceBm25(chunks, query, null);
    expect(expected.length).toBeGreaterThan(30);
    const seen: { id: string; score: number }[] = [];
    for (let page = 1; page <= Math.ceil(expected.length / 7); page++) {
      const res = await ds.post('/api/chunk/search', { query, search_type: 'bm25', page, page_size: 7 });
      seen.push(...res.body.chunks.map((x: any) => ({ id: x.chunk.id, score: x.score })));
    }
    expectSameRanking(seen, expected, 'paged');
  });

  it('applies score_threshold before paging', async () => {
    const query = 'gene trial';
    const all = bruteForceBm25(chunks, query, null);
    const threshold = all[Math.floor(all.length / 2)]!.score;
    const res = await ds.post('/api/chunk/search', { query, search_type: 'bm25', score_threshold: threshold, page_size: 1000 });
    expectSameRanking(
      res.body.chunks.map((x: any) => ({ id: x.chunk.id, score: x.score })),
      all.filter((x) => x.score >= threshold),
      'threshold',
    );
  });

  it('counts exactly the matching chunks', async () => {
    const r = rng(5);
    for (let q = 0; q < 15; q++) {
      const query = randomQuery(r);
      const filters = randomFilter(r, chunks.map((c) => c.id));
      const res = await ds.post('/api/chunk/count', { query, search_type: 'bm25', filters });
      expect(res.status, res.text).toBe(200);
      expect(res.body.count, `${query} ${JSON.stringify(filters)}`).toBe(bruteForceBm25(chunks, query, filters).length);
    }
  });

  it('scrolls every filtered chunk in id order, page by page', async () => {
    const r = rng(11);
    for (let q = 0; q < 10; q++) {
      const filters = q === 0 ? undefined : randomFilter(r, chunks.map((c) => c.id));
      const expected = chunks.filter((c) => filterHolds(c, filters)).map((c) => c.id).sort();
      const got: string[] = [];
      let offset: string | undefined;
      for (;;) {
        const res = await ds.post('/api/chunks/scroll', { filters, page_size: 37, offset_chunk_id: offset });
        expect(res.status, res.text).toBe(200);
        const page = res.body.chunks.map((c: any) => c.id);
        // offset_chunk_id is inclusive (the spec): the page starts at it; the next one is returned.
        got.push(...page);
        if (res.body.next_offset_chunk_id === null) break;
        offset = res.body.next_offset_chunk_id;
      }
      expect(got, JSON.stringify(filters)).toEqual(expected);
    }
  });

  it('rebuilds the index when the dataset changes BM25_K / BM25_B, and scores with the new values', async () => {
    const org = (await ds.get(`/api/dataset/${datasetId}`)).body.organization_id;
    const put = await ds.with({ 'tr-organization': org }).put('/api/dataset', { dataset_id: datasetId, server_configuration: { BM25_K: 1.5, BM25_B: 0.75 } });
    expect(put.status, put.text).toBe(200);
    const query = 'protein gene cells';
    const res = await ds.post('/api/chunk/search', { query, search_type: 'bm25', page_size: 20 });
    expect(res.status, res.text).toBe(200);
    expectSameRanking(
      res.body.chunks.map((x: any) => ({ id: x.chunk.id, score: x.score })),
      bruteForceBm25(chunks, query, null, 1.5, 0.75).slice(0, 20),
      'k1 1.5 b 0.75',
    );
    expect((await ds.with({ 'tr-organization': org }).put('/api/dataset', { dataset_id: datasetId, server_configuration: { BM25_K: 0.9, BM25_B: 0.4 } })).status).toBe(200);
    const back = await ds.post('/api/chunk/search', { query, search_type: 'bm25', page_size: 20 });
    expectSameRanking(back.body.chunks.map((x: any) => ({ id: x.chunk.id, score: x.score })), bruteForceBm25(chunks, query, null).slice(0, 20), 'back to defaults');
  });

  it('scrolls sorted by a field, excluding seen ids with must_not', async () => {
    const expected = chunks
      .filter((c) => c.numValue !== null)
      .sort((a, b) => b.numValue! - a.numValue! || (a.id < b.id ? -1 : 1))
      .map((c) => c.id);
    const got: string[] = [];
    while (got.length < 60) {
      const res = await ds.post('/api/chunks/scroll', {
        page_size: 20,
        sort_by: { field: 'num_value', direction: 'desc' },
        filters: got.length ? { must_not: [{ ids: got }] } : undefined,
      });
      expect(res.status, res.text).toBe(200);
      got.push(...res.body.chunks.map((c: any) => c.id));
    }
    expect(got).toEqual(expected.slice(0, 60));
  });
});
