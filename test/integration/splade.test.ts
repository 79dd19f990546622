/**
 * Fulltext search with a SPLADE encoder (a local fake speaking text-embeddings-inference's
 * /embed_sparse over real HTTP): chunks are encoded by the job workers, stored, indexed by the
 * shards, and fulltext results equal the exact dot product over the stored vectors plus filters;
 * edits are re-encoded, boosts apply, and the vectors survive a restart of the core.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type Client } from '../helpers/api.js';
import { FAKE_DIM, fakeSparse, startFakeEmbeddings, type FakeEmbeddings } from '../helpers/fake-embeddings.js';
import { createDataset, createTenant } from '../helpers/fixtures.js';
import { randomChunks, randomFilter, randomQuery, rng } from '../helpers/random-corpus.js';
import { filterHolds, loadChunks, type OracleChunk } from '../helpers/search-oracle.js';
import { queryStore } from '../helpers/store-snapshot.js';
import { startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
let fake: FakeEmbeddings;
let ds: Client;
let datasetId: string;

type Sparse = Map<number, number>;

/** Stored sparse vectors of the dataset, by chunk id. */
async function storedSparse(): Promise<Map<string, Sparse>> {
  const rows = await queryStore<{ chunk_id: string; indices: Buffer; vals: Buffer }>(
    stack,
    'SELECT chunk_id, indices, vals FROM chunk_sparse_vectors WHERE dataset_id = ?',
    datasetId,
  );
  return new Map(
    rows.map((r) => {
      const idx = new Uint32Array(r.indices.buffer.slice(r.indices.byteOffset, r.indices.byteOffset + r.indices.byteLength));
      const val = new Float32Array(r.vals.buffer.slice(r.vals.byteOffset, r.vals.byteOffset + r.vals.byteLength));
      return [r.chunk_id, new Map(Array.from(idx, (i, k) => [i, val[k]!]))];
    }),
  );
}

const asMap = (list: { index: number; value: number }[]): Sparse => {
  const m = new Map<number, number>();
  for (const { index, value } of list) m.set(index, (m.get(index) ?? 0) + value);
  return m;
};
const dot = (a: Sparse, b: Sparse): number => {
  let s = 0;
  for (const [i, v] of b) s += (a.get(i) ?? 0) * v;
  return s;
};

/** Exact fulltext ranking: dot product with the query's vector over every stored vector, filter applied. */
function bruteForce(chunks: OracleChunk[], vectors: Map<string, Sparse>, query: Sparse, filters: unknown): { id: string; score: number }[] {
  return chunks
    .filter((c) => filterHolds(c, filters))
    .map((c) => ({ id: c.id, score: dot(vectors.get(c.id) ?? new Map(), query) }))
    .filter((h) => h.score !== 0)
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
}

async function waitEncoded(timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < until) {
    const res = await ds.get(`/api/dataset/usage/${datasetId}`);
    last = res.body;
    if (res.status === 200 && res.body.chunks_pending_sparse_encoding === 0 && res.body.chunks_pending_embedding === 0) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`sparse encoding did not finish: ${JSON.stringify(last)}\n${stack.output().slice(-3000)}`);
}

async function expectExact(queries: number, seed: number): Promise<number> {
  const chunks = await loadChunks(stack, datasetId);
  const vectors = await storedSparse();
  const r = rng(seed);
  let nonEmpty = 0;
  for (let q = 0; q < queries; q++) {
    const query = randomQuery(r);
    const filters = q % 3 === 0 ? undefined : randomFilter(r, chunks.map((c) => c.id));
    const res = await ds.post('/api/chunk/search', { query, search_type: 'fulltext', filters, page_size: 15, get_total_pages: true });
    expect(res.status, res.text).toBe(200);
    const expected = bruteForce(chunks, vectors, asMap(fakeSparse(query, 'query')), filters);
    const got = res.body.chunks.map((x: any) => ({ id: x.chunk.id, score: x.score }));
    expect(got.map((x: any) => x.score), query).toEqual(expected.slice(0, 15).map((x) => expect.closeTo(x.score, 5)));
    expect(res.body.total_pages).toBe(Math.ceil(expected.length / 15));
    if (expected.length > 0) nonEmpty++;
  }
  return nonEmpty;
}

beforeAll(async () => {
  fake = await startFakeEmbeddings();
  stack = await startStack({ env: { QUARRY_CORE_IN_PROCESS: 'false', QUARRY_EMBED_JOBS: 'true', QUARRY_EMBED_BACKOFF_MS: '50' } });
  const tenant = await createTenant(stack);
  datasetId = await createDataset(stack, tenant.orgId, tenant.ownerKey, {
    server_configuration: {
      EMBEDDING_BASE_URL: fake.baseUrl,
      EMBEDDING_MODEL_NAME: 'fake',
      EMBEDDING_SIZE: FAKE_DIM,
      SPLADE_BASE_URL: fake.spladeDocUrl,
      SPLADE_QUERY_BASE_URL: fake.spladeQueryUrl,
    },
  });
  ds = client(stack.baseUrl, { authorization: tenant.ownerKey, 'tr-dataset': datasetId });
  const payloads = randomChunks(150, 21);
  for (let i = 0; i < payloads.length; i += 75) expect((await ds.post('/api/chunk', payloads.slice(i, i + 75))).status).toBe(200);
  await waitEncoded();
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

describe('fulltext with a SPLADE encoder', () => {
  it('stores the document encoder vector of every chunk', async () => {
    const chunks = await loadChunks(stack, datasetId);
    const vectors = await storedSparse();
    expect(vectors.size).toBe(chunks.length);
    for (const c of chunks) expect(vectors.get(c.id)).toEqual(asMap(fakeSparse(c.text, 'doc')));
    // Queries went to the query encoder, documents to the document encoder.
    expect(fake.sparseRequests.length).toBeGreaterThan(0);
  });

  it('ranks exactly by dot product over the stored vectors, with filters and counts', async () => {
    expect(await expectExact(30, 5)).toBeGreaterThan(15);
    const count = await ds.post('/api/chunk/count', { query: 'protein gene', search_type: 'fulltext' });
    const expected = bruteForce(await loadChunks(stack, datasetId), await storedSparse(), asMap(fakeSparse('protein gene', 'query')), undefined);
    expect(count.body.count).toBe(expected.length);
  });

  it('applies a query-time fulltext_boost to the query vector', async () => {
    const res = await ds.post('/api/chunk/search', {
      query: 'protein gene',
      search_type: 'fulltext',
      page_size: 10,
      scoring_options: { fulltext_boost: { phrase: 'gene', boost_factor: 3 } },
    });
    const phrase = asMap(fakeSparse('gene', 'query'));
    const q = new Map([...asMap(fakeSparse('protein gene', 'query'))].map(([i, v]) => [i, phrase.has(i) ? v * 3 : v]));
    const expected = bruteForce(await loadChunks(stack, datasetId), await storedSparse(), q, undefined).slice(0, 10);
    expect(res.body.chunks.map((x: any) => x.score)).toEqual(expected.map((e) => expect.closeTo(e.score, 5)));
  });

  it('re-encodes an edited chunk and forgets a deleted one', async () => {
    expect((await ds.put('/api/chunk', { tracking_id: 'doc-3', chunk_html: 'axolotl axolotl regeneration' })).status).toBe(204);
    await waitEncoded();
    const hit = await ds.post('/api/chunk/search', { query: 'axolotl', search_type: 'fulltext' });
    expect(hit.body.chunks.map((x: any) => x.chunk.tracking_id)).toEqual(['doc-3']);
    expect((await ds.del('/api/chunk/tracking_id/doc-3')).status).toBe(204);
    const gone = await ds.post('/api/chunk/search', { query: 'axolotl', search_type: 'fulltext' });
    expect(gone.body.chunks).toEqual([]);
  });

  it('keeps the vectors through a restart of the core (snapshot and log replay)', async () => {
    await stack.kill('core', 'SIGTERM');
    await stack.start('core');
    expect(await expectExact(10, 9)).toBeGreaterThan(4);
  });
});
