/**
 * Every search feature reaches internal services through the core's one Search RPC: sort by a
 * field, post-ranking (weights, recency, tag weights), MMR, re-scoring by another search type
 * and by a cross-encoder, autocomplete, recommendations (chunks and groups), group-oriented and
 * within-group search. Each case sends the same request over HTTP and over gRPC (from this
 * process, to the core's port) and expects the same chunks in the same order with the same
 * scores, and checks that the feature did something (a sort sorts, MMR reorders, groups group).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectCore, type CoreClient, type SearchArgs } from '../../core/client/core-client.js';
import { client, type Client } from '../helpers/api.js';
import type { FakeEmbeddings } from '../helpers/fake-embeddings.js';
import { createTenant, startFakeEmbeddingSetup, type Tenant } from '../helpers/fixtures.js';
import { randomChunks } from '../helpers/random-corpus.js';
import { loadChunks, type OracleChunk } from '../helpers/search-oracle.js';
import type { Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/eventually.js';

let stack: Stack;
let fake: FakeEmbeddings;
let ds: Client;
let core: CoreClient;
let datasetId: string;
let chunks: OracleChunk[];
let byTracking: Map<string, OracleChunk>;

const GROUPS = 8;

beforeAll(async () => {
  let tenant: Tenant;
  ({ fake, stack, tenant, datasetId } = await startFakeEmbeddingSetup());
  ds = client(stack.baseUrl, { authorization: tenant.ownerKey, 'tr-dataset': datasetId, 'x-api-version': 'V2' });
  const set = await tenant.org.put('/api/dataset', { dataset_id: datasetId, server_configuration: { RERANKER_BASE_URL: fake.rerankUrl } });
  expect(set.status, set.text).toBe(200);
  const payloads = randomChunks(120, 77).map((p, i) => ({ ...p, weight: (i % 4) * 0.5, group_tracking_ids: i % 7 === 0 ? [] : [`pg-${i % GROUPS}`] }));
  const res = await ds.post('/api/chunk', payloads);
  expect(res.status, res.text).toBe(200);
  await eventually({ what: 'the embedding to finish', timeoutMs: 60_000, intervalMs: 200 }, async () => {
    const usage = await ds.get(`/api/dataset/usage/${datasetId}`);
    return usage.status === 200 && usage.body.chunks_pending_embedding === 0;
  });
  chunks = await loadChunks(stack, datasetId);
  byTracking = new Map(chunks.map((c) => [c.trackingId!, c]));
  core = connectCore(stack.env.QUARRY_CORE_ADDRESS!, 10_000);
}, 120_000);

afterAll(async () => {
  core?.close();
  await stack?.stop();
  await fake?.close();
});

type Hit = { id: string; score: number };

/** Hits of an HTTP V2 answer. */
const httpHits = (body: { chunks: { chunk: { id: string }; score: number }[] }): Hit[] => body.chunks.map((h) => ({ id: h.chunk.id, score: h.score }));
/** Hits of a gRPC answer. */
const grpcHits = (reply: { chunks: { chunk_id: string; score: number }[] }): Hit[] => reply.chunks.map((h) => ({ id: h.chunk_id, score: h.score }));

/** The same hits, scores equal to float precision (JSON and protobuf doubles both round-trip). */
function expectSame(http: Hit[], grpc: Hit[], what: string): void {
  expect(grpc.map((h) => h.id), what).toEqual(http.map((h) => h.id));
  grpc.forEach((h, i) => expect(h.score, `${what} #${i}`).toBeCloseTo(http[i]!.score, 9));
}

/** Runs one search both ways; returns the hits (equal both ways). */
async function both(body: Record<string, unknown>, args: Omit<SearchArgs, 'dataset_id'>, what: string, path = '/api/chunk/search'): Promise<Hit[]> {
  const res = await ds.post(path, body);
  expect(res.status, `${what}: ${res.text}`).toBe(200);
  const reply = await core.search({ dataset_id: datasetId, ...args });
  const http = httpHits(res.body);
  expectSame(http, grpcHits(reply), what);
  expect(http.length, what).toBeGreaterThan(0);
  return http;
}

const QUERY = 'protein cancer virus';

describe('the core Search RPC serves every search feature as the HTTP API does', () => {
  it('sort by a field: the page is ordered by that field', async () => {
    const hits = await both(
      { query: QUERY, search_type: 'bm25', page_size: 15, sort_options: { sort_by: { field: 'num_value', direction: 'asc', prefetch_amount: 200 } } },
      { search_type: 'bm25', query: QUERY, offset: 0, limit: 15, sort: { field_sort: { field: 'num_value', direction: 'asc', prefetch: 200 } } },
      'field sort',
    );
    const values = hits.map((h) => chunks.find((c) => c.id === h.id)!.numValue).filter((v): v is number => v !== null);
    expect(values).toEqual([...values].sort((a, b) => a - b));
  });

  it('weights, recency and tag weights post-rank the page', async () => {
    const plain = await both({ query: QUERY, search_type: 'bm25', page_size: 20 }, { search_type: 'bm25', query: QUERY, offset: 0, limit: 20 }, 'plain');
    const ranked = await both(
      { query: QUERY, search_type: 'bm25', page_size: 20, sort_options: { use_weights: true, recency_bias: 0.5, tag_weights: { red: 3, blue: 0.2 } } },
      { search_type: 'bm25', query: QUERY, offset: 0, limit: 20, sort: { recency_bias: 0.5, tag_weights: { red: 3, blue: 0.2 } } },
      'post-ranked',
    );
    expect(ranked.map((h) => h.score)).not.toEqual(plain.map((h) => h.score));
    const noWeights = await both(
      { query: QUERY, search_type: 'bm25', page_size: 20, sort_options: { use_weights: false } },
      { search_type: 'bm25', query: QUERY, offset: 0, limit: 20, sort: { ignore_weights: true } },
      'use_weights false',
    );
    expect(noWeights).toEqual(plain);
  });

  it('MMR diversifies a semantic page', async () => {
    const plain = await both({ query: QUERY, search_type: 'semantic', page_size: 10 }, { search_type: 'semantic', query: QUERY, offset: 0, limit: 10 }, 'semantic');
    const diverse = await both(
      { query: QUERY, search_type: 'semantic', page_size: 10, sort_options: { mmr: { use_mmr: true, mmr_lambda: 0.3 } } },
      { search_type: 'semantic', query: QUERY, offset: 0, limit: 10, sort: { mmr_lambda: { value: 0.3 } } },
      'mmr',
    );
    expect(diverse.map((h) => h.id)).not.toEqual(plain.map((h) => h.id));
  });

  it('re-scores a prefetch by another search type and by a cross-encoder', async () => {
    const bySemantic = await both(
      { query: QUERY, search_type: 'bm25', page_size: 10, sort_options: { sort_by: { rerank_type: 'semantic', prefetch_amount: 50 } } },
      { search_type: 'bm25', query: QUERY, offset: 0, limit: 10, sort: { rerank: { rerank_type: 'semantic', prefetch: 50 } } },
      'rerank by semantic',
    );
    expect(bySemantic.every((h) => h.score <= 1 + 1e-9)).toBe(true);
    const before = fake.reranked.length;
    await both(
      { query: QUERY, search_type: 'bm25', page_size: 10, sort_options: { sort_by: { rerank_type: 'cross_encoder', prefetch_amount: 30 } } },
      { search_type: 'bm25', query: QUERY, offset: 0, limit: 10, sort: { rerank: { rerank_type: 'cross_encoder', prefetch: 30 } } },
      'rerank by cross-encoder',
    );
    // Both calls went to the cross-encoder (it batches its inputs, so each may be several requests).
    expect(fake.reranked.length).toBeGreaterThanOrEqual(before + 2);
  });

  it('autocomplete completes the last word, and extends with plain results', async () => {
    const hits = await both(
      { query: 'protein vir', search_type: 'bm25', page_size: 10, extend_results: true },
      { search_type: 'bm25', query: 'protein vir', offset: 0, limit: 10, autocomplete: { extend_results: true } },
      'autocomplete',
      '/api/chunk/autocomplete',
    );
    expect(hits.length).toBe(10);
  });

  it('a content condition takes its last word as a prefix only when prefix_last_word says so (no "*" convention)', async () => {
    const search = (prefix: boolean) =>
      core.search({ dataset_id: datasetId, search_type: 'bm25', query: 'protein', offset: 0, limit: 120, filter: { must: [{ field: { field: 'content', match_all: [{ text: 'protein vir' }], prefix_last_word: prefix } }] } });
    const words = (c: OracleChunk) => c.text.toLowerCase().split(/[^\p{L}\p{N}]+/u);
    const expected = chunks.filter((c) => words(c).some((w) => w.startsWith('protein')) && words(c).some((w) => w.startsWith('vir'))).map((c) => c.id);
    expect(expected.length).toBeGreaterThan(0);
    expect(new Set((await search(true)).chunks.map((h) => h.chunk_id))).toEqual(new Set(expected));
    // Off, "vir" is a word of its own (no document has it), and a "*" in a value is punctuation.
    expect((await search(false)).chunks).toEqual([]);
    const starred = await ds.post('/api/chunk/search', { query: 'protein', search_type: 'bm25', page_size: 100, filters: { must: [{ field: 'content', match_all: ['protein vir*'] }] } });
    expect(starred.status, starred.text).toBe(200);
    expect(starred.body.chunks).toEqual([]);
    const misplaced = await core
      .search({ dataset_id: datasetId, search_type: 'bm25', query: 'protein', offset: 0, limit: 5, filter: { must: [{ field: { field: 'tag_set', match_any: [{ text: 'a' }], prefix_last_word: true } }] } })
      .catch((e: { httpStatus: number; message: string }) => e);
    expect((misplaced as { httpStatus: number }).httpStatus).toBe(400);
    expect((misplaced as { message: string }).message).toMatch(/prefix_last_word applies only to field "content"/);
  });

  it('recommends chunks (average_vector, best_score, bm25) like the HTTP API', async () => {
    const pos = ['doc-3', 'doc-17'].map((t) => byTracking.get(t)!.id);
    const neg = [byTracking.get('doc-40')!.id];
    for (const [strategy, type] of [['average_vector', 'semantic'], ['best_score', 'semantic'], ['average_vector', 'bm25']] as const) {
      const res = await ds.post('/api/chunk/recommend', { positive_chunk_ids: pos, negative_chunk_ids: neg, strategy, recommend_type: type, limit: 12 });
      expect(res.status, res.text).toBe(200);
      const reply = await core.search({
        dataset_id: datasetId,
        search_type: type,
        query: '',
        offset: 0,
        limit: 12,
        recommend: { positive_chunk_ids: pos, negative_chunk_ids: neg, strategy },
      });
      expectSame(httpHits(res.body), grpcHits(reply), `${strategy} ${type}`);
      expect(reply.chunks.length).toBe(12);
      expect(reply.chunks.map((c) => c.chunk_id)).not.toContain(pos[0]);
    }
  });

  it('searches over groups and within one group', async () => {
    const res = await ds.post('/api/chunk_group/group_oriented_search', { query: QUERY, search_type: 'bm25', page_size: 4, group_size: 3, get_total_pages: true });
    expect(res.status, res.text).toBe(200);
    const reply = await core.search({
      dataset_id: datasetId,
      search_type: 'bm25',
      query: QUERY,
      offset: 0,
      limit: 4,
      group_by: { group_size: 3, count_groups: true },
    });
    const http = res.body.results as { group: { id: string }; chunks: { chunk: { id: string }; score: number }[] }[];
    expect(reply.groups.map((g) => g.group_id)).toEqual(http.map((g) => g.group.id));
    reply.groups.forEach((g, i) => expectSame(httpHits(http[i]!), grpcHits(g), `group ${i}`));
    expect(reply.groups).toHaveLength(4);
    expect(reply.groups.every((g) => g.chunks.length <= 3 && g.chunks.length > 0)).toBe(true);
    expect(res.body.total_pages).toBe(Math.ceil(reply.total_groups / 4));

    const groupId = http[0]!.group.id;
    const within = await both(
      { query: QUERY, search_type: 'bm25', page_size: 10, group_id: groupId },
      { search_type: 'bm25', query: QUERY, offset: 0, limit: 10, within_group: { id: groupId } },
      'within group',
      '/api/chunk_group/search',
    );
    const members = new Set(chunks.filter((c) => c.groupIds.includes(groupId)).map((c) => c.id));
    expect(within.every((h) => members.has(h.id))).toBe(true);
  });

  it('scopes every call to the dataset it names: ids of another dataset find nothing there', async () => {
    const other = await createTenant(stack);
    const made = await other.ds.post('/api/chunk', [{ chunk_html: 'protein cancer virus elsewhere', tracking_id: 'theirs', group_tracking_ids: ['their-group'] }]);
    expect(made.status, made.text).toBe(200);
    const theirChunk = (made.body.chunk_metadata as { id: string }[])[0]!.id;
    const theirGroup = await other.ds.get('/api/chunk_group/tracking_id/their-group');
    expect(theirGroup.status, theirGroup.text).toBe(200);
    const status = (p: Promise<unknown>) => p.then(() => 200, (e: { httpStatus: number }) => e.httpStatus);
    const base = { dataset_id: datasetId, search_type: 'bm25', query: QUERY, offset: 0, limit: 10 };
    // Their chunk as an example, their group as the search's group, in this dataset: not found.
    expect(await status(core.search({ ...base, search_type: 'semantic', query: '', recommend: { positive_chunk_ids: [theirChunk] } }))).toBe(404);
    expect(await status(core.search({ ...base, within_group: { id: theirGroup.body.id as string } }))).toBe(404);
    expect(await status(core.search({ ...base, recommend: { positive_group_tracking_ids: ['their-group'] } }))).toBe(404);
    // Filters naming their ids match nothing here; the same filter on their dataset finds it.
    const hasTheirs = { must: [{ has_id: { ids: [theirChunk], tracking_ids: [] } }], must_not: [], should: [] };
    expect((await core.search({ ...base, filter: hasTheirs })).chunks).toEqual([]);
    const inTheirGroup = { must: [{ field: { field: 'group_tracking_ids', match_any: [{ text: 'their-group' }] } }], must_not: [], should: [] };
    expect((await core.search({ ...base, filter: inTheirGroup })).chunks).toEqual([]);
    const there = await core.search({ ...base, dataset_id: other.datasetId, filter: hasTheirs });
    expect(there.chunks.map((c) => c.chunk_id)).toEqual([theirChunk]);
    // And the other way round: our example chunks do not exist in their dataset.
    expect(await status(core.search({ ...base, dataset_id: other.datasetId, recommend: { positive_chunk_ids: [chunks[0]!.id] } }))).toBe(404);
  });

  it('answers 404 and 400 over gRPC as over HTTP', async () => {
    const missing = await core.search({ dataset_id: datasetId, search_type: 'bm25', query: QUERY, offset: 0, limit: 5, within_group: { id: '00000000-0000-4000-8000-000000000000' } }).catch((e: { httpStatus: number; message: string }) => e);
    expect((missing as { httpStatus: number }).httpStatus).toBe(404);
    const badSort = await core.search({ dataset_id: datasetId, search_type: 'bm25', query: QUERY, offset: 0, limit: 5, sort: { field_sort: { field: 'colour' } } }).catch((e: { httpStatus: number }) => e);
    expect((badSort as { httpStatus: number }).httpStatus).toBe(400);
    const badLambda = await core.search({ dataset_id: datasetId, search_type: 'bm25', query: QUERY, offset: 0, limit: 5, sort: { mmr_lambda: { value: 2 } } }).catch((e: { httpStatus: number }) => e);
    expect((badLambda as { httpStatus: number }).httpStatus).toBe(400);
    const badExample = await core
      .search({ dataset_id: datasetId, search_type: 'semantic', query: '', offset: 0, limit: 5, recommend: { positive_tracking_ids: ['no-such-doc'] } })
      .catch((e: { httpStatus: number; message: string }) => e);
    expect((badExample as { httpStatus: number; message: string }).httpStatus).toBe(404);
    expect((badExample as { message: string }).message).toMatch(/positive_tracking_ids "no-such-doc" do not exist/);
  });
});
