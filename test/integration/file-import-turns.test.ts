/**
 * File imports in turns, with the real worker (workers/jobs/file-import.ts) on a real BullMQ
 * queue, the store of the project (SQLite, or PostgreSQL in the `postgres` project) and the
 * embedded blob store, and a turn of 1 ms so that every batch is a
 * turn of its own and the job goes back to the queue after each: a small file enqueued behind a
 * large one finishes while the large one is still going; every import ends whole (a CSV read on
 * from its byte cursor, a document from its chunk index with the split kept between turns, a
 * JSONL without upsert whose counts stay exact), with one start and one end event each.
 *
 * The core is not running: the worker's applies fail and are logged, as when the core is away
 * (the change log keeps everything for it).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openBlobStore, type BlobStore } from '../../core/blob/blob-store.js';
import { connectCore, type CoreClient } from '../../core/client/core-client.js';
import { connectJobs, type JobsClient } from '../../core/client/jobs-client.js';
import { loadConfig } from '../../core/config.js';
import { fileBlobKey, type FileKind, type FileRecord, type FileStatus } from '../../core/domain/files.js';
import type { Store } from '../../store/repository.js';
import { fileImportWorker } from '../../workers/jobs/file-import.js';
import { openTestStore, type TestStore } from '../helpers/both-stores.js';
import { eventually } from '../helpers/eventually.js';
import { testStore } from '../helpers/pg.js';
import { allocateRedisDb } from '../helpers/stack.js';

let dir: string;
let opened: TestStore;
let store: Store;
let blobs: BlobStore;
let core: CoreClient;
let jobs: JobsClient;
let connection: Redis;
let worker: Worker;
let org: string;


beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-import-turns-'));
  const redisUrl = await allocateRedisDb(inject('redisUrl'));
  const config = loadConfig({ QUARRY_DATA_DIR: dir, QUARRY_REDIS_URL: redisUrl, QUARRY_IMPORT_BATCH_ROWS: '5' });
  opened = await openTestStore(testStore());
  store = opened.store;
  blobs = await openBlobStore(config);
  // Nothing listens there: applies fail at once (connection refused) and are only logged.
  core = connectCore('127.0.0.1:1', 200);
  jobs = connectJobs(redisUrl);
  connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  worker = fileImportWorker({ store, core, blobs, jobs, config, logger: pino({ level: 'silent' }) }, connection, { turnMs: 1 });
  org = (await store.organizations.create({ name: 'turns' })).id;
}, 60_000);

afterAll(async () => {
  await worker?.close();
  await jobs?.close();
  connection?.disconnect();
  core?.close();
  await opened?.dispose();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A dataset that embeds nothing (no embed job is enqueued after an import). */
const dataset = async (): Promise<string> =>
  (await store.datasets.create({ organizationId: org, name: randomUUID(), trackingId: null, serverConfiguration: { SEMANTIC_ENABLED: false } })).id;

/** Stores `bytes` as a file of the dataset, queued as the routes leave it, and enqueues its import. */
async function startImport(datasetId: string, kind: FileKind, name: string, bytes: string, over: { upsert?: boolean; contentType?: string; split?: { targetChars: number; overlapChars: number } } = {}): Promise<string> {
  const id = randomUUID();
  const blobKey = fileBlobKey(datasetId, id);
  const size = await blobs.write(blobKey, Readable.from([Buffer.from(bytes)]), 1 << 30);
  await store.files.create({
    id,
    datasetId,
    fileName: name,
    kind,
    status: 'queued' satisfies FileStatus,
    description: '',
    link: null,
    metadata: null,
    tagSet: [],
    timeStamp: null,
    size,
    blobKey,
    contentType: over.contentType ?? null,
    importOptions: {
      tagSet: [],
      link: null,
      timeStamp: null,
      groupTrackingId: name,
      upsertByTrackingId: over.upsert ?? true,
      mappings: [],
      fulltextBoostFactor: null,
      semanticBoostFactor: null,
    },
    splitOptions: over.split ?? null,
  });
  await jobs.importFile({ fileId: id, datasetId });
  return id;
}

/** The file once `done(file)` holds. */
const fileWhen = (id: string, what: string, done: (f: FileRecord) => boolean, timeoutMs = 120_000): Promise<FileRecord> =>
  eventually({ what, timeoutMs, intervalMs: 10 }, async () => {
    const f = await store.files.getById(id);
    return f && done(f) ? f : undefined;
  });

const ended = (f: FileRecord): boolean => f.status === 'done' || f.status === 'failed';

/** Event types recorded for the file, sorted. */
async function eventsOf(datasetId: string, fileId: string): Promise<string[]> {
  const { events } = await store.events.list(datasetId, null, 1, 1000);
  return events.filter((e) => (e.eventData as { file_id?: string }).file_id === fileId).map((e) => e.eventType).sort();
}

/** A CSV of `n` rows `id,text`. */
const csvOf = (n: number, word: string): string => `id,text\n${Array.from({ length: n }, (_, i) => `${i},"${word} ${i}, with a comma"`).join('\n')}\n`;

describe('file imports in turns', () => {
  it('finishes a small file enqueued behind a large one while the large one is still going', async () => {
    const bigDs = await dataset();
    const smallDs = await dataset();
    const rows = 1500;
    const big = await startImport(bigDs, 'csv', 'big.csv', csvOf(rows, 'large'));
    const under = await fileWhen(big, 'the large import under way', (f) => f.rowsDone >= 20 || ended(f));
    expect(under.status).toBe('processing');
    const small = await startImport(smallDs, 'csv', 'small.csv', csvOf(7, 'small'));
    const smallDone = await fileWhen(small, 'the small import to finish', ended);
    const bigThen = (await store.files.getById(big))!;
    expect(smallDone).toMatchObject({ status: 'done', rowsTotal: 7, rowsDone: 7, rowsImported: 7 });
    // One batch of 5 rows per turn: the small file waited a turn or two, not ~300.
    expect(bigThen.status).toBe('processing');
    expect(bigThen.rowsDone).toBeLessThan(rows / 2);

    const bigDone = await fileWhen(big, 'the large import to finish', ended);
    expect(bigDone).toMatchObject({ status: 'done', rowsTotal: rows, rowsDone: rows, rowsImported: rows, rowsSkipped: 0, errorCount: 0 });
    expect(bigDone.bytesDone).toBe(bigDone.size);
    const stored = await store.chunks.scrollIds(bigDs, null, rows + 10);
    expect(stored).toHaveLength(rows);
    expect(new Set(stored.map((c) => c.trackingId)).size).toBe(rows);
    expect(JSON.parse((await store.chunks.getManyByTrackingIds(bigDs, [`big.csv|${rows - 1}`]))[0]!.chunkHtml!)).toEqual({ id: String(rows - 1), text: `large ${rows - 1}, with a comma` });
    expect(await eventsOf(bigDs, big)).toEqual(['file_import_finished', 'file_import_started']);
    expect(await eventsOf(smallDs, small)).toEqual(['file_import_finished', 'file_import_started']);
  }, 180_000);

  it('imports a document over many turns, each going on from the committed chunk index', async () => {
    const ds = await dataset();
    const words = Array.from({ length: 600 }, (_, i) => `w${i}`).join(' ');
    const id = await startImport(ds, 'document', 'long.txt', words, { contentType: 'text/plain', split: { targetChars: 50, overlapChars: 0 } });
    const done = await fileWhen(id, 'the document import to finish', ended);
    expect(done.status, done.failure ?? '').toBe('done');
    const n = done.rowsTotal!;
    expect(n).toBeGreaterThan(40);
    expect([done.rowsDone, done.rowsImported, done.errorCount, done.bytesDone]).toEqual([n, n, 0, done.size]);
    const stored = await store.chunks.scrollIds(ds, null, n + 10);
    expect(stored.map((c) => c.trackingId).sort()).toEqual(Array.from({ length: n }, (_, i) => `long.txt|${i}`).sort());
    // The chunks, in index order, hold every word once and in order (no overlap asked).
    const byIndex = new Map(stored.map((c) => [c.trackingId, c.chunkHtml ?? '']));
    const text = Array.from({ length: n }, (_, i) => byIndex.get(`long.txt|${i}`)!.replace(/<[^>]*>/g, ' ')).join(' ');
    expect(text.split(/\s+/).filter((w) => w !== '')).toEqual(words.split(' '));
    expect(await eventsOf(ds, id)).toEqual(['file_import_finished', 'file_import_started']);
  }, 120_000);

  it('keeps exact counts without upsert over many turns: rows stored before are the only ones skipped', async () => {
    const ds = await dataset();
    await store.chunks.createMany(ds, [
      { trackingId: 'shelf.jsonl|3', chunkHtml: 'kept' },
      { trackingId: 'shelf.jsonl|40', chunkHtml: 'kept' },
    ]);
    const lines = Array.from({ length: 60 }, (_, i) => (i === 17 ? '[1]' : JSON.stringify({ n: i })));
    const id = await startImport(ds, 'jsonl', 'shelf.jsonl', `${lines.join('\n')}\n`, { upsert: false });
    const done = await fileWhen(id, 'the JSONL import to finish', ended);
    expect(done).toMatchObject({ status: 'done', rowsTotal: 60, rowsDone: 60, rowsImported: 57, rowsSkipped: 2, errorCount: 1 });
    expect(done.errors.map((e) => e.row)).toEqual([18]);
    expect((await store.chunks.getManyByTrackingIds(ds, ['shelf.jsonl|3']))[0]!.chunkHtml).toBe('kept');
    expect(await eventsOf(ds, id)).toEqual(['file_import_finished', 'file_import_started']);
  }, 120_000);
});
