/**
 * Purging a deleted dataset or organization must not hurt other tenants: the purge ran as one
 * transaction (7.2 s for 200,000 chunks), which blocked the job process's event loop and held
 * SQLite's write lock, so another process's write waited out the busy timeout and failed. Here the
 * job workers' sweep runs in a worker thread (the job process) while this thread (another process)
 * keeps writing another tenant's chunks through its own store connection; every write must
 * succeed well within the bound, and the purge must remove every row referencing the purged
 * dataset and nothing else, finishing after being killed half-way.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../store/repository.js';
import { openDatabase, type Db } from '../../store/sqlite/database.js';
import { openSqliteStore } from '../../store/sqlite/sqlite-store.js';
import type { PurgeThreadReport, PurgeThreadTask } from '../helpers/purge-thread.js';

/** Chunks of the big dataset: its old one-transaction purge took ~2 s here (a write waited 1.95 s), a slice ~65 ms. */
const BIG = 50_000;
/** Longest a write of another tenant (or the purging thread's event loop) may wait; the busy timeout is 5 s. */
const BOUND_MS = 750;

let dir: string;
let store: Store;
let db: Db;

/** Every table that holds rows of a dataset, with the condition that selects them. */
const DATASET_ROWS = {
  datasets: 'id = @id',
  chunks: 'dataset_id = @id',
  chunk_groups: 'dataset_id = @id',
  chunk_group_members: 'group_id IN (SELECT id FROM chunk_groups WHERE dataset_id = @id) OR chunk_id IN (SELECT id FROM chunks WHERE dataset_id = @id)',
  chunk_vectors: 'dataset_id = @id',
  chunk_sparse_vectors: 'dataset_id = @id',
  change_log: 'dataset_id = @id',
  dataset_events: 'dataset_id = @id',
  search_queries: 'dataset_id = @id',
  recommendation_queries: 'dataset_id = @id',
} as const;

/** Row counts of the dataset in every table. */
function rowsOf(id: string): Record<keyof typeof DATASET_ROWS, number> {
  return Object.fromEntries(
    Object.entries(DATASET_ROWS).map(([table, where]) => [table, (db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`).get({ id }) as { n: number }).n]),
  ) as Record<keyof typeof DATASET_ROWS, number>;
}

/** Total rows of the tables a dataset purge cascades into (members and vectors have no orphans to find by dataset). */
const totalRows = (table: string): number => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;

/** A dataset of `chunks` chunks, each with a dense and a sparse vector, in two groups, with log, events and analytics rows. */
async function populate(organizationId: string, chunks: number): Promise<string> {
  const id = (await store.datasets.create({ organizationId, name: 'd', trackingId: null, serverConfiguration: {} })).id;
  for (let i = 0; i < chunks; i += 2000) {
    const n = Math.min(2000, chunks - i);
    await store.chunks.createMany(id, Array.from({ length: n }, (_, j) => ({ chunkHtml: `chunk ${i + j} of ${id}`, trackingId: `t${i + j}`, tagSet: ['a'] })));
  }
  const groups = await store.groups.createMany(id, [{ name: 'g1' }, { name: 'g2' }], false);
  // The rest straight in SQL: the test is about deleting these rows, not about writing them.
  db.transaction(() => {
    for (const g of groups) db.prepare('INSERT INTO chunk_group_members (group_id, chunk_id, created_at) SELECT ?, id, 0 FROM chunks WHERE dataset_id = ?').run(g.id, id);
    db.prepare("INSERT INTO chunk_vectors SELECT id, dataset_id, 'm', 4, 'h', zeroblob(16), 0 FROM chunks WHERE dataset_id = ?").run(id);
    db.prepare("INSERT INTO chunk_sparse_vectors SELECT id, dataset_id, 'm', updated_at, zeroblob(8), zeroblob(8), 0 FROM chunks WHERE dataset_id = ?").run(id);
    const series = 'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000)';
    db.prepare(`${series} INSERT INTO search_queries (id, dataset_id, search_type, search_method, query, request_params, latency, top_score, results, result_count, created_at)
      SELECT ? || '-s' || i, ?, 'search', 'bm25', 'q', '{}', 1, 1, '[]', 0, i FROM n`).run(id, id);
    db.prepare(`${series} INSERT INTO recommendation_queries (id, dataset_id, recommendation_type, positive_ids, negative_ids, positive_tracking_ids, negative_tracking_ids, request_params, results, top_score, created_at)
      SELECT ? || '-r' || i, ?, 'Chunk', '[]', '[]', '[]', '[]', '{}', '[]', 1, i FROM n`).run(id, id);
    db.prepare(`${series} INSERT INTO dataset_events (id, dataset_id, event_type, event_data, created_at) SELECT ? || '-e' || i, ?, 'chunks_indexed', '{}', i FROM n`).run(id, id);
  })();
  return id;
}

/** Stands for a dataset's shard snapshots, which the purge removes with its rows. */
function indexDir(datasetId: string): string {
  const d = path.join(dir, 'index', datasetId, 'snapshots');
  fs.mkdirSync(d, { recursive: true });
  return path.dirname(d);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts `task` in a worker thread; `started` resolves once its store is open. */
function startThread(task: PurgeThreadTask = { kind: 'sweep' }): { worker: Worker; started: Promise<void>; done: Promise<PurgeThreadReport> } {
  // The thread loads the TypeScript source through tsx's API (vitest's transform does not reach worker threads).
  const file = new URL('../helpers/purge-thread.ts', import.meta.url).href;
  const boot = `import('tsx/esm/api').then(({ tsImport }) => tsImport(${JSON.stringify(file)}, ${JSON.stringify(file)}))`;
  const worker = new Worker(boot, { eval: true, workerData: { dataDir: dir, task } });
  let onStart!: () => void;
  const started = new Promise<void>((resolve) => (onStart = resolve));
  const done = new Promise<PurgeThreadReport>((resolve, reject) => {
    worker.on('message', (m: 'started' | PurgeThreadReport) => (m === 'started' ? onStart() : resolve(m)));
    worker.on('error', reject);
    worker.on('exit', (code) => reject(new Error(`purge thread exited with ${code} before reporting`)));
  });
  return { worker, started, done };
}

/** Writes one chunk at a time into `datasetId` (as another process would) until `done` settles; the latency of each write. */
async function writeUntil(done: Promise<unknown>, datasetId: string, prefix: string): Promise<{ latencies: number[]; failures: string[] }> {
  const latencies: number[] = [];
  const failures: string[] = [];
  let finished = false;
  void done.finally(() => (finished = true)).catch(() => {});
  for (let i = 0; !finished; i++) {
    const t = performance.now();
    try {
      await store.chunks.createMany(datasetId, [{ chunkHtml: `written meanwhile ${i}`, trackingId: `${prefix}${i}` }]);
    } catch (err) {
      failures.push((err as Error).message);
    }
    latencies.push(performance.now() - t);
    await sleep(2);
  }
  return { latencies, failures };
}

/** Every count of DATASET_ROWS at zero. */
const NONE = Object.fromEntries(Object.keys(DATASET_ROWS).map((t) => [t, 0]));

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-purge-'));
  store = openSqliteStore(dir);
  db = openDatabase(dir);
}, 60_000);

afterAll(async () => {
  db?.close();
  await store?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('purges in slices', () => {
  it("another tenant's writes stay fast while a 50,000-chunk dataset is purged, and only the purged dataset's rows go", async () => {
    const orgA = await store.organizations.create({ name: 'a' });
    const orgB = await store.organizations.create({ name: 'b' });
    const big = await populate(orgA.id, BIG);
    const sibling = await populate(orgA.id, 300);
    const other = await populate(orgB.id, 300);
    const files = indexDir(big);
    const siblingFiles = indexDir(sibling);
    const before = { sibling: rowsOf(sibling), other: rowsOf(other) };
    expect(rowsOf(big).chunk_vectors).toBe(BIG);

    await store.datasets.markDeleted(big);
    const sweep = startThread();
    await sweep.started;
    const { latencies, failures } = await writeUntil(sweep.done, other, 'w');
    const report = await sweep.done;
    const maxWrite = Math.max(...latencies);
    expect(failures, 'writes of another tenant failed during the purge').toEqual([]);
    expect(maxWrite, `max write latency ${maxWrite.toFixed(0)} ms over ${latencies.length} writes; purge ${report.elapsedMs.toFixed(0)} ms`).toBeLessThan(BOUND_MS);
    expect(report.maxLoopGapMs, `the purging thread's event loop stalled ${report.maxLoopGapMs.toFixed(0)} ms`).toBeLessThan(BOUND_MS);
    // The writes overlapped the purge (not all queued behind it).
    expect(latencies.length).toBeGreaterThan(3);

    expect(rowsOf(big)).toEqual(NONE);
    expect(fs.existsSync(files)).toBe(false);
    // Nothing else was touched: the sibling in the same organization, and the other tenant plus its new chunks.
    expect(rowsOf(sibling)).toEqual(before.sibling);
    expect(fs.existsSync(siblingFiles)).toBe(true);
    const writes = latencies.length;
    expect(rowsOf(other)).toEqual({ ...before.other, chunks: before.other.chunks + writes, change_log: before.other.change_log + writes });
    expect(totalRows('chunk_vectors')).toBe(before.sibling.chunk_vectors + before.other.chunk_vectors);
    expect(totalRows('chunk_group_members')).toBe(before.sibling.chunk_group_members + before.other.chunk_group_members);
  });

  it('a purge killed half-way leaves the dataset flagged and invisible, and the next sweep finishes it', async () => {
    const org = await store.organizations.create({ name: 'k' });
    const victim = await populate(org.id, 20_000);
    const other = await populate(org.id, 100);
    const files = indexDir(victim);
    const before = rowsOf(other);
    await store.datasets.markDeleted(victim);

    const sweep = startThread();
    sweep.done.catch(() => {});
    await sweep.started;
    // Kill the job once it has deleted some chunks but not all.
    for (let remaining = rowsOf(victim).chunks; remaining === 20_000; remaining = rowsOf(victim).chunks) await sleep(1);
    await sweep.worker.terminate();
    const partial = rowsOf(victim);
    expect(partial.chunks).toBeGreaterThan(0);
    expect(partial.chunks).toBeLessThan(20_000);
    // Still flagged, so still found by the sweep, and invisible meanwhile; the index files went first.
    expect(partial.datasets).toBe(1);
    expect(await store.datasets.get(victim)).toBeUndefined();
    expect(await store.datasets.listDeleted()).toContain(victim);
    expect(fs.existsSync(files)).toBe(false);

    const retry = startThread();
    await retry.done;
    expect(rowsOf(victim)).toEqual(NONE);
    expect(rowsOf(other)).toEqual(before);
  });

  it("an organization purge removes its datasets' files, then their rows, then its own row, in slices", async () => {
    const org = await store.organizations.create({ name: 'gone' });
    const keep = await store.organizations.create({ name: 'kept' });
    const [d1, d2] = [await populate(org.id, 6000), await populate(org.id, 6000)];
    const kept = await populate(keep.id, 200);
    const files = [indexDir(d1), indexDir(d2)];
    const before = rowsOf(kept);
    db.prepare("INSERT INTO api_keys (id, organization_id, name, hash, role, created_at, updated_at) VALUES ('k1', ?, 'k', 'h1', 2, 0, 0)").run(org.id);
    await store.organizations.update(org.id, { deleted: true });
    // Gone for every process at once (the core drops it on use, the job workers skip it), before any purge.
    expect(await store.datasets.get(d1)).toBeUndefined();
    expect(await store.datasets.listIds()).not.toContain(d2);

    const sweep = startThread();
    await sweep.started;
    const { latencies, failures } = await writeUntil(sweep.done, kept, 'o');
    const report = await sweep.done;
    expect(failures).toEqual([]);
    expect(Math.max(...latencies)).toBeLessThan(BOUND_MS);
    expect(report.maxLoopGapMs, `the purging thread's event loop stalled ${report.maxLoopGapMs.toFixed(0)} ms`).toBeLessThan(BOUND_MS);
    for (const d of [d1, d2]) expect(rowsOf(d)).toEqual(NONE);
    expect(await store.organizations.get(org.id, true)).toBeUndefined();
    expect((db.prepare('SELECT COUNT(*) AS n FROM api_keys WHERE organization_id = ?').get(org.id) as { n: number }).n).toBe(0);
    for (const f of files) expect(fs.existsSync(f)).toBe(false);
    expect(rowsOf(kept)).toEqual({ ...before, chunks: before.chunks + latencies.length, change_log: before.change_log + latencies.length });
    expect(await store.organizations.get(keep.id)).toBeDefined();
  });

  it("a clear of a 40,000-chunk dataset does not hold up another tenant's writes, and keeps what was written after it began", async () => {
    const org = await store.organizations.create({ name: 'c' });
    const other = await populate((await store.organizations.create({ name: 'c2' })).id, 100);
    const cleared = await populate(org.id, 40_000);
    const before = { cleared: rowsOf(cleared), other: rowsOf(other) };

    const clear = startThread({ kind: 'clear', datasetId: cleared });
    clear.done.catch(() => {});
    await clear.started;
    // Once the clear is under way, a chunk written to the dataset is the caller's new data: it stays.
    while (rowsOf(cleared).chunks === 40_000) await sleep(1);
    await store.chunks.createMany(cleared, [{ chunkHtml: 'written after the clear began', trackingId: 'late' }]);
    const { latencies, failures } = await writeUntil(clear.done, other, 'c');
    const report = await clear.done;
    const maxWrite = Math.max(...latencies);
    expect(failures).toEqual([]);
    expect(maxWrite, `max write latency ${maxWrite.toFixed(0)} ms over ${latencies.length} writes; clear ${report.elapsedMs.toFixed(0)} ms`).toBeLessThan(BOUND_MS);
    expect(report.maxLoopGapMs, `the clearing thread's event loop stalled ${report.maxLoopGapMs.toFixed(0)} ms`).toBeLessThan(BOUND_MS);

    // The dataset stays, with its log (a delete entry per chunk, for the search core), events and analytics.
    expect(rowsOf(cleared)).toEqual({
      ...before.cleared,
      chunks: 1,
      chunk_groups: 0,
      chunk_group_members: 0,
      chunk_vectors: 0,
      chunk_sparse_vectors: 0,
      change_log: before.cleared.change_log + 40_000 + 1,
    });
    expect((await store.chunks.get(cleared, { trackingId: 'late' }))?.chunkHtml).toBe('written after the clear began');
    expect(rowsOf(other)).toEqual({ ...before.other, chunks: before.other.chunks + latencies.length, change_log: before.other.change_log + latencies.length });
  });

  it('a purge of a live dataset or organization touches nothing', async () => {
    const org = await store.organizations.create({ name: 'live' });
    const live = await populate(org.id, 50);
    const before = rowsOf(live);
    const purged = [await store.datasets.purge(live), await store.organizations.purge(org.id)];
    expect(rowsOf(live)).toEqual(before);
    expect(purged).toEqual([false, false]);
  });
});
