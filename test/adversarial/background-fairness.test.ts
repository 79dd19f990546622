/**
 * Background work is fair across tenants: while one dataset has a big embedding backlog behind a
 * slow embedding provider, another dataset's few new chunks are embedded (and found by semantic
 * search) within seconds, not after the backlog; nothing is embedded twice and usage shows progress.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type Client } from '../helpers/api.js';
import { FAKE_DIM, startFakeEmbeddings, type FakeEmbeddings } from '../helpers/fake-embeddings.js';
import { createDataset, createTenant } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
let slow: FakeEmbeddings;
let fast: FakeEmbeddings;
let a: Client;
let b: Client;
let aId: string;
let bId: string;

const BACKLOG = 1200;
/** Per request of A's provider: A's backlog alone takes BACKLOG / 32 requests x this (~38 s). */
const SLOW_MS = 1000;
/** B's chunks must be searchable within this; far below A's backlog time, generous for a loaded machine. */
const BOUND_MS = 12_000;

const config = (fake: FakeEmbeddings) => ({ EMBEDDING_BASE_URL: fake.baseUrl, EMBEDDING_MODEL_NAME: 'fake', EMBEDDING_SIZE: FAKE_DIM });

beforeAll(async () => {
  slow = await startFakeEmbeddings();
  fast = await startFakeEmbeddings();
  stack = await startStack({ env: { QUARRY_EMBED_JOBS: 'true', QUARRY_EMBED_BACKOFF_MS: '50' } });
  const tenantA = await createTenant(stack);
  const tenantB = await createTenant(stack);
  aId = await createDataset(stack, tenantA.orgId, tenantA.ownerKey, { server_configuration: config(slow) });
  bId = await createDataset(stack, tenantB.orgId, tenantB.ownerKey, { server_configuration: config(fast) });
  a = client(stack.baseUrl, { authorization: tenantA.ownerKey, 'tr-dataset': aId });
  b = client(stack.baseUrl, { authorization: tenantB.ownerKey, 'tr-dataset': bId });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await slow?.close();
  await fast?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const embeddedTexts = (fake: FakeEmbeddings) => fake.requests.reduce((n, r) => n + r.length, 0);

describe('background embedding fairness', () => {
  it("embeds a small dataset's chunks within seconds while another dataset has a long backlog", async () => {
    slow.delayMs = SLOW_MS;
    for (let i = 0; i < BACKLOG; i += 120) {
      const batch = Array.from({ length: 120 }, (_, j) => ({ chunk_html: `backlog abstract ${i + j} about proteins and cells`, tracking_id: `a-${i + j}` }));
      const res = await a.post('/api/chunk', batch);
      expect(res.status, res.text).toBe(200);
    }
    // A's job is running (its provider has been asked) before B writes anything.
    const started = Date.now();
    while (slow.requests.length === 0) {
      if (Date.now() - started > 30_000) throw new Error(`A's embedding never started\n${stack.output().slice(-3000)}`);
      await sleep(100);
    }
    const usageA = await a.get(`/api/dataset/usage/${aId}`);
    expect(usageA.status, usageA.text).toBe(200);
    expect(usageA.body.chunk_count).toBe(BACKLOG);
    expect(usageA.body.chunks_embedded + usageA.body.chunks_pending_embedding).toBe(BACKLOG);
    expect(usageA.body.chunks_pending_embedding).toBeGreaterThan(BACKLOG / 2);

    const t0 = Date.now();
    const small = Array.from({ length: 8 }, (_, j) => ({ chunk_html: `zebra giraffe savanna note ${j}`, tracking_id: `b-${j}` }));
    expect((await b.post('/api/chunk', small)).status).toBe(200);
    let found = 0;
    let last: unknown;
    while (Date.now() - t0 < BOUND_MS) {
      const res = await b.post('/api/chunk/search', { query: 'zebra giraffe savanna', search_type: 'semantic', page_size: 20 });
      last = res.text;
      if (res.status === 200) found = res.body.chunks.length;
      if (found === small.length) break;
      await sleep(250);
    }
    const waited = Date.now() - t0;
    console.log(`B's ${small.length} chunks were semantically searchable ${waited} ms after they were written (A's backlog alone: ~${Math.round((BACKLOG / 32) * SLOW_MS / 1000)} s)`);
    expect(found, `B's chunks not all semantically searchable after ${waited} ms (A pending: ${(await a.get(`/api/dataset/usage/${aId}`)).body.chunks_pending_embedding}): ${String(last).slice(0, 300)}`).toBe(small.length);
    const usageB = await b.get(`/api/dataset/usage/${bId}`);
    expect(usageB.body).toMatchObject({ chunk_count: 8, chunks_pending_embedding: 0, chunks_embedded: 8 });
    // A is still far from done: the bound above is not just "everything finished".
    expect((await a.get(`/api/dataset/usage/${aId}`)).body.chunks_pending_embedding).toBeGreaterThan(BACKLOG / 4);

    // Let A finish quickly: every chunk embedded exactly once, and the events count them once.
    slow.delayMs = 0;
    const until = Date.now() + 120_000;
    let usage: any;
    while (Date.now() < until) {
      usage = (await a.get(`/api/dataset/usage/${aId}`)).body;
      if (usage.chunks_pending_embedding === 0) break;
      await sleep(250);
    }
    expect(usage).toMatchObject({ chunk_count: BACKLOG, chunks_pending_embedding: 0, chunks_embedded: BACKLOG });
    expect(embeddedTexts(slow)).toBe(BACKLOG);
    let events: any;
    for (let i = 0; i < 40; i++) {
      events = await a.post('/api/dataset/events', { event_types: ['chunks_embedded'], page: 1, page_size: 100 });
      const total = (events.body.events ?? []).reduce((n: number, e: any) => n + (typeof e.event_data === 'string' ? JSON.parse(e.event_data) : e.event_data).count, 0);
      if (total === BACKLOG) break;
      await sleep(250);
    }
    const total = (events.body.events ?? []).reduce((n: number, e: any) => n + (typeof e.event_data === 'string' ? JSON.parse(e.event_data) : e.event_data).count, 0);
    expect(total, JSON.stringify(events.body).slice(0, 500)).toBe(BACKLOG);
  }, 240_000);
});
