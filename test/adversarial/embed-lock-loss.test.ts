/**
 * A job lock lost while a dataset's backlog is embedded (what a stalled event loop or a Redis
 * hiccup causes) costs at most one turn: the worker does not keep failing to renew it for the
 * rest of the backlog, the dataset is still embedded completely, and no chunk is embedded twice.
 * A job process killed mid-turn loses nothing and counts nothing twice.
 */
import { Redis } from 'ioredis';
import { queryStore } from '../helpers/store-snapshot.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type Client } from '../helpers/api.js';
import type { FakeEmbeddings } from '../helpers/fake-embeddings.js';
import { startFakeEmbeddingSetup, type Tenant } from '../helpers/fixtures.js';
import type { Stack } from '../helpers/stack.js';
import { embedJobId, Queues } from '../../core/domain/queues.js';

let stack: Stack;
let fake: FakeEmbeddings;
let ds: Client;
let datasetId: string;
let redis: Redis;

const BACKLOG = 1440;
/** The job lock (QUARRY_JOB_LOCK_MS): renewed every 2 s, and a killed worker's job is taken over within ~6 s. */
const LOCK_MS = 4000;

beforeAll(async () => {
  let tenant: Tenant;
  ({ fake, stack, tenant, datasetId } = await startFakeEmbeddingSetup({ QUARRY_JOB_LOCK_MS: String(LOCK_MS) }));
  ds = client(stack.baseUrl, { authorization: tenant.ownerKey, 'tr-dataset': datasetId });
  redis = new Redis(stack.env.QUARRY_REDIS_URL!);
}, 60_000);

afterAll(async () => {
  redis?.disconnect();
  await stack?.stop();
  await fake?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('embed job lock loss', () => {
  it('costs at most one turn, and every chunk is embedded exactly once', async () => {
    // 45 requests of 32 texts at 0.15 s (0.25 s before): ~7 s of backlog with its store writes,
    // several lock renewals (every LOCK_MS / 2) after the lock is lost: a worker that kept failing
    // to renew would log each (a build whose job never ends its turn logged 6). A turn (~1 s)
    // still spans at most one renewal.
    fake.delayMs = 150;
    for (let i = 0; i < BACKLOG; i += 120) {
      const batch = Array.from({ length: 120 }, (_, j) => ({ chunk_html: `lock test chunk ${i + j} alpha beta`, tracking_id: `c-${i + j}` }));
      expect((await ds.post('/api/chunk', batch)).status).toBe(200);
    }
    const lockKey = `bull:${Queues.embed}:${embedJobId(datasetId)}:lock`;
    const until = Date.now() + 30_000;
    while (!(await redis.exists(lockKey))) {
      if (Date.now() > until) throw new Error(`the embed job never took its lock\n${stack.output().slice(-3000)}`);
      await sleep(50);
    }
    await sleep(1500);
    // The state a lock is in once its holder missed every renewal for the lock duration.
    expect(await redis.del(lockKey)).toBe(1);

    const deadline = Date.now() + 120_000;
    let usage: any;
    while (Date.now() < deadline) {
      usage = (await ds.get(`/api/dataset/usage/${datasetId}`)).body;
      if (usage.chunks_pending_embedding === 0) break;
      await sleep(250);
    }
    expect(usage, stack.output().slice(-3000)).toMatchObject({ chunk_count: BACKLOG, chunks_pending_embedding: 0 });
    await sleep(2000);
    const texts = fake.requests.reduce((n, r) => n + r.length, 0);
    expect(texts, 'a chunk was embedded twice').toBe(BACKLOG);
    const renewFailures = stack.output().split('\n').filter((l) => l.includes('could not renew lock')).length;
    expect(renewFailures, stack.output().slice(-3000)).toBeLessThanOrEqual(1);
  }, 240_000);

  it('loses nothing and counts nothing twice when the job process is killed mid-turn', async () => {
    const before = fake.requests.reduce((n, r) => n + r.length, 0);
    const KILLED = 960;
    // Each request answered after 0.15 s (0.3 s before; the fake counts a request when it answers):
    // the kill, within 50 ms of the 7th answer, still lands mid-turn, while that batch is stored
    // or the next request waits for its answer.
    fake.delayMs = 150;
    for (let i = 0; i < KILLED; i += 120) {
      const batch = Array.from({ length: 120 }, (_, j) => ({ chunk_html: `kill test chunk ${i + j} gamma delta`, tracking_id: `k-${i + j}` }));
      expect((await ds.post('/api/chunk', batch)).status).toBe(200);
    }
    while (fake.requests.reduce((n, r) => n + r.length, 0) - before < 200) await sleep(50);
    await stack.kill('jobs', 'SIGKILL');
    await stack.start('jobs');
    const total = BACKLOG + KILLED;
    const deadline = Date.now() + 150_000;
    let usage: any;
    while (Date.now() < deadline) {
      usage = (await ds.get(`/api/dataset/usage/${datasetId}`)).body;
      if (usage.chunks_pending_embedding === 0) break;
      await sleep(250);
    }
    expect(usage, stack.output().slice(-3000)).toMatchObject({ chunk_count: total, chunks_pending_embedding: 0, chunks_embedded: total });
    const [counts] = await queryStore<{ n: number; d: number }>(stack, 'SELECT COUNT(*) AS n, COUNT(DISTINCT chunk_id) AS d FROM chunk_vectors WHERE dataset_id = ?', datasetId);
    expect(counts).toEqual({ n: total, d: total });
    // At most the batch in flight at the kill is sent to the provider again.
    const texts = fake.requests.reduce((n, r) => n + r.length, 0) - before;
    expect(texts).toBeGreaterThanOrEqual(KILLED);
    expect(texts).toBeLessThanOrEqual(KILLED + 32);
    // The events never count a chunk twice (a killed turn's vectors may go uncounted).
    await sleep(1000);
    const events = await ds.post('/api/dataset/events', { event_types: ['chunks_embedded'], page: 1, page_size: 100 });
    const counted = events.body.events.reduce((n: number, e: any) => n + JSON.parse(e.event_data).count, 0);
    expect(counted).toBeLessThanOrEqual(total);
    expect(counted).toBeGreaterThanOrEqual(BACKLOG);
  }, 240_000);
});
