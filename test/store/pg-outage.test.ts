/**
 * PostgreSQL crashes (every server process SIGKILLed) in the middle of an ingest: while it is
 * down, writes and reads answer 503 with Retry-After and health names the store; nothing of the
 * service crashes or restarts; once it is back every acknowledged chunk is in the store and the
 * index equals the store, without touching the service's processes.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../helpers/api.js';
import { eventually } from '../helpers/eventually.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { startOwnPostgres, type OwnPostgres } from '../helpers/own-postgres.js';
import { startStack, type Stack } from '../helpers/stack.js';

let pgServer: OwnPostgres;
let stack: Stack;
let tenant: Tenant;

beforeAll(async () => {
  pgServer = startOwnPostgres();
  stack = await startStack({ env: { QUARRY_DATABASE_URL: pgServer.url } });
  tenant = await createTenant(stack);
});

afterAll(async () => {
  await stack?.stop();
  pgServer?.stop();
});

/** Tracking ids of the dataset's chunks, read straight from PostgreSQL. */
async function storedTrackingIds(datasetId: string): Promise<Set<string>> {
  const c = new pg.Client({ connectionString: pgServer.url });
  await c.connect();
  try {
    const rows = (await c.query<{ tracking_id: string }>('SELECT tracking_id FROM chunks WHERE dataset_id = $1', [datasetId])).rows;
    return new Set(rows.map((r) => r.tracking_id));
  } finally {
    await c.end();
  }
}

describe('PostgreSQL killed during ingest', () => {
  it('answers 503 while it is down, loses nothing acknowledged, and recovers by itself', async () => {
    const acknowledged = new Set<string>();
    const refusals: { status: number; retryAfter: string | null; message: unknown }[] = [];
    let next = 0;
    let writing = true;
    const writer = async (): Promise<void> => {
      while (writing) {
        const ids = Array.from({ length: 10 }, () => `c${next++}`);
        const res = await tenant.ds
          .post(
            '/api/chunk',
            ids.map((id) => ({ tracking_id: id, chunk_html: `outage survivor word${id}` })),
          )
          .catch((err: unknown) => {
            // The stack went away (the test failed and stopped it): end the loop.
            writing = false;
            throw err;
          });
        if (res.status === 200) {
          for (const id of ids) acknowledged.add(id);
        } else {
          refusals.push({ status: res.status, retryAfter: res.headers.get('retry-after'), message: res.body?.message });
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    };
    const writers = [writer(), writer()];
    const stages: string[] = [];
    const mark = (what: string): void => void stages.push(`${what} (${acknowledged.size} acknowledged, ${refusals.length} refused)`);
    try {
      await eventually({ what: '200 chunks acknowledged before the crash' }, () => acknowledged.size >= 200);

      mark('killing PostgreSQL');
      pgServer.kill();
      const atCrash = acknowledged.size;
      // Down: writes and reads are refused with 503 + Retry-After, and health names the store.
      await eventually({ what: 'writes refused while PostgreSQL is down', timeoutMs: 20_000 }, () => refusals.length >= 3);
      const search = await tenant.ds.post('/api/chunk/search', { query: 'survivor', search_type: 'bm25' });
      const get = await tenant.ds.get('/api/chunk/tracking_id/c0');
      for (const res of [search, get]) {
        expect(res.status, res.text).toBe(503);
        expect(res.headers.get('retry-after')).toBe('1');
        expect(res.body.message).toMatch(/store|PostgreSQL/i);
      }
      const health = await client(stack.baseUrl).get('/api/health');
      expect(health.status).toBe(503);
      expect(health.body.checks.store).toMatch(/PostgreSQL/);

      mark('restarting PostgreSQL');
      pgServer.start();
      mark('restarted');
      await eventually({ what: 'writes acknowledged again after the restart', timeoutMs: 60_000 }, () => acknowledged.size >= atCrash + 100);
    } catch (err) {
      throw new Error(`${(err as Error).message}\nstages: ${stages.join(' -> ')}\nrefusals: ${JSON.stringify(refusals.slice(0, 3))} ... ${JSON.stringify(refusals.slice(-3))}\n${stack.output().split('\n').filter((l) => !l.includes('catch-up failed')).slice(-40).join('\n').slice(-8000)}`);
    } finally {
      writing = false;
      await Promise.allSettled(writers);
    }

    for (const r of refusals) {
      expect(r.status, JSON.stringify(r)).toBe(503);
      expect(r.retryAfter).toBe('1');
      expect(typeof r.message).toBe('string');
    }
    // Every acknowledged chunk survived the crash (it may hold more: a commit whose answer was lost).
    const stored = await storedTrackingIds(tenant.datasetId);
    for (const id of acknowledged) expect(stored.has(id), id).toBe(true);
    // The index equals the store: it counts every stored chunk, and finds acknowledged ones by their own word.
    let counted = '';
    await eventually({ what: `the index to count all ${stored.size} stored chunks`, timeoutMs: 30_000, context: () => `last count: ${counted}` }, async () => {
      const res = await tenant.ds.post('/api/chunk/count', { query: 'survivor', search_type: 'bm25', limit: 10_000 });
      counted = `${res.status} ${res.text}`;
      return res.status === 200 && res.body.count === stored.size;
    });
    for (const id of [...acknowledged].filter((_, i) => i % 97 === 0)) {
      const res = await tenant.ds.post('/api/chunk/search', { query: `word${id}`, search_type: 'bm25' });
      expect(res.status, res.text).toBe(200);
      expect(res.body.chunks.map((c: any) => c.chunk.tracking_id)).toEqual([id]);
    }
    // No process of the service exited or was restarted.
    expect(stack.exits).toEqual({});
    expect((await client(stack.baseUrl).get('/api/health')).status).toBe(200);
  }, 180_000);
});
