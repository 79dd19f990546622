/**
 * Semantic search end to end: chunks are embedded by the job workers through an
 * OpenAI-compatible endpoint (a local fake speaking the real protocol), searchable once embedded,
 * equal to exact cosine brute force over the stored vectors plus filters; a worker killed mid-batch
 * leaves every chunk with exactly one vector; failures are dead-lettered visibly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../helpers/api.js';
import { cosine, FAKE_DIM, fakeRerankScore, fakeVector, startFakeEmbeddings, type FakeEmbeddings } from '../helpers/fake-embeddings.js';
import { createDataset, createTenant, type Tenant } from '../helpers/fixtures.js';
import { randomChunks, randomFilter, randomQuery, rng } from '../helpers/random-corpus.js';
import { bruteForceBm25, filterHolds, loadChunks } from '../helpers/search-oracle.js';
import { queryStore } from '../helpers/store-snapshot.js';
import { client } from '../helpers/api.js';
import { startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
let fake: FakeEmbeddings;
let tenant: Tenant;
let ds: Client;

const config = () => ({ EMBEDDING_BASE_URL: fake.baseUrl, EMBEDDING_MODEL_NAME: 'fake', EMBEDDING_SIZE: FAKE_DIM });

/** Polls dataset usage until nothing is pending embedding. */
async function waitEmbedded(c: Client, datasetId: string, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < until) {
    const res = await c.get(`/api/dataset/usage/${datasetId}`);
    last = res.body;
    if (res.status === 200 && res.body.chunks_pending_embedding === 0) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`embedding did not finish: ${JSON.stringify(last)}\n${stack.output().slice(-3000)}`);
}

/** Stored vectors of a dataset, by chunk id. */
async function storedVectors(datasetId: string): Promise<Map<string, Float32Array>> {
  const rows = await queryStore<{ chunk_id: string; vector: Buffer }>(stack, 'SELECT chunk_id, vector FROM chunk_vectors WHERE dataset_id = ?', datasetId);
  return new Map(rows.map((r) => [r.chunk_id, new Float32Array(r.vector.buffer.slice(r.vector.byteOffset, r.vector.byteOffset + r.vector.byteLength))]));
}

beforeAll(async () => {
  fake = await startFakeEmbeddings();
  // A short job lock: the killed worker's embedding job is taken over within ~6 s, not ~15 s.
  stack = await startStack({ env: { QUARRY_EMBED_JOBS: 'true', QUARRY_EMBED_BACKOFF_MS: '50', QUARRY_JOB_LOCK_MS: '4000' } });
  tenant = await createTenant(stack);
  const datasetId = await createDataset(stack, tenant.orgId, tenant.ownerKey, { server_configuration: config() });
  ds = client(stack.baseUrl, { authorization: tenant.ownerKey, 'tr-dataset': datasetId });
  tenant = { ...tenant, datasetId };
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

describe('semantic search', () => {
  it('embeds new chunks in the background and then equals exact cosine brute force with filters', async () => {
    const payloads = randomChunks(200, 13);
    for (let i = 0; i < payloads.length; i += 100) expect((await ds.post('/api/chunk', payloads.slice(i, i + 100))).status).toBe(200);
    await waitEmbedded(ds, tenant.datasetId);
    const chunks = await loadChunks(stack, tenant.datasetId);
    const vectors = await storedVectors(tenant.datasetId);
    expect(vectors.size).toBe(chunks.length);
    for (const c of chunks) expect(Array.from(vectors.get(c.id)!)).toEqual(Array.from(fakeVector(c.text)).map((x) => expect.closeTo(x, 6)));
    const r = rng(3);
    for (let q = 0; q < 25; q++) {
      const query = randomQuery(r);
      const filters = q % 3 === 0 ? undefined : randomFilter(r, chunks.map((c) => c.id));
      const res = await ds.post('/api/chunk/search', { query, search_type: 'semantic', filters, page_size: 15 });
      expect(res.status, res.text).toBe(200);
      const qv = fakeVector(query);
      const expected = chunks
        .filter((c) => filterHolds(c, filters))
        .map((c) => ({ id: c.id, score: cosine(vectors.get(c.id)!, qv) }))
        .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
        .slice(0, 15);
      const got = res.body.chunks.map((x: any) => ({ id: x.chunk.id, score: x.score }));
      expect(got.map((x: any) => x.score)).toEqual(expected.map((x) => expect.closeTo(x.score, 5)));
      expect(got.length).toBe(expected.length);
    }
  });

  it('fuses fulltext and semantic candidates for hybrid search exactly as the documented fusion', async () => {
    const chunks = await loadChunks(stack, tenant.datasetId);
    const vectors = await storedVectors(tenant.datasetId);
    const r = rng(8);
    for (let q = 0; q < 10; q++) {
      const query = randomQuery(r);
      const filters = q % 2 === 0 ? undefined : randomFilter(r, chunks.map((c) => c.id));
      const res = await ds.post('/api/chunk/search', { query, search_type: 'hybrid', filters, page_size: 10 });
      expect(res.status, res.text).toBe(200);
      const allowed = chunks.filter((c) => filterHolds(c, filters));
      const bm25 = new Map(bruteForceBm25(chunks, query, filters, 0.9, 0.4, true).map((h) => [h.id, h.score]));
      const qv = fakeVector(query);
      const dense = allowed.map((c) => ({ id: c.id, score: cosine(vectors.get(c.id)!, qv) })).sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
      const pool = new Set([...[...bm25.keys()].slice(0, 100), ...dense.slice(0, 100).map((d) => d.id)]);
      const cos = new Map(dense.map((d) => [d.id, d.score]));
      const inPool = (m: Map<string, number>) => [...pool].filter((id) => m.has(id)).map((id) => m.get(id)!);
      const [bmin, bmax] = [Math.min(...inPool(bm25)), Math.max(...inPool(bm25))];
      const [cmin, cmax] = [Math.min(...inPool(cos)), Math.max(...inPool(cos))];
      const n = (v: number | undefined, lo: number, hi: number) => (v === undefined ? 0 : hi > lo ? (v - lo) / (hi - lo) : 1);
      const expected = [...pool]
        .map((id) => ({ id, score: 0.7 * n(bm25.get(id), bmin, bmax) + 0.3 * n(cos.get(id), cmin, cmax) }))
        .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
        .slice(0, 10);
      expect(res.body.chunks.map((x: any) => x.score)).toEqual(expected.map((e) => expect.closeTo(e.score, 6)));
    }
  });

  it('sums weighted query embeddings for multi-query semantic search', async () => {
    const chunks = await loadChunks(stack, tenant.datasetId);
    const vectors = await storedVectors(tenant.datasetId);
    const parts = [{ query: 'fox quick', weight: 0.7 }, { query: 'gene trial dose', weight: 0.3 }];
    const qv = new Float32Array(FAKE_DIM);
    for (const p of parts) fakeVector(p.query).forEach((x, i) => (qv[i]! += p.weight * x));
    const res = await ds.post('/api/chunk/search', { query: parts, search_type: 'semantic', page_size: 10 });
    expect(res.status, res.text).toBe(200);
    const expected = chunks.map((c) => cosine(vectors.get(c.id)!, qv)).sort((a, b) => b - a).slice(0, 10);
    expect(res.body.chunks.map((x: any) => x.score)).toEqual(expected.map((e) => expect.closeTo(e, 5)));
    const bad = await ds.post('/api/chunk/search', { query: parts, search_type: 'hybrid' });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/only with search_type "semantic"/);
  });

  it('reranks hybrid candidates with the configured cross-encoder', async () => {
    const put = await tenant.org.put('/api/dataset', { dataset_id: tenant.datasetId, server_configuration: { ...config(), RERANKER_BASE_URL: fake.rerankUrl } });
    expect(put.status, put.text).toBe(200);
    const chunks = new Map((await loadChunks(stack, tenant.datasetId)).map((c) => [c.id, c]));
    fake.reranked.length = 0;
    const query = 'fox quick protein';
    const res = await ds.post('/api/chunk/search', { query, search_type: 'hybrid', page_size: 10 });
    expect(res.status, res.text).toBe(200);
    expect(fake.reranked.length).toBeGreaterThan(0);
    const scores = res.body.chunks.map((x: any) => x.score);
    expect(scores).toEqual([...scores].sort((a: number, b: number) => b - a));
    for (const x of res.body.chunks) {
      const text = chunks.get(x.chunk.id)!.text.split(/\s+/).slice(0, 100).join(' ');
      expect(x.score).toBe(fakeRerankScore(query, text));
    }
    const above = await ds.post('/api/chunk/search', { query, search_type: 'hybrid', page_size: 10, score_threshold: 2 });
    expect(above.body.chunks.every((x: any) => x.score >= 2)).toBe(true);
    // sort_by rerank_type cross_encoder: the bm25 top 30 re-scored by the same cross-encoder.
    const prefetched = await ds.post('/api/chunk/search', { query, search_type: 'bm25', page_size: 30 });
    const expected = prefetched.body.chunks
      .map((x: any) => fakeRerankScore(query, chunks.get(x.chunk.id)!.text.split(/\s+/).slice(0, 100).join(' ')))
      .sort((a: number, b: number) => b - a)
      .slice(0, 10);
    const reranked = await ds.post('/api/chunk/search', {
      query,
      search_type: 'bm25',
      page_size: 10,
      sort_options: { use_weights: false, sort_by: { rerank_type: 'cross_encoder', prefetch_amount: 30 } },
    });
    expect(reranked.status, reranked.text).toBe(200);
    expect(reranked.body.chunks.map((x: any) => x.score)).toEqual(expected);
    // Back to score fusion for the tests that follow.
    expect((await tenant.org.put('/api/dataset', { dataset_id: tenant.datasetId, server_configuration: { ...config(), RERANKER_BASE_URL: '' } })).status).toBe(200);
  });

  it('re-embeds a chunk whose text changed and answers with the new text', async () => {
    const res = await ds.post('/api/chunk', { tracking_id: 'moving', chunk_html: 'granite quarry stone' });
    expect(res.status).toBe(200);
    await waitEmbedded(ds, tenant.datasetId);
    const top = async (q: string) => (await ds.post('/api/chunk/search', { query: q, search_type: 'semantic', page_size: 1 })).body.chunks[0]?.chunk.tracking_id;
    expect(await top('granite quarry stone')).toBe('moving');
    expect((await ds.put('/api/chunk', { tracking_id: 'moving', chunk_html: 'velvet curtain theatre' })).status).toBe(204);
    await waitEmbedded(ds, tenant.datasetId);
    expect(await top('velvet curtain theatre')).toBe('moving');
    expect(await top('granite quarry stone')).not.toBe('moving');
  });

  it('leaves every chunk with exactly one current vector after the worker is killed mid-batch', async () => {
    fake.delayMs = 150;
    const payloads = randomChunks(150, 21).map((p, i) => ({ ...p, tracking_id: `kill-${i}` }));
    expect((await ds.post('/api/chunk', payloads.slice(0, 100))).status).toBe(200);
    expect((await ds.post('/api/chunk', payloads.slice(100))).status).toBe(200);
    await new Promise((r) => setTimeout(r, 400));
    await stack.kill('jobs', 'SIGKILL');
    fake.delayMs = 0;
    await stack.start('jobs');
    await waitEmbedded(ds, tenant.datasetId, 120_000);
    const chunks = await loadChunks(stack, tenant.datasetId);
    const perChunk = await queryStore<{ chunk_id: string; n: number }>(
      stack,
      'SELECT chunk_id, COUNT(*) AS n FROM chunk_vectors WHERE dataset_id = ? GROUP BY chunk_id',
      tenant.datasetId,
    );
    expect(perChunk.length).toBe(chunks.length);
    expect(perChunk.every((r) => r.n === 1)).toBe(true);
    const vectors = await storedVectors(tenant.datasetId);
    for (const c of chunks) expect(cosine(vectors.get(c.id)!, fakeVector(c.text))).toBeCloseTo(1, 5);
    const res = await ds.post('/api/chunk/search', { query: 'fox quick', search_type: 'semantic', page_size: 1000, get_total_pages: true });
    expect(res.body.total_pages).toBe(1);
    expect(res.body.chunks.length).toBe(chunks.length);
  }, 150_000);

  it('dead-letters a dataset whose endpoint refuses, visibly in the dataset events', async () => {
    fake.failWith = 400;
    try {
      const id = await createDataset(stack, tenant.orgId, tenant.ownerKey, { server_configuration: config() });
      const c = client(stack.baseUrl, { authorization: tenant.ownerKey, 'tr-dataset': id });
      expect((await c.post('/api/chunk', { chunk_html: 'never embedded' })).status).toBe(200);
      // Searchable by bm25 at once even though its vector cannot be made.
      expect((await c.post('/api/chunk/search', { query: 'embedded', search_type: 'bm25' })).body.chunks).toHaveLength(1);
      const until = Date.now() + 30_000;
      let events: any[] = [];
      while (Date.now() < until) {
        events = (await c.post('/api/dataset/events', { event_types: ['embedding_failed'] })).body.events;
        if (events.length > 0) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(events.length, stack.output().slice(-2000)).toBeGreaterThan(0);
      expect(JSON.parse(events[0].event_data).error).toMatch(/fake failure|400/);
      expect((await c.get(`/api/dataset/usage/${id}`)).body.chunks_pending_embedding).toBe(1);
    } finally {
      fake.failWith = null;
    }
  });
});
