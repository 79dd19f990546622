/**
 * Search analytics end to end: searches over HTTP against the real processes, records checked in
 * the store (read-only). The stack runs on a private Redis that is killed for 5 s while
 * searches go on, and killed again while the facade shuts down: no record may be lost or doubled.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiResponse } from '../helpers/api.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { startOwnRedis, type OwnRedis } from '../helpers/own-redis.js';
import { startStack, waitHealthy, type Stack } from '../helpers/stack.js';
import { countRows, queryStore } from '../helpers/store-snapshot.js';

let redis: OwnRedis;
let stack: Stack;
let t: Tenant;

/** A `search_queries` row as stored. */
interface SearchRow {
  id: string;
  dataset_id: string;
  search_type: string;
  search_method: string;
  query: string;
  request_params: string;
  latency: number;
  top_score: number;
  results: string;
  result_count: number;
  user_id: string | null;
  metadata: string | null;
  created_at: number;
}

/**
 * Redis's outage while searches go on (10 s before): long enough for the facade's retries of its
 * batches to reach their longest backoff (2 s, after 0.25 + 0.5 + 1 s) and fail at it again, with
 * a few hundred searches buffered meanwhile; a longer outage only repeats the same 2 s retries.
 * The job workers' periodic stall checks still fall into it at least twice: the stack's job lock
 * is 4 s (a check every 2 s) where the default 10 s lock checked every 5 s.
 */
const OUTAGE_MS = 5000;
/**
 * The shutdown grace period of the stack's processes (QUARRY_SHUTDOWN_GRACE_MS, 10 s by default):
 * the job workers stopped while Redis is away wait it out on their hanging BullMQ closes, so the
 * last test takes it whole; 3 s is the same wait, shorter.
 */
const GRACE_MS = 3000;

const WORDS = ['aspirin', 'fever', 'ibuprofen', 'children', 'zebrafish', 'regeneration', 'heart', 'sleep'];

beforeAll(async () => {
  redis = await startOwnRedis();
  stack = await startStack({ env: { QUARRY_REDIS_URL: redis.url, QUARRY_JOB_LOCK_MS: '4000', QUARRY_SHUTDOWN_GRACE_MS: String(GRACE_MS) } });
  t = await createTenant(stack);
  const res = await t.ds.post(
    '/api/chunk',
    Array.from({ length: 40 }, (_, i) => ({
      tracking_id: `c${i}`,
      chunk_html: `${WORDS[i % WORDS.length]} ${WORDS[(i * 3 + 1) % WORDS.length]} study number ${i}`,
    })),
  );
  expect(res.status, res.text).toBe(200);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await redis?.stop();
});

/** Rows of this dataset with these ids. */
function rows(ids: readonly string[]): Promise<SearchRow[]> {
  // An IN list of placeholders (NULL when empty, matching nothing): SQL both stores run.
  return queryStore<SearchRow>(
    stack,
    `SELECT * FROM search_queries WHERE dataset_id = ? AND id IN (${ids.map(() => '?').join(', ') || 'NULL'})`,
    t.datasetId,
    ...ids,
  );
}

const totalRows = (): Promise<number> => countRows(stack, 'search_queries', 'dataset_id = ?', t.datasetId);

async function until(what: string, cond: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}\n${stack.output().slice(-4000)}`);
}

/** A search body: query, user and metadata vary with `i`. */
function body(i: number): Record<string, unknown> {
  return {
    search_type: 'bm25',
    query: i % 11 === 10 ? 'nothingmatcheswhatsoever' : `${WORDS[i % WORDS.length]} ${WORDS[(i + 3) % WORDS.length]}`,
    page_size: 1 + (i % 5),
    user_id: i % 4 === 0 ? undefined : `user-${i % 3}`,
    metadata: i % 2 === 0 ? { client: 'test', n: i, nested: { tags: ['a', 'b'] } } : undefined,
  };
}

/** A search sent and its answer. */
type Searched = { sent: Record<string, unknown>; res: ApiResponse };

/** Sends search `i`; returns what was sent and answered. */
async function search(i: number): Promise<Searched> {
  const sent = JSON.parse(JSON.stringify(body(i))) as Record<string, unknown>;
  const res = await t.ds.post('/api/chunk/search', sent);
  expect(res.status, res.text).toBe(200);
  return { sent, res };
}

/** Asserts the stored record of each search against its request and response. */
async function expectRecorded(done: readonly Searched[]): Promise<void> {
  const byId = new Map((await rows(done.map((d) => d.res.body.id))).map((r) => [r.id, r]));
  expect(byId.size).toBe(done.length);
  for (const { sent, res } of done) {
    const row = byId.get(res.body.id)!;
    const chunks = res.body.chunks as { chunk: { id: string }; score: number }[];
    expect(row).toMatchObject({
      dataset_id: t.datasetId,
      search_type: 'search',
      search_method: 'bm25',
      query: sent.query,
      user_id: (sent.user_id as string | undefined) ?? null,
      result_count: chunks.length,
      top_score: chunks[0]?.score ?? 0,
    });
    expect(JSON.parse(row.request_params)).toEqual(sent);
    expect(row.metadata === null ? null : JSON.parse(row.metadata)).toEqual(sent.metadata ?? null);
    expect(JSON.parse(row.results)).toEqual(chunks.map((c) => ({ id: c.chunk.id, score: c.score })));
    expect(row.latency).toBeGreaterThan(0);
    expect(row.latency).toBeLessThan(5000);
    expect(Math.abs(row.created_at - Date.now())).toBeLessThan(120_000);
  }
}

describe('search analytics', () => {
  it('stores one correct record per search, named by the response id', async () => {
    const before = await totalRows();
    const done: Searched[] = [];
    for (let i = 0; i < 30; i++) done.push(await search(i));
    expect(done.some((d) => d.res.body.chunks.length === 0)).toBe(true);
    expect(new Set(done.map((d) => d.res.body.id)).size).toBe(30);
    await until('30 records', async () => (await rows(done.map((d) => d.res.body.id))).length === 30, 20_000);
    await expectRecorded(done);
    expect(await totalRows()).toBe(before + 30);
  });

  it(`loses none and doubles none while Redis is away for ${OUTAGE_MS / 1000} s`, async () => {
    const before = await totalRows();
    const done: Searched[] = [];
    // Searches before, during and after the outage, two clients at a time.
    const searching = { on: true };
    let n = 0;
    const client = async () => {
      while (searching.on) {
        done.push(await search(n++));
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const clients = [client(), client()];
    await new Promise((r) => setTimeout(r, 500));
    await redis.kill();
    const killedAt = done.length;
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    const duringOutage = done.length - killedAt;
    await redis.start();
    await new Promise((r) => setTimeout(r, 1000));
    searching.on = false;
    await Promise.all(clients);
    // Searches never needed Redis: they went on during the outage, buffered by the facade.
    expect(duringOutage).toBeGreaterThan(50);
    expect(stack.output()).toMatch(/analytics: could not send a batch/);
    const ids = done.map((d) => d.res.body.id);
    await until(`${ids.length} records`, async () => (await rows(ids)).length === ids.length, 60_000);
    // Give a duplicate time to show up before counting.
    await new Promise((r) => setTimeout(r, 1000));
    expect(await totalRows()).toBe(before + ids.length);
    await expectRecorded(done);
    // The job workers rode out the outage (they are the ones that stored the records).
    expect(stack.exits.jobs, stack.output().slice(-3000)).toBeUndefined();
    await waitHealthy(stack.baseUrl, 20_000, () => stack.output().slice(-3000));
  }, 120_000);

  it('a facade stopped while Redis is away writes its buffered records to the store', async () => {
    const before = await totalRows();
    await redis.kill();
    const done: Searched[] = [];
    for (let i = 0; i < 15; i++) done.push(await search(100 + i));
    expect(await rows(done.map((d) => d.res.body.id))).toHaveLength(0);
    expect(await stack.kill('facade', 'SIGTERM'), stack.output().slice(-3000)).toBe(0);
    // Written by the facade itself on its way out: present without Redis or the job workers.
    await expectRecorded(done);
    expect(await totalRows()).toBe(before + 15);
    await redis.start();
    await stack.start('facade');
    const after = [await search(200)];
    await until('record after restart', async () => (await rows([after[0]!.res.body.id])).length === 1, 20_000);
    await expectRecorded(after);
    expect(await totalRows()).toBe(before + 16);
  }, 120_000);
  it.runIf(process.platform === 'linux')('the job workers take analytics batches in one SCHED_IDLE thread; every other thread at their nice', async () => {
    const pid = stack.pid('jobs')!;
    // /proc/<pid>/task/<tid>/stat: after the command's ')', nice is the 17th field and the policy the 39th.
    const threads = fs.readdirSync(`/proc/${pid}/task`).map((tid) => {
      const f = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return { tid, nice: Number(f[16]), policy: Number(f[38]) };
    });
    const SCHED_IDLE = 5;
    expect(threads.filter((t) => t.policy === SCHED_IDLE)).toHaveLength(1);
    // V8's platform threads started before the process lowered its priority: they must be lowered too.
    for (const t of threads.filter((x) => x.policy !== SCHED_IDLE)) expect(t.nice, `thread ${t.tid}`).toBe(10);
  });

  it('the job workers exit on SIGTERM while Redis is away, within the grace period', async () => {
    await redis.kill();
    const started = Date.now();
    // The helper's SIGKILL comes only after 40 s, so a process hanging on Redis shows as a signal.
    const code = await stack.kill('jobs', 'SIGTERM', 40_000);
    // The process exits by itself within QUARRY_SHUTDOWN_GRACE_MS plus 5 s (the 10 s margin of the
    // default grace's 20 s limit kept).
    expect(typeof code, `${String(code)}\n${stack.output().slice(-3000)}`).toBe('number');
    expect(Date.now() - started).toBeLessThan(GRACE_MS + 10_000);
    await redis.start();
    await stack.start('jobs');
  }, 60_000);
});
