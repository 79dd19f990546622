/**
 * A dataset with `server_configuration.SEMANTIC_ENABLED: false` is never embedded: writes do not
 * enqueue embedding for it, the embed job gives it no dense vectors (its SPLADE encoding still
 * runs), and its usage reports nothing pending. Each dataset has its own fake OpenAI-compatible
 * endpoint (real HTTP) that counts requests; a normal dataset beside them is embedded.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embedJobId, Queues } from '../../core/domain/queues.js';
import { client, type Client } from '../helpers/api.js';
import { FAKE_DIM, startFakeEmbeddings, type FakeEmbeddings } from '../helpers/fake-embeddings.js';
import { createDataset, createTenant, type Tenant } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/eventually.js';

let stack: Stack;
let tenant: Tenant;
/** Endpoints of: the normal dataset, the disabled one with SPLADE, the disabled one without. */
let onFake: FakeEmbeddings;
let spladeFake: FakeEmbeddings;
let offFake: FakeEmbeddings;
const ids = { on: '', splade: '', off: '' };
let redis: Redis;
let embedQueue: Queue;

const dense = (fake: FakeEmbeddings) => ({ EMBEDDING_BASE_URL: fake.baseUrl, EMBEDDING_MODEL_NAME: 'fake', EMBEDDING_SIZE: FAKE_DIM });
const ds = (id: string): Client => client(stack.baseUrl, { authorization: tenant.ownerKey, 'tr-dataset': id });
const usage = async (id: string) => {
  const res = await ds(id).get(`/api/dataset/usage/${id}`);
  expect(res.status, res.text).toBe(200);
  return res.body as { chunk_count: number; chunks_pending_embedding: number; chunks_embedded: number; chunks_pending_sparse_encoding: number };
};

/** Polls the dataset's usage until `done` holds. */
async function waitUsage(id: string, done: (u: Awaited<ReturnType<typeof usage>>) => boolean, timeoutMs = 60_000): Promise<void> {
  let last: unknown;
  await eventually({ what: 'the usage to settle', timeoutMs, intervalMs: 200, context: () => `last usage: ${JSON.stringify(last)}\n${stack.output().slice(-3000)}` }, async () => {
    last = await usage(id);
    return done(last as Awaited<ReturnType<typeof usage>>) || undefined;
  });
}

/** Job ids BullMQ recorded as added to the embed queue so far (its events stream). */
async function embedJobsAdded(): Promise<string[]> {
  const entries = await redis.xrange(embedQueue.keys.events!, '-', '+');
  return entries.flatMap(([, fields]) => {
    const f = new Map<string, string>();
    for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i]!, fields[i + 1]!);
    return f.get('event') === 'added' ? [f.get('jobId')!] : [];
  });
}

/** Creates, updates and updates by tracking id: every kind of write that enqueues embedding. */
async function writeChunks(id: string, prefix: string): Promise<void> {
  const c = ds(id);
  const chunks = Array.from({ length: 8 }, (_, i) => ({ chunk_html: `${prefix} chunk ${i} about rivers and mountains`, tracking_id: `${prefix}-${i}` }));
  const created = await c.post('/api/chunk', chunks);
  expect(created.status, created.text).toBe(200);
  const first = created.body.chunk_metadata[0].id as string;
  expect((await c.put('/api/chunk', { chunk_id: first, chunk_html: `${prefix} chunk 0 rewritten about lakes` })).status).toBe(204);
  expect((await c.put('/api/chunk/tracking_id/update', { tracking_id: `${prefix}-1`, chunk_html: `${prefix} chunk 1 rewritten about hills` })).status).toBe(204);
}

beforeAll(async () => {
  [onFake, spladeFake, offFake] = await Promise.all([startFakeEmbeddings(), startFakeEmbeddings(), startFakeEmbeddings()]);
  stack = await startStack({ env: { QUARRY_EMBED_JOBS: 'true', QUARRY_EMBED_BACKOFF_MS: '50' } });
  redis = new Redis(stack.env.QUARRY_REDIS_URL!, { maxRetriesPerRequest: 2 });
  embedQueue = new Queue(Queues.embed, { connection: redis });
  tenant = await createTenant(stack);
  const create = (cfg: Record<string, unknown>) => createDataset(stack, tenant.orgId, tenant.ownerKey, { server_configuration: cfg });
  ids.on = await create(dense(onFake));
  ids.splade = await create({ ...dense(spladeFake), SEMANTIC_ENABLED: false, SPLADE_BASE_URL: spladeFake.spladeDocUrl, SPLADE_QUERY_BASE_URL: spladeFake.spladeQueryUrl });
  ids.off = await create({ ...dense(offFake), SEMANTIC_ENABLED: false });
}, 60_000);

afterAll(async () => {
  await embedQueue?.close();
  redis?.disconnect();
  await stack?.stop();
  await Promise.all([onFake, spladeFake, offFake].map((f) => f?.close()));
});

describe('SEMANTIC_ENABLED false', () => {
  it('embeds nothing for the dataset, still SPLADE-encodes it, and reports nothing pending', async () => {
    // The disabled datasets are written first: the embed queue runs one job at a time in order,
    // so once the normal dataset (written last) is embedded, their jobs have had their turn.
    await writeChunks(ids.off, 'off');
    await writeChunks(ids.splade, 'splade');
    await writeChunks(ids.on, 'on');
    await waitUsage(ids.on, (u) => u.chunk_count === 8 && u.chunks_pending_embedding === 0);
    await waitUsage(ids.splade, (u) => u.chunk_count === 8 && u.chunks_pending_sparse_encoding === 0);

    expect(onFake.requests.length).toBeGreaterThan(0);
    expect(spladeFake.sparseRequests.length).toBeGreaterThan(0);
    expect(spladeFake.requests).toEqual([]);
    expect(offFake.requests).toEqual([]);
    // Nothing needs vectors in the plain disabled dataset, so no write enqueued a job for it.
    const added = await embedJobsAdded();
    expect(added).toContain(embedJobId(ids.on));
    expect(added).not.toContain(embedJobId(ids.off));

    for (const id of [ids.off, ids.splade]) {
      expect(await usage(id)).toMatchObject({ chunk_count: 8, chunks_pending_embedding: 0, chunks_embedded: 0, chunks_pending_sparse_encoding: 0 });
    }
    expect(await usage(ids.on)).toMatchObject({ chunk_count: 8, chunks_pending_embedding: 0, chunks_embedded: 8 });
  }, 90_000);

  it('embeds the dataset once SEMANTIC_ENABLED is turned back on', async () => {
    const res = await client(stack.baseUrl, { authorization: tenant.ownerKey, 'tr-organization': tenant.orgId }).put('/api/dataset', {
      dataset_id: ids.off,
      server_configuration: { SEMANTIC_ENABLED: true },
    });
    expect(res.status, res.text).toBe(200);
    // Enqueued by the update itself, not left to the workers' next sweep.
    expect(await embedJobsAdded()).toContain(embedJobId(ids.off));
    await waitUsage(ids.off, (u) => u.chunks_pending_embedding === 0 && u.chunks_embedded === 8);
    expect(offFake.requests.flat()).toHaveLength(8);
  }, 90_000);
});
