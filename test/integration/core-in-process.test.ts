/**
 * QUARRY_CORE_IN_PROCESS: the HTTP process hosts the search core (no gRPC hop for searches) and
 * serves the core's gRPC API to the job workers. Everything a client sees must be as with a
 * separate core: results equal brute force, errors keep their status and message, embeddings
 * reach the hosted core, and the process shuts down cleanly.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type Client } from '../helpers/api.js';
import { cosine, FAKE_DIM, fakeVector, startFakeEmbeddings, type FakeEmbeddings } from '../helpers/fake-embeddings.js';
import { createDataset, createTenant } from '../helpers/fixtures.js';
import { randomChunks, randomFilter, randomQuery, rng } from '../helpers/random-corpus.js';
import { bruteForceBm25, loadChunks } from '../helpers/search-oracle.js';
import { queryStore } from '../helpers/store-snapshot.js';
import { processEntry, startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
let fake: FakeEmbeddings;
let ds: Client;
let datasetId: string;

const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

beforeAll(async () => {
  fake = await startFakeEmbeddings();
  stack = await startStack({ env: { QUARRY_CORE_IN_PROCESS: 'true', QUARRY_EMBED_JOBS: 'true', QUARRY_EMBED_BACKOFF_MS: '50', QUARRY_SERVER_TIMING: 'true' } });
  const tenant = await createTenant(stack);
  datasetId = await createDataset(stack, tenant.orgId, tenant.ownerKey, {
    server_configuration: { EMBEDDING_BASE_URL: fake.baseUrl, EMBEDDING_MODEL_NAME: 'fake', EMBEDDING_SIZE: FAKE_DIM },
  });
  ds = client(stack.baseUrl, { authorization: tenant.ownerKey, 'tr-dataset': datasetId });
  const payloads = randomChunks(120, 31);
  expect((await ds.post('/api/chunk', payloads.slice(0, 60))).status).toBe(200);
  expect((await ds.post('/api/chunk', payloads.slice(60))).status).toBe(200);
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  await fake?.close();
});

describe('the search core hosted by the HTTP process', () => {
  it('the core process steps aside and health reports the hosted core', async () => {
    // A core process started with the same settings (as a supervisor of the separate topology
    // would) exits 0 at once instead of competing for the gRPC port and the data.
    const core = spawn(process.execPath, [processEntry('core')], { env: stack.env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    core.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => core.kill('SIGKILL'), 10_000);
    const [code, signal] = (await once(core, 'exit')) as [number | null, NodeJS.Signals | null];
    clearTimeout(timer);
    expect({ code, signal }, stderr).toEqual({ code: 0, signal: null });
    const health = await fetch(`${stack.baseUrl}/api/health`);
    expect(health.status).toBe(200);
  });

  it('with QUARRY_SERVER_TIMING, a search says where its time went (Server-Timing), other answers give their total', async () => {
    const res = await ds.post('/api/chunk/search', { query: 'protein cells', search_type: 'bm25', page_size: 10 });
    expect(res.status, res.text).toBe(200);
    const header = res.headers.get('server-timing') ?? '';
    const stages = new Map(header.split(',').map((p) => {
      const m = /^\s*([\w-]+);dur=([\d.]+)$/.exec(p);
      expect(m, header).not.toBeNull();
      return [m![1]!, Number(m![2])] as const;
    }));
    expect([...stages.keys()]).toEqual(['middleware', 'access', 'parse', 'core', 'store', 'analytics', 'present', 'serialize', 'shard-run', 'shard-wait', 'total']);
    const parts = [...stages].filter(([n]) => n !== 'total' && !n.startsWith('shard-')).reduce((sum, [, ms]) => sum + ms, 0);
    // The stages follow one another: together at most the total (rounding to 1 µs aside).
    expect(parts).toBeLessThanOrEqual(stages.get('total')! + 0.01);
    expect(stages.get('core')!).toBeGreaterThan(0);
    // The shard threads' part of the core stage (summed over tasks that may run in parallel).
    expect(stages.get('shard-run')!).toBeGreaterThan(0);
    expect(stages.get('shard-wait')!).toBeGreaterThanOrEqual(0);
    // A route that marks no stage still gets its serialization and the total (the timer starts with every request).
    const usage = await ds.get(`/api/dataset/usage/${datasetId}`);
    expect(usage.headers.get('server-timing')).toMatch(/^serialize;dur=[\d.]+,\s*total;dur=[\d.]+$/);
  });

  it('answers bm25 and fulltext exactly as brute force, with filters', async () => {
    const chunks = await loadChunks(stack, datasetId);
    const r = rng(4);
    for (let q = 0; q < 20; q++) {
      const query = randomQuery(r);
      const filters = q % 2 === 0 ? undefined : randomFilter(r, chunks.map((c) => c.id));
      const searchType = q % 3 === 0 ? 'fulltext' : 'bm25';
      const res = await ds.post('/api/chunk/search', { query, search_type: searchType, filters, page_size: 10 });
      expect(res.status, res.text).toBe(200);
      const expected = bruteForceBm25(chunks, query, filters, 0.9, 0.4, searchType === 'fulltext').slice(0, 10);
      const got = res.body.chunks.map((x: any) => x.score as number);
      expect(got.length).toBe(expected.length);
      got.forEach((s: number, i: number) => expect(close(s, expected[i]!.score), `${query} rank ${i}`).toBe(true));
    }
  });

  it('keeps the status and message of the core errors', async () => {
    const res = await ds.post('/api/chunk/search', { query: 'x', search_type: 'bm25', filters: { must: [{ field: 'tag_set', range: { gt: 1 } }] } });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/range cannot be used on field "tag_set"/);
  });

  it('receives the job workers embeddings over its gRPC API and serves semantic search', async () => {
    const until = Date.now() + 60_000;
    for (;;) {
      const usage = await ds.get(`/api/dataset/usage/${datasetId}`);
      if (usage.body.chunks_pending_embedding === 0) break;
      if (Date.now() > until) throw new Error(`embedding did not finish\n${stack.output().slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const rows = await queryStore<{ chunk_id: string; vector: Buffer }>(stack, 'SELECT chunk_id, vector FROM chunk_vectors WHERE dataset_id = ?', datasetId);
    const vectors = new Map(rows.map((row) => [row.chunk_id, new Float32Array(row.vector.buffer.slice(row.vector.byteOffset, row.vector.byteOffset + row.vector.byteLength))]));
    const chunks = await loadChunks(stack, datasetId);
    const query = 'protein gene trial';
    const qv = fakeVector(query);
    const expected = chunks.map((c) => cosine(vectors.get(c.id)!, qv)).sort((x, y) => y - x).slice(0, 10);
    const res = await ds.post('/api/chunk/search', { query, search_type: 'semantic', page_size: 10 });
    expect(res.status, res.text).toBe(200);
    expect(res.body.chunks.map((x: any) => x.score)).toEqual(expected.map((e) => expect.closeTo(e, 5)));
  });

  it('stops cleanly on SIGTERM (snapshots included) and starts again with the same answers', async () => {
    const before = await ds.post('/api/chunk/search', { query: 'fox quick', search_type: 'bm25', page_size: 5 });
    expect(await stack.kill('facade', 'SIGTERM'), stack.output().slice(-3000)).toBe(0);
    await stack.start('facade');
    const after = await ds.post('/api/chunk/search', { query: 'fox quick', search_type: 'bm25', page_size: 5 });
    expect(after.body.chunks.map((x: any) => x.score)).toEqual(before.body.chunks.map((x: any) => x.score));
  }, 60_000);
});
