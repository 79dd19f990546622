/**
 * POST /api/chunk/recommend and POST /api/chunk_group/recommend end to end on a corpus embedded
 * through the fake OpenAI-compatible server: semantic recommendations equal brute force over the
 * stored vectors (average_vector and Qdrant's best_score rule, examples excluded, filters
 * applied), bm25/fulltext recommendations equal exhaustive BM25 of the documented query, group
 * recommendations equal a brute-force grouping; shapes per API version; 400/404 cases.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recommendQueryText } from '../../core/pipeline/recommend-query.js';
import { client, type Client } from '../helpers/api.js';
import { FAKE_DIM, type FakeEmbeddings } from '../helpers/fake-embeddings.js';
import { startFakeEmbeddingSetup, type Tenant } from '../helpers/fixtures.js';
import { randomChunks } from '../helpers/random-corpus.js';
import { bruteForceBm25, filterHolds, loadChunks, type OracleChunk } from '../helpers/search-oracle.js';
import { queryStore } from '../helpers/store-snapshot.js';
import type { Stack } from '../helpers/stack.js';
import { createAnalyzer } from '../../workers/shard/bm25/analyzer.js';
import { eventually } from '../helpers/eventually.js';

let stack: Stack;
let fake: FakeEmbeddings;
let ds: Client;
let datasetId: string;
let chunks: OracleChunk[];
let byTracking: Map<string, OracleChunk>;
let vectors: Map<string, Float64Array>;

const GROUPS = 12;
const analyzer = createAnalyzer();

/** Polls dataset usage until nothing is pending embedding. */
async function waitEmbedded(timeoutMs = 60_000): Promise<void> {
  await eventually({ what: 'the embedding to finish', timeoutMs, intervalMs: 200, context: () => stack.output().slice(-3000) }, async () => {
    const res = await ds.get(`/api/dataset/usage/${datasetId}`);
    return res.status === 200 && res.body.chunks_pending_embedding === 0;
  });
}

/** Stored vectors by chunk id, unit-normalised (cosine compares directions). */
async function storedVectors(): Promise<Map<string, Float64Array>> {
  const rows = await queryStore<{ chunk_id: string; vector: Buffer }>(stack, 'SELECT chunk_id, vector FROM chunk_vectors WHERE dataset_id = ?', datasetId);
  return new Map(rows.map((r) => [r.chunk_id, unit(new Float32Array(r.vector.buffer.slice(r.vector.byteOffset, r.vector.byteOffset + r.vector.byteLength)))]));
}

function unit(v: ArrayLike<number>): Float64Array {
  const out = Float64Array.from(v);
  const n = Math.sqrt(out.reduce((s, x) => s + x * x, 0)) || 1;
  return out.map((x) => x / n);
}
const dot = (a: Float64Array, b: Float64Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);
const cosine = (a: Float64Array, b: Float64Array) => dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b));
function mean(vs: Float64Array[]): Float64Array {
  const out = new Float64Array(FAKE_DIM);
  for (const v of vs) v.forEach((x, i) => (out[i]! += x / vs.length));
  return out;
}

const idOf = (tid: string) => byTracking.get(tid)!.id;
const ordered = (a: { id: string; score: number }, b: { id: string; score: number }) => b.score - a.score || (a.id < b.id ? -1 : 1);

/** Every chunk but the examples that passes the filter, scored by `score`, best first. */
function oracle(score: (v: Float64Array) => number, examples: string[], filters?: unknown): { id: string; score: number }[] {
  const skip = new Set(examples);
  return chunks
    .filter((c) => !skip.has(c.id) && filterHolds(c, filters))
    .map((c) => ({ id: c.id, score: score(vectors.get(c.id)!) }))
    .sort(ordered);
}

/** Qdrant's best_score rule. */
function bestScore(v: Float64Array, pos: Float64Array[], neg: Float64Array[]): number {
  const p = Math.max(...pos.map((x) => cosine(v, x)));
  const n = neg.length > 0 ? Math.max(...neg.map((x) => cosine(v, x))) : -Infinity;
  return p > n ? p : -(n * n);
}

/**
 * Asserts a returned ranking is the oracle's top `limit`: the same scores in order, and each id
 * really has the score it came with (ids may differ only among tied scores).
 */
function expectRanking(actual: { id: string; score: number }[], expected: { id: string; score: number }[], limit: number, what: string): void {
  expect(actual.map((a) => a.score), what).toEqual(expected.slice(0, limit).map((e) => expect.closeTo(e.score, 5)));
  const truth = new Map(expected.map((e) => [e.id, e.score]));
  for (const a of actual) expect(truth.get(a.id), `${what}: ${a.id}`).toBeCloseTo(a.score, 5);
}

/** The ranking of a V2 recommendation. */
const scoredV2 = (body: any) => body.chunks.map((x: any) => ({ id: x.chunk.id as string, score: x.score as number }));

beforeAll(async () => {
  let tenant: Tenant;
  ({ fake, stack, tenant, datasetId } = await startFakeEmbeddingSetup());
  ds = client(stack.baseUrl, { authorization: tenant.ownerKey, 'tr-dataset': datasetId, 'x-api-version': 'V2' });
  // Groups rg-0..rg-11; some chunks in two groups, some in none.
  const payloads = randomChunks(180, 31).map((p, i) => ({
    ...p,
    group_tracking_ids: i % 9 === 0 ? [] : i % 5 === 0 ? [`rg-${i % GROUPS}`, `rg-${(i * 7 + 3) % GROUPS}`] : [`rg-${i % GROUPS}`],
  }));
  for (let i = 0; i < payloads.length; i += 90) {
    const res = await ds.post('/api/chunk', payloads.slice(i, i + 90));
    expect(res.status, res.text).toBe(200);
  }
  await waitEmbedded();
  chunks = await loadChunks(stack, datasetId);
  byTracking = new Map(chunks.map((c) => [c.trackingId!, c]));
  vectors = await storedVectors();
  expect(vectors.size).toBe(chunks.length);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

describe('semantic chunk recommendations', () => {
  it('average_vector equals brute force over the stored vectors: positives only, then with negatives and filters', async () => {
    const cases: { pos: string[]; neg: string[]; filters?: unknown; limit: number }[] = [
      { pos: ['doc-3', 'doc-17', 'doc-40'], neg: [], limit: 10 },
      { pos: ['doc-5'], neg: [], limit: 25 },
      { pos: ['doc-8', 'doc-21'], neg: ['doc-30', 'doc-99'], limit: 15 },
      { pos: ['doc-11', 'doc-12'], neg: ['doc-13'], filters: { must: [{ field: 'tag_set', match_any: ['red', 'green'] }] }, limit: 12 },
      { pos: ['doc-60'], neg: ['doc-61'], filters: { must_not: [{ field: 'num_value', range: { gt: 50 } }], should: [{ field: 'metadata.color', match_any: ['amber', 'coral'] }] }, limit: 10 },
    ];
    for (const [k, c] of cases.entries()) {
      // Half the examples by id, half by tracking id.
      const body = {
        positive_chunk_ids: c.pos.filter((_, i) => i % 2 === 0).map(idOf),
        positive_tracking_ids: c.pos.filter((_, i) => i % 2 === 1),
        negative_chunk_ids: c.neg.filter((_, i) => i % 2 === 1).map(idOf),
        negative_tracking_ids: c.neg.filter((_, i) => i % 2 === 0),
        filters: c.filters,
        limit: c.limit,
      };
      const res = await ds.post('/api/chunk/recommend', body);
      expect(res.status, res.text).toBe(200);
      expect(res.body.id).toMatch(/^[0-9a-f-]{36}$/);
      const avgPos = mean(c.pos.map((t) => vectors.get(idOf(t))!));
      const query = c.neg.length === 0 ? avgPos : avgPos.map((x, i) => 2 * x - mean(c.neg.map((t) => vectors.get(idOf(t))!))[i]!);
      const expected = oracle((v) => cosine(v, query), [...c.pos, ...c.neg].map(idOf), c.filters);
      expectRanking(scoredV2(res.body), expected, c.limit, `average_vector case ${k}`);
      expect(res.body.chunks.every((x: any) => x.highlights === null)).toBe(true);
    }
  });

  it('best_score equals brute force with Qdrant\'s rule (best positive similarity, else minus the squared best negative)', async () => {
    const cases: { pos: string[]; neg: string[]; filters?: unknown; limit: number }[] = [
      { pos: ['doc-3', 'doc-70'], neg: [], limit: 15 },
      { pos: ['doc-9', 'doc-44', 'doc-120'], neg: ['doc-10'], limit: 20 },
      { pos: ['doc-2'], neg: ['doc-4', 'doc-6', 'doc-7'], limit: 40 },
      { pos: ['doc-14', 'doc-15'], neg: ['doc-16'], filters: { must: [{ field: 'tag_set', match_any: ['blue', 'cyan'] }] }, limit: 10 },
    ];
    for (const [k, c] of cases.entries()) {
      const res = await ds.post('/api/chunk/recommend', {
        positive_tracking_ids: c.pos,
        negative_tracking_ids: c.neg,
        strategy: 'best_score',
        filters: c.filters,
        limit: c.limit,
      });
      expect(res.status, res.text).toBe(200);
      const pos = c.pos.map((t) => vectors.get(idOf(t))!);
      const neg = c.neg.map((t) => vectors.get(idOf(t))!);
      const expected = oracle((v) => bestScore(v, pos, neg), [...c.pos, ...c.neg].map(idOf), c.filters);
      expectRanking(scoredV2(res.body), expected, c.limit, `best_score case ${k}`);
    }
  });

  it('answers V1 with a flat array of chunks and scores, and slim chunks without chunk_html', async () => {
    const body = { positive_tracking_ids: ['doc-3'], limit: 5 };
    const v1 = await ds.post('/api/chunk/recommend', body, { 'x-api-version': 'V1' });
    expect(v1.status, v1.text).toBe(200);
    expect(v1.headers.get('x-api-version')).toBe('1.0');
    expect(Array.isArray(v1.body)).toBe(true);
    expect(v1.body).toHaveLength(5);
    for (const x of v1.body) {
      expect(typeof x.score).toBe('number');
      expect(x).toHaveProperty('chunk_html');
      expect(x.tag_set === null || typeof x.tag_set === 'string').toBe(true);
      expect(x.chunk).toBeUndefined();
    }
    const v2 = await ds.post('/api/chunk/recommend', body);
    expect(v1.body.map((x: any) => x.id)).toEqual(v2.body.chunks.map((x: any) => x.chunk.id));
    const slim = await ds.post('/api/chunk/recommend', { ...body, slim_chunks: true });
    expect(slim.status).toBe(200);
    expect(slim.body.chunks.every((x: any) => !('chunk_html' in x.chunk) && Array.isArray(x.chunk.tag_set))).toBe(true);
    const slimV1 = await ds.post('/api/chunk/recommend', { ...body, slim_chunks: true }, { 'x-api-version': 'V1' });
    expect(slimV1.body.every((x: any) => !('chunk_html' in x) && typeof x.score === 'number')).toBe(true);
    const none = await ds.post('/api/chunk/recommend', { ...body, limit: 0 });
    expect(none.body.chunks).toEqual([]);
  });
});

describe('bm25 and fulltext chunk recommendations', () => {
  it('search by the words of the positives, exclude the examples, and equal exhaustive BM25 of that query', async () => {
    const cases: { pos: string[]; neg: string[]; type: 'bm25' | 'fulltext'; filters?: any }[] = [
      { pos: ['doc-3', 'doc-17'], neg: [], type: 'bm25' },
      { pos: ['doc-22'], neg: ['doc-23'], type: 'bm25' },
      { pos: ['doc-50', 'doc-51', 'doc-52'], neg: [], type: 'fulltext', filters: { must_not: [{ field: 'tag_set', match_any: ['red'] }] } },
    ];
    for (const [k, c] of cases.entries()) {
      const res = await ds.post('/api/chunk/recommend', { positive_tracking_ids: c.pos, negative_tracking_ids: c.neg, recommend_type: c.type, filters: c.filters, limit: 15 });
      expect(res.status, res.text).toBe(200);
      const examples = [...c.pos, ...c.neg].map(idOf);
      const query = recommendQueryText(c.pos.map((t) => byTracking.get(t)!.text), c.neg.map((t) => byTracking.get(t)!.text));
      expect(query.length).toBeGreaterThan(0);
      const filter = { ...(c.filters ?? {}), must_not: [...(c.filters?.must_not ?? []), { ids: examples }] };
      const expected = bruteForceBm25(chunks, query, filter, 0.9, 0.4, c.type === 'fulltext').slice(0, 15);
      const actual = scoredV2(res.body);
      const what = `${c.type} case ${k} (query "${query}")`;
      expect(actual.map((a: any) => a.score), what).toEqual(expected.map((e) => expect.closeTo(e.score, 9)));
      expect(actual.length).toBeGreaterThan(0);
      expect(actual.some((a: any) => examples.includes(a.id)), what).toBe(false);
      // Related: every result shares an (analyzed) query word with the positives.
      const words = new Set(analyzer.analyze(query));
      for (const a of actual) expect(analyzer.analyze(chunks.find((x) => x.id === a.id)!.text).some((w) => words.has(w)), what).toBe(true);
    }
  });
});

describe('group recommendations', () => {
  it('recommend over the groups\' member chunks and group the ranking like brute force', async () => {
    const group = async (tid: string) => (await ds.get(`/api/chunk_group/tracking_id/${tid}`)).body;
    const positive = await group('rg-0');
    const negative = await group('rg-1');
    const members = (gid: string) => chunks.filter((c) => c.groupIds.includes(gid)).map((c) => c.id);
    const examples = [...members(positive.id), ...members(negative.id)];
    const pos = members(positive.id).map((id) => vectors.get(id)!);
    const neg = members(negative.id).map((id) => vectors.get(id)!);
    const avg = mean(pos).map((x, i) => 2 * x - mean(neg)[i]!);
    for (const groupSize of [2, 0]) {
      const res = await ds.post('/api/chunk_group/recommend', {
        positive_group_tracking_ids: ['rg-0'],
        negative_group_ids: [negative.id],
        limit: 5,
        group_size: groupSize,
      });
      expect(res.status, res.text).toBe(200);
      const ranking = oracle((v) => cosine(v, avg), examples);
      const expected = bruteForceGroups(ranking, 5, Math.max(1, groupSize));
      const actual = res.body.results as any[];
      expect(actual.map((g) => g.group.id).includes(positive.id)).toBe(false);
      expect(actual.map((g) => expected.best.get(g.group.id)), 'group best scores').toEqual(expected.page.map((g) => expect.closeTo(g.best, 5)));
      for (const g of actual) {
        expect(g.file_id).toBeNull();
        if (groupSize === 0) {
          expect(g.chunks).toEqual([]);
          continue;
        }
        const want = expected.all.get(g.group.id)!;
        expect(g.chunks.map((x: any) => x.score), g.group.tracking_id).toEqual(want.map((w) => expect.closeTo(w.score, 5)));
        for (const x of g.chunks) expect(chunks.find((c) => c.id === x.chunk.id)!.groupIds).toContain(g.group.id);
      }
    }
    const v1 = await ds.post('/api/chunk_group/recommend', { positive_group_ids: [positive.id], limit: 3, group_size: 1 }, { 'x-api-version': 'V1' });
    expect(v1.status, v1.text).toBe(200);
    expect(Array.isArray(v1.body)).toBe(true);
    expect(v1.body[0]).toMatchObject({ group_id: expect.any(String), group_name: expect.any(String), group_dataset_id: datasetId, file_id: null });
    expect(v1.body[0].metadata[0]).toMatchObject({ metadata: [expect.objectContaining({ id: expect.any(String) })], score: expect.any(Number) });
  });
});

/** Groups of a ranking in rank order, each with its best `perGroup` chunks. */
function bruteForceGroups(ranking: { id: string; score: number }[], take: number, perGroup: number) {
  const all = new Map<string, { id: string; score: number }[]>();
  for (const r of ranking) {
    for (const g of chunks.find((c) => c.id === r.id)!.groupIds) {
      const list = all.get(g) ?? [];
      if (!all.has(g)) all.set(g, list);
      if (list.length < perGroup) list.push(r);
    }
  }
  const best = new Map([...all.entries()].map(([g, l]) => [g, l[0]!.score]));
  const page = [...all.entries()].slice(0, take).map(([id, l]) => ({ id, best: l[0]!.score }));
  return { all, best, page };
}

describe('bad recommendation requests', () => {
  it('400 naming the field, 404 naming unknown examples, never 500', async () => {
    const bad: [string, unknown, RegExp, number?][] = [
      ['/api/chunk/recommend', {}, /positive/],
      ['/api/chunk/recommend', { negative_tracking_ids: ['doc-1'] }, /positive/],
      ['/api/chunk/recommend', { positive_tracking_ids: ['doc-1'], strategy: 'magic' }, /strategy/],
      ['/api/chunk/recommend', { positive_tracking_ids: ['doc-1'], recommend_type: 'hybrid' }, /recommend_type/],
      ['/api/chunk/recommend', { positive_tracking_ids: ['doc-1'], limit: 1e9 }, /MAX_LIMIT/],
      ['/api/chunk/recommend', { positive_tracking_ids: ['doc-1'], limit: -1 }, /limit/],
      ['/api/chunk/recommend', { positive_tracking_ids: ['doc-1'], limit: 'ten' }, /limit/],
      ['/api/chunk/recommend', { positive_chunk_ids: ['x'] }, /positive_chunk_ids/],
      ['/api/chunk/recommend', { positive_chunk_ids: 'abc' }, /positive_chunk_ids/],
      ['/api/chunk/recommend', { positive_tracking_ids: ['doc-1'], filters: { must: [{ field: 'nope', match_any: ['x'] }] } }, /nope/],
      ['/api/chunk/recommend', { positive_chunk_ids: ['00000000-0000-4000-8000-000000000000'] }, /00000000-0000-4000-8000-000000000000/, 404],
      ['/api/chunk/recommend', { positive_tracking_ids: ['doc-1'], negative_tracking_ids: ['no-such-doc'] }, /no-such-doc/, 404],
      ['/api/chunk_group/recommend', {}, /positive/],
      ['/api/chunk_group/recommend', { positive_group_tracking_ids: ['rg-0'], group_size: -2 }, /group_size/],
      ['/api/chunk_group/recommend', { positive_group_tracking_ids: ['rg-0'], group_size: 1e9 }, /group_size/],
      ['/api/chunk_group/recommend', { positive_group_ids: ['nope'] }, /positive_group_ids/],
      ['/api/chunk_group/recommend', { positive_group_tracking_ids: ['no-such-group'] }, /no-such-group/, 404],
    ];
    for (const [path, body, message, status] of bad) {
      const res = await ds.post(path, body);
      expect(res.status, `${path} ${JSON.stringify(body)} → ${res.text}`).toBe(status ?? 400);
      expect(res.body.message, JSON.stringify(body)).toMatch(message);
    }
  });

  it('400 saying embeddings are pending when a semantic example has no vector yet; bm25 still answers', async () => {
    fake.delayMs = 4000;
    try {
      const res = await ds.post('/api/chunk', { tracking_id: 'fresh', chunk_html: 'fox quick gene' });
      expect(res.status, res.text).toBe(200);
      const semantic = await ds.post('/api/chunk/recommend', { positive_tracking_ids: ['fresh'] });
      expect(semantic.status, semantic.text).toBe(400);
      expect(semantic.body.message).toMatch(/embeddings are pending/);
      const bm25 = await ds.post('/api/chunk/recommend', { positive_tracking_ids: ['fresh'], recommend_type: 'bm25' });
      expect(bm25.status, bm25.text).toBe(200);
      expect(bm25.body.chunks.length).toBeGreaterThan(0);
    } finally {
      fake.delayMs = 0;
    }
  });
});
