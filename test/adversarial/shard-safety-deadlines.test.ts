/**
 * Issue 9, item 9: a core deadline answers 504 and an unreachable core 503 with Retry-After,
 * each with a {message} that says which; and work the caller abandoned stops (here: the query
 * embedding request to an OpenAI-compatible server is aborted at the deadline, or as soon as
 * the HTTP client goes away).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';

const DEADLINE_MS = 3000;

/** An OpenAI-compatible embeddings endpoint that never answers, recording when each request opened and closed. */
interface StalledServer {
  readonly baseUrl: string;
  readonly requests: { openedAt: number; closedAt: number | null }[];
  close(): Promise<void>;
}

async function startStalledServer(): Promise<StalledServer> {
  const requests: { openedAt: number; closedAt: number | null }[] = [];
  const server = http.createServer((req) => {
    const r = { openedAt: Date.now(), closedAt: null as number | null };
    requests.push(r);
    req.resume();
    // The caller aborting its fetch closes the connection: that is what "the work stopped" means here.
    req.socket.once('close', () => (r.closedAt = Date.now()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let stack: Stack;
let tenant: Tenant;
let stalled: StalledServer;

/** Waits until `fn` is true, up to `ms`. */
async function until(fn: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!fn() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
}

beforeAll(async () => {
  stalled = await startStalledServer();
  stack = await startStack({ env: { QUARRY_CORE_IN_PROCESS: 'false', QUARRY_CORE_DEADLINE_MS: String(DEADLINE_MS) } });
  tenant = await createTenant(stack);
  const res = await tenant.org.put('/api/dataset', {
    dataset_id: tenant.datasetId,
    server_configuration: { EMBEDDING_BASE_URL: stalled.baseUrl, EMBEDDING_MODEL_NAME: 'stalled', EMBEDDING_SIZE: 8 },
  });
  expect(res.status, res.text).toBe(200);
  const chunk = await tenant.ds.post('/api/chunk', { chunk_html: 'deadline test chunk', tracking_id: 'd-1' });
  expect(chunk.status, chunk.text).toBe(200);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await stalled?.close();
});

describe('core deadlines and outages', () => {
  it('answers 504 when the core passes its deadline, and the embedding request is aborted then', async () => {
    const seen = stalled.requests.length;
    const started = Date.now();
    const res = await tenant.ds.post('/api/chunk/search', { query: 'deadline', search_type: 'semantic' });
    const took = Date.now() - started;
    expect(res.status, res.text).toBe(504);
    expect(res.body.message).toMatch(/deadline exceeded/i);
    expect(took).toBeLessThan(DEADLINE_MS + 5_000);
    // The core gave up on the model server too: its request closed near the deadline, not at the embedder's own timeout.
    expect(stalled.requests.length).toBeGreaterThan(seen);
    const request = stalled.requests[seen]!;
    await until(() => request.closedAt !== null, 5_000);
    expect(request.closedAt, 'the embedding request was left running').not.toBeNull();
    expect(request.closedAt! - request.openedAt).toBeLessThan(DEADLINE_MS + 2_500);
  }, 30_000);

  it('stops the embedding request as soon as the HTTP client goes away', async () => {
    const seen = stalled.requests.length;
    const ctl = new AbortController();
    const pending = fetch(`${stack.baseUrl}/api/chunk/search`, {
      method: 'POST',
      headers: { authorization: tenant.ownerKey, 'tr-dataset': tenant.datasetId, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'abandoned', search_type: 'semantic' }),
      signal: ctl.signal,
    }).catch((err: unknown) => err);
    await until(() => stalled.requests.length > seen, 5_000);
    expect(stalled.requests.length, 'the search never reached the model server').toBeGreaterThan(seen);
    const request = stalled.requests[seen]!;
    const abortedAt = Date.now();
    ctl.abort();
    await pending;
    await until(() => request.closedAt !== null, DEADLINE_MS + 3_000);
    expect(request.closedAt, 'the embedding request was left running').not.toBeNull();
    // Well before the core's own deadline would have stopped it.
    expect(request.closedAt! - abortedAt).toBeLessThan(DEADLINE_MS - 1_000);
  }, 30_000);

  it('answers 503 with Retry-After while the core is down, and 200 again once it is back', async () => {
    const ok = await tenant.ds.post('/api/chunk/search', { query: 'deadline', search_type: 'bm25' });
    expect(ok.status, ok.text).toBe(200);
    await stack.kill('core', 'SIGKILL');
    const res = await tenant.ds.post('/api/chunk/search', { query: 'deadline', search_type: 'bm25' });
    expect(res.status, res.text).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.body.message).toMatch(/search core unavailable/);
    await stack.start('core');
    let back = 0;
    for (let i = 0; i < 100 && back !== 200; i++) {
      back = (await tenant.ds.post('/api/chunk/search', { query: 'deadline', search_type: 'bm25' })).status;
      if (back !== 200) await new Promise((r) => setTimeout(r, 200));
    }
    expect(back).toBe(200);
  }, 60_000);
});
