/**
 * The facade's analytics recorder against a real Redis (a private one, killed and restarted here),
 * the real analytics job worker and a real SQLite store: batching, delivery through a Redis
 * outage, the bounded buffer, the last-resort write on close, and idempotent redelivery.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Queue, type Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { pino, type Logger } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ANALYTICS_FLUSH_JOB,
  ANALYTICS_PAYLOAD_FIELD,
  ANALYTICS_QUEUE,
  isBatchRef,
  type AnalyticsBatch,
  type AnalyticsJobData,
  type RecommendationRecord,
  type SearchRecord,
} from '../../core/domain/analytics.js';
import { newId } from '../../core/domain/ids.js';
import { connectAnalyticsQueue, payloadWriter } from '../../facade/analytics/analytics-queue.js';
import { startAnalytics, type RunningAnalytics } from '../../facade/analytics/start-analytics.js';
import { RECORDER_DEFAULTS } from '../../facade/analytics/recorder.js';
import type { Store } from '../../store/repository.js';
import { openSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { analyticsWorker } from '../../workers/jobs/analytics.js';
import { startOwnRedis, type OwnRedis } from '../helpers/own-redis.js';
import { eventually } from '../helpers/eventually.js';

let redis: OwnRedis;
let dataDir: string;
let store: Store;
let workerConnection: Redis;
let worker: Worker<AnalyticsJobData>;
/** Records per job the worker has run. */
const jobSizes: number[] = [];
/** Ids of the jobs the worker has completed, in order (a late job of an earlier test is not this test's). */
const completedIds: string[] = [];
const logLines: string[] = [];
let logger: Logger;
const running: RunningAnalytics[] = [];

const DATASET = newId();

function search(i: number, datasetId = DATASET): SearchRecord {
  return {
    id: newId(),
    datasetId,
    kind: 'search',
    searchMethod: 'bm25',
    query: `query ${i}`,
    requestParams: { query: `query ${i}`, search_type: 'bm25', user_id: `u${i % 3}` },
    latencyMs: 1.5 + i,
    topScore: i / 10,
    results: [{ id: newId(), score: i / 10 }],
    resultCount: 1,
    userId: `u${i % 3}`,
    metadata: { i },
    createdAt: Date.now(),
  };
}

function recommendation(i: number): RecommendationRecord {
  return {
    id: newId(),
    datasetId: DATASET,
    recommendationType: i % 2 === 0 ? 'Chunk' : 'Group',
    positiveIds: [newId()],
    negativeIds: [],
    positiveTrackingIds: [`p${i}`],
    negativeTrackingIds: [`n${i}`],
    requestParams: { positive_tracking_ids: [`p${i}`] },
    results: [],
    topScore: 0,
    userId: null,
    metadata: null,
    createdAt: Date.now(),
  };
}

const openReadOnly = () => new Database(path.join(dataDir, 'quarry.sqlite'), { readonly: true, fileMustExist: true });

/** How many of `ids` a table holds (the primary key makes that at most once each). */
function storedCount(table: 'search_queries' | 'recommendation_queries', ids: readonly string[]): number {
  const db = openReadOnly();
  try {
    const q = db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE id IN (SELECT value FROM json_each(?))`);
    return (q.get(JSON.stringify(ids)) as { n: number }).n;
  } finally {
    db.close();
  }
}

async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  await eventually({ what, timeoutMs: ms, intervalMs: 50, context: () => `log:\n${logLines.slice(-20).join('')}\nredis:\n${redis.output().slice(-2000)}` }, cond);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A batch as the recorder sends it. */
const encoded = (batch: AnalyticsBatch) => ({ id: batch.id, records: batch.searches.length + batch.recommendations.length, json: Buffer.from(JSON.stringify(batch)) });

function recorder(options: Parameters<typeof startAnalytics>[3] = {}): RunningAnalytics {
  const r = startAnalytics(redis.url, store.analytics, logger, { sendTimeoutMs: 2000, maxBackoffMs: 500, ...options });
  running.push(r);
  return r;
}

beforeAll(async () => {
  redis = await startOwnRedis();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-analytics-rec-'));
  store = openSqliteStore(dataDir);
  logger = pino({ level: 'info' }, { write: (line: string) => void logLines.push(line) });
  workerConnection = new Redis(redis.url, { maxRetriesPerRequest: null });
  workerConnection.on('error', () => {});
  worker = analyticsWorker(store, workerConnection, logger);
  worker.on('completed', (job) => {
    jobSizes.push(isBatchRef(job.data) ? job.data.records : job.data.searches.length + job.data.recommendations.length);
    completedIds.push(job.id!);
  });
});

afterEach(async () => {
  if (!redis.running()) await redis.start();
  logLines.length = 0;
  while (running.length > 0) await running.pop()!.close();
});

afterAll(async () => {
  await worker?.close();
  workerConnection?.disconnect();
  await store?.close();
  await redis?.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('analytics recorder', () => {
  it('returns at once and delivers every record in batches of at most batchSize', async () => {
    const a = recorder();
    const records = Array.from({ length: 1234 }, (_, i) => search(i));
    const recs = Array.from({ length: 10 }, (_, i) => recommendation(i));
    const before = jobSizes.length;
    const t0 = performance.now();
    for (const r of records) a.recorder.recordSearch(r);
    for (const r of recs) a.recorder.recordRecommendation(r);
    // Pushing is synchronous and in-memory: no Redis round trip per record.
    expect(performance.now() - t0).toBeLessThan(200);
    await until('all records stored', () => storedCount('search_queries', records.map((r) => r.id)) === 1234);
    await until('recommendations stored', () => storedCount('recommendation_queries', recs.map((r) => r.id)) === 10);
    await until('jobs counted', () => jobSizes.slice(before).reduce((a, b) => a + b, 0) === 1244);
    const sizes = jobSizes.slice(before);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(RECORDER_DEFAULTS.batchSize);
    expect(sizes.length).toBeGreaterThanOrEqual(3);
    expect(a.recorder.stats()).toEqual({ buffered: 0, bufferedBytes: 0, delivered: 1244, dropped: 0 });

    // Stored as recorded, JSON columns included.
    const first = records[7]!;
    expect(await store.analytics.getSearch(DATASET, first.id)).toEqual(first);
    const page = await store.analytics.listSearches(DATASET, { limit: 5, offset: 0 });
    expect(page).toHaveLength(5);
    expect(await store.analytics.getSearch(newId(), first.id)).toBeUndefined();
  });

  // 5 s of outage (10 s before): with maxBackoffMs 500 the retries reach their longest backoff
  // within 0.75 s and then fail at it about ten times, with ~900 records buffered; a longer outage
  // only repeats the same retry.
  it('keeps records through a 5 s Redis outage and delivers each exactly once', async () => {
    const a = recorder();
    const ids: string[] = [];
    const record = (n: number) => {
      for (let i = 0; i < n; i++) {
        const r = search(i);
        ids.push(r.id);
        a.recorder.recordSearch(r);
      }
    };
    record(50);
    await until('first records stored', () => storedCount('search_queries', ids) === 50);
    await redis.kill();
    const outageStart = Date.now();
    while (Date.now() - outageStart < 5000) {
      record(7);
      await sleep(40);
    }
    const duringOutage = ids.length - 50;
    expect(a.recorder.stats().buffered).toBe(duringOutage);
    expect(storedCount('search_queries', ids)).toBe(50);
    expect(logLines.some((l) => l.includes('could not send a batch'))).toBe(true);
    await redis.start();
    record(30);
    await until('all records stored after the outage', () => storedCount('search_queries', ids) === ids.length, 60_000);
    expect(a.recorder.stats()).toMatchObject({ buffered: 0, dropped: 0 });
    // Exactly once: the primary key forbids duplicates, so also check nothing else arrived.
    const db = openReadOnly();
    try {
      const rows = db.prepare('SELECT id FROM search_queries WHERE id IN (SELECT value FROM json_each(?))').all(JSON.stringify(ids));
      expect(rows).toHaveLength(ids.length);
    } finally {
      db.close();
    }
  }, 120_000);

  it('a Redis that hangs (CLIENT PAUSE) times sends out; the resent batches are stored once', async () => {
    const a = recorder({ sendTimeoutMs: 500, maxBackoffMs: 300 });
    const ids: string[] = [];
    const record = (n: number) => {
      for (let i = 0; i < n; i++) {
        const r = search(i);
        ids.push(r.id);
        a.recorder.recordSearch(r);
      }
    };
    record(5);
    await until('first records stored', () => storedCount('search_queries', ids) === 5);
    const admin = new Redis(redis.url);
    try {
      // Commands of every client wait (they are not refused) until the pause ends.
      await admin.call('CLIENT', 'PAUSE', '4000', 'ALL');
      const pausedAt = Date.now();
      while (Date.now() - pausedAt < 3500) {
        record(3);
        await sleep(50);
      }
      expect(logLines.some((l) => l.includes('could not send a batch') && l.includes('no answer within'))).toBe(true);
    } finally {
      admin.disconnect();
    }
    await until('all records stored after the pause', () => storedCount('search_queries', ids) === ids.length);
    await sleep(1000);
    expect(a.recorder.stats()).toMatchObject({ buffered: 0, dropped: 0 });
    expect(storedCount('search_queries', ids)).toBe(ids.length);
    // Batches enqueued twice (the timed-out send and its retry) ran without errors.
    expect(logLines.filter((l) => l.includes('analytics batch failed'))).toEqual([]);
  }, 60_000);

  it('bounds the buffer: past maxBuffered the oldest records are dropped, counted and logged', async () => {
    const a = recorder({ maxBuffered: 100, batchSize: 30 });
    // Connected first: a send made before the connection is ever ready waits for Redis rather than
    // failing, and would deliver its batch late, after the restart.
    const warmup = search(-1);
    a.recorder.recordSearch(warmup);
    await until('warm-up record stored', () => storedCount('search_queries', [warmup.id]) === 1);
    await redis.kill();
    const first = search(0);
    a.recorder.recordSearch(first);
    // Wait for the first failed send: retries are then on a timer, so no batch is in flight below.
    await until('a failed send', () => logLines.some((l) => l.includes('could not send a batch')));
    const records = Array.from({ length: 250 }, (_, i) => search(i + 1));
    for (const r of records) a.recorder.recordSearch(r);
    expect(a.recorder.stats()).toMatchObject({ buffered: 100, dropped: 151 });
    expect(logLines.some((l) => l.includes('buffer full') && l.includes('"dropped"'))).toBe(true);
    await redis.start();
    const all = [first, ...records].map((r) => r.id);
    await until('the kept records stored', () => storedCount('search_queries', all) >= 100);
    await sleep(500);
    expect(a.recorder.stats().buffered).toBe(0);
    expect(storedCount('search_queries', all)).toBe(100);
    // Oldest first: the newest records survive (a batch in flight, at most 30, is never dropped).
    expect(storedCount('search_queries', records.slice(-70).map((r) => r.id))).toBe(70);
    expect(storedCount('search_queries', [first.id])).toBe(0);
  }, 60_000);

  it('bounds the buffer in bytes too: large records cannot fill memory while Redis is away', async () => {
    const a = recorder({ maxBufferedBytes: 100_000, batchSize: 5 });
    const warmup = search(-1);
    a.recorder.recordSearch(warmup);
    await until('warm-up record stored', () => storedCount('search_queries', [warmup.id]) === 1);
    await redis.kill();
    a.recorder.recordSearch(search(0));
    await until('a failed send', () => logLines.some((l) => l.includes('could not send a batch')));
    const big = Array.from({ length: 50 }, (_, i) => ({ ...search(i + 1), requestParams: { pad: 'x'.repeat(10_000) } }));
    for (const r of big) a.recorder.recordSearch(r);
    const stats = a.recorder.stats();
    expect(stats.bufferedBytes).toBeLessThanOrEqual(100_000);
    expect(stats.buffered).toBeLessThan(11);
    expect(stats.dropped).toBeGreaterThanOrEqual(40);
    await redis.start();
    await until('the kept records stored', () => storedCount('search_queries', big.slice(-5).map((r) => r.id)) === 5);
    await until('the buffer emptied', () => a.recorder.stats().buffered === 0);
    expect(a.recorder.stats().bufferedBytes).toBe(0);
  }, 60_000);

  it('on close with Redis down, writes the buffered records straight to the store', async () => {
    const a = recorder();
    await redis.kill();
    const records = Array.from({ length: 40 }, (_, i) => search(i));
    for (const r of records) a.recorder.recordSearch(r);
    await sleep(600);
    expect(storedCount('search_queries', records.map((r) => r.id))).toBe(0);
    const t0 = Date.now();
    await a.close();
    running.pop();
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(storedCount('search_queries', records.map((r) => r.id))).toBe(40);
    expect(logLines.some((l) => l.includes('writing them to the store'))).toBe(true);
  }, 30_000);

  it('a batch delivered twice (resent job, direct write) is stored once', async () => {
    const queue = connectAnalyticsQueue(redis.url);
    try {
      const batch: AnalyticsBatch = { id: newId(), searches: [search(1), search(2)], recommendations: [recommendation(1)] };
      const runs = () => completedIds.filter((id) => id === batch.id).length;
      await store.analytics.insertSearches(batch.searches);
      await queue.send(encoded(batch));
      await until('job ran', () => runs() === 1);
      // After completion the job is removed: the same id enqueues a new job, which must be a no-op.
      await queue.send(encoded(batch));
      await until('second job ran', () => runs() === 2);
      expect(storedCount('search_queries', batch.searches.map((r) => r.id))).toBe(2);
      expect(storedCount('recommendation_queries', batch.recommendations.map((r) => r.id))).toBe(1);
      expect(await store.analytics.insertSearches(batch.searches)).toBe(0);
    } finally {
      await queue.close();
    }
  });

  it('stores the records in the job hash, which goes with the job; a job of an earlier release (records in its data) is stored too', async () => {
    const a = recorder();
    const records = Array.from({ length: 30 }, (_, i) => search(i));
    for (const r of records) a.recorder.recordSearch(r);
    await until('records stored', () => storedCount('search_queries', records.map((r) => r.id)) === 30);
    expect(await store.analytics.getSearch(DATASET, records[7]!.id)).toEqual(records[7]);
    // Completed jobs are removed with their payload: no hash of this queue holds one.
    const client = new Redis(redis.url);
    const queue = new Queue(ANALYTICS_QUEUE, { connection: client });
    try {
      await until('completed jobs removed', async () => {
        const keys = await client.keys(`${queue.toKey('')}*`);
        const hashes = await Promise.all(keys.map(async (k) => ((await client.type(k)) === 'hash' ? ((await client.hexists(k, ANALYTICS_PAYLOAD_FIELD)) === 1 ? k : null) : null)));
        return hashes.every((k) => k === null);
      });
      const old: AnalyticsBatch = { id: newId(), searches: [search(100), search(101)], recommendations: [recommendation(100)] };
      await queue.add(ANALYTICS_FLUSH_JOB, old, { jobId: old.id, removeOnComplete: true });
      await until('the earlier release job stored', () => storedCount('search_queries', old.searches.map((r) => r.id)) === 2);
      expect(storedCount('recommendation_queries', old.recommendations.map((r) => r.id))).toBe(1);
    } finally {
      await queue.close();
      client.disconnect();
    }
  });

  it('a job taken before its records are in its hash waits for them, and fails (to be retried) when they never come', async () => {
    const client = new Redis(redis.url);
    const queue = new Queue(ANALYTICS_QUEUE, { connection: client });
    try {
      const late: AnalyticsBatch = { id: newId(), searches: [search(200)], recommendations: [] };
      await queue.add(ANALYTICS_FLUSH_JOB, { id: late.id, records: 1, payload: 'job-hash' }, { jobId: late.id, removeOnComplete: true });
      await sleep(100);
      await client.hset(queue.toKey(late.id), ANALYTICS_PAYLOAD_FIELD, JSON.stringify(late));
      await until('the late payload stored', () => storedCount('search_queries', [late.searches[0]!.id]) === 1);
      expect(logLines.some((l) => l.includes(late.id) && l.includes('failed'))).toBe(false);

      const missing: AnalyticsBatch = { id: newId(), searches: [search(300)], recommendations: [] };
      await queue.add(ANALYTICS_FLUSH_JOB, { id: missing.id, records: 1, payload: 'job-hash' }, { jobId: missing.id, removeOnComplete: true, attempts: 3, backoff: { type: 'fixed', delay: 300 } });
      await until('the first attempt failed', () => logLines.some((l) => l.includes('analytics batch failed; will retry') && l.includes(missing.id)));
      expect(logLines.find((l) => l.includes(missing.id))).toMatch(/are not in its job/);
      expect(storedCount('search_queries', [missing.searches[0]!.id])).toBe(0);
      // Its records arrive: the retry stores them.
      await client.hset(queue.toKey(missing.id), ANALYTICS_PAYLOAD_FIELD, JSON.stringify(missing));
      await until('stored on retry', () => storedCount('search_queries', [missing.searches[0]!.id]) === 1);
    } finally {
      await queue.close();
      client.disconnect();
    }
  });

  it('writes a batch into its job only while the job exists: a late resend leaves nothing behind', async () => {
    const client = new Redis(redis.url);
    try {
      const write = payloadWriter(client);
      const gone = `bull:${ANALYTICS_QUEUE}:${newId()}`;
      expect(await write(gone, Buffer.from('{}'))).toBe(false);
      expect(await client.exists(gone)).toBe(0);
      const job = `bull:${ANALYTICS_QUEUE}:${newId()}`;
      await client.hset(job, 'data', '{}');
      expect(await write(job, Buffer.from('{"id":"x"}'))).toBe(true);
      expect(await client.hget(job, ANALYTICS_PAYLOAD_FIELD)).toBe('{"id":"x"}');
      await client.del(job);
    } finally {
      client.disconnect();
    }
  });
});
