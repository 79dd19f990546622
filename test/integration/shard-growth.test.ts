/**
 * Shard layout by size: a dataset starts with one inline shard (in the core's own thread) and,
 * once it passes QUARRY_INLINE_SHARD_MAX_CHUNKS or QUARRY_INLINE_SHARD_MAX_TOKENS (or three
 * queries of it within 2 s pass QUARRY_INLINE_SLOW_QUERY_MS), moves to QUARRY_SHARDS_PER_DATASET
 * shards on the shard threads in the background. Every acknowledged write stays searchable through
 * the move, rankings equal the brute-force oracle before and after, the old snapshot files go
 * (here at shutdown: the deadline the old shard waits out is 60 s), and a restart loads the new
 * layout. An inline shard applies its change log, and counts its typo vocabulary, in slices, the
 * event loop free between them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectCore, type CoreClient } from '../../core/client/core-client.js';
import { loadConfig } from '../../core/config.js';
import { ShardNotLoadedError } from '../../core/pool/shard-not-loaded.js';
import { ShardPool } from '../../core/pool/shard-pool.js';
import { Engine } from '../../core/router/engine.js';
import { DEFAULT_TYPO_OPTIONS } from '../../core/typo/options.js';
import type { ShardTask } from '../../workers/shard/protocol.js';
import { openStore } from '../../store/open-store.js';
import { readShardSnapshot } from '../../workers/shard/persist/shard-snapshot.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { eventually } from '../helpers/eventually.js';
import { bareFile } from '../helpers/new-file.js';
import { randomChunks, randomQuery, rng } from '../helpers/random-corpus.js';
import { bruteForceBm25, loadChunks } from '../helpers/search-oracle.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { isPostgres } from '../helpers/store-snapshot.js';

const INLINE_MAX = 60;
let stack: Stack;
let tenant: Tenant;
let core: CoreClient;

beforeAll(async () => {
  stack = await startStack({ env: { QUARRY_CORE_IN_PROCESS: 'false', QUARRY_INLINE_SHARD_MAX_CHUNKS: String(INLINE_MAX), QUARRY_SHARDS_PER_DATASET: '2', QUARRY_CORE_DEADLINE_MS: '60000' } });
  tenant = await createTenant(stack);
  core = connectCore(stack.env.QUARRY_CORE_ADDRESS!, 10_000);
}, 60_000);

afterAll(async () => {
  core?.close();
  await stack?.stop();
});

/** The core's stats of a dataset once it is on 2 shards (moved to the shard threads). */
function onTwoShards(on: Stack, client: CoreClient, datasetId: string, what: string) {
  return eventually({ what, context: () => on.output() }, async () => {
    const s = await client.stats(datasetId);
    return s.shards === 2 && s;
  });
}

/** Chunk payloads whose text holds a word no other chunk has (`only<i>`). */
function payloads(from: number, n: number): Record<string, unknown>[] {
  return randomChunks(from + n, 5)
    .slice(from)
    .map((p, j) => ({ ...p, tracking_id: `doc-${from + j}`, chunk_html: `${String(p.chunk_html)} only${from + j}` }));
}

/** The tracking ids a bm25 search ranks first, with scores. */
async function ranked(query: string, pageSize = 20): Promise<{ id: string; score: number }[]> {
  const res = await tenant.ds.post('/api/chunk/search', { query, search_type: 'bm25', page_size: pageSize });
  expect(res.status, res.text).toBe(200);
  return res.body.chunks.map((x: any) => ({ id: x.chunk.id as string, score: x.score as number }));
}

/** Compares the service's bm25 ranking of random queries with the brute-force oracle over the store. */
async function matchesOracle(seed: number): Promise<void> {
  const chunks = await loadChunks(stack, tenant.datasetId);
  const r = rng(seed);
  for (let q = 0; q < 15; q++) {
    const query = randomQuery(r);
    const got = await ranked(query);
    const want = bruteForceBm25(chunks, query, null).slice(0, 20);
    expect(got.map((h) => h.score)).toEqual(want.map((h) => expect.closeTo(h.score, 4)));
    // Ties at the cut may keep either document; above it the sets agree.
    const cut = want.at(-1)?.score ?? 0;
    const above = (hits: { id: string; score: number }[]) => new Set(hits.filter((h) => Math.abs(h.score - cut) > 1e-4).map((h) => h.id));
    expect(above(got)).toEqual(above(want));
  }
}

describe('shard layout by size', () => {
  it('serves a small dataset from one inline shard', async () => {
    const res = await tenant.ds.post('/api/chunk', payloads(0, 40));
    expect(res.status, res.text).toBe(200);
    const stats = await core.stats(tenant.datasetId);
    expect(stats.shards).toBe(1);
    expect(stats.chunk_count).toBe(40);
    await matchesOracle(1);
    // A restart snapshots the inline shard (the move below must delete that file).
    await stack.kill('core', 'SIGTERM');
    expect(fs.readdirSync(path.join(stack.dataDir, 'index', tenant.datasetId))).toEqual([expect.stringMatching(/^1-/)]);
    await stack.start('core');
    expect((await eventually({ what: 'the restarted core', timeoutMs: 30_000 }, async () => core.stats(tenant.datasetId))).shards).toBe(1);
  });

  it('moves past the limit to the shard threads, losing no acknowledged write', async () => {
    // Writes go on while the move runs: each must be found by its own word the moment it is acknowledged.
    for (let from = 40; from < 160; from += 8) {
      const res = await tenant.ds.post('/api/chunk', payloads(from, 8));
      expect(res.status, res.text).toBe(200);
      for (let i = from; i < from + 8; i++) {
        const hits = await ranked(`only${i}`, 1);
        expect(hits.length, `doc-${i} not found right after it was acknowledged`).toBe(1);
      }
    }
    const stats = await onTwoShards(stack, core, tenant.datasetId, 'the dataset on 2 shards');
    expect(stats.chunk_count).toBe(160);
    await matchesOracle(2);
  });

  it('deletes the inline snapshot at shutdown and restarts in the new layout', async () => {
    const dir = path.join(stack.dataDir, 'index', tenant.datasetId);
    // The old shard waits out searches that started on it (a deadline: 60 s here) unless the core stops first.
    expect(fs.readdirSync(dir).some((n) => n.startsWith('1-'))).toBe(true);
    await stack.kill('core', 'SIGTERM');
    expect(fs.readdirSync(dir)).toEqual([expect.stringMatching(/^2-/)]);
    // The shard threads wrote their snapshots at shutdown, whole: together they hold every chunk.
    const layoutDir = path.join(dir, fs.readdirSync(dir)[0]!);
    expect(fs.readdirSync(layoutDir).filter((f) => f.includes('.bin')).sort()).toEqual(['shard-0.bin', 'shard-1.bin']);
    const snapshotted = [0, 1].map((n) => readShardSnapshot(layoutDir, n, { k1: 0.9, b: 0.4 })!.stats().chunkCount);
    expect(snapshotted[0]! + snapshotted[1]!).toBe(160);
    await stack.start('core');
    const stats = await eventually({ what: 'the restarted core', timeoutMs: 30_000 }, async () => core.stats(tenant.datasetId));
    expect(stats.shards).toBe(2);
    expect(stats.chunk_count).toBe(160);
    await matchesOracle(3);
  });
});

/** Words an inline dataset of the second stack may index (its chunk limit stays 15,000). */
const TOKENS_MAX = 50_000;

describe('slow inline queries', () => {
  let slowStack: Stack;
  let slow: Tenant;
  let slowCore: CoreClient;

  beforeAll(async () => {
    // 1 ms: the heavy query below takes 4.5-7 ms here, run again too (measured with a log of
    // checkSlow's figures). It was once a query of 200 absent words over 200 short chunks, 1.1-1.4 ms:
    // on CI the move then never came in some runs (the third query, or its rerun, fell under the bar).
    slowStack = await startStack({ env: { QUARRY_CORE_IN_PROCESS: 'false', QUARRY_INLINE_SLOW_QUERY_MS: '1', QUARRY_SHARDS_PER_DATASET: '2', QUARRY_INLINE_SHARD_MAX_TOKENS: String(TOKENS_MAX) } });
    slow = await createTenant(slowStack);
    slowCore = connectCore(slowStack.env.QUARRY_CORE_ADDRESS!, 10_000);
  }, 60_000);

  afterAll(async () => {
    slowCore?.close();
    await slowStack?.stop();
  });

  it('moves its dataset to the shard threads at the third within 2 s, where other tenants no longer wait for it', async () => {
    // Each chunk also holds 150 of the query's 200 words (w<k>): each word's postings list most of
    // the 200 chunks (~30,000 postings to score; ~32,000 words indexed, under QUARRY_INLINE_SHARD_MAX_TOKENS).
    const dense = (i: number): string => Array.from({ length: 150 }, (_, k) => `w${(i * 7 + k * 13) % 200}`).join(' ');
    for (const from of [0, 100]) {
      const res = await slow.ds.post('/api/chunk', payloads(from, 100).map((p, j) => ({ ...p, chunk_html: `${String(p.chunk_html)} ${dense(from + j)}` })));
      expect(res.status, res.text).toBe(200);
    }
    expect((await slowCore.stats(slow.datasetId)).shards).toBe(1);
    const words = Array.from({ length: 200 }, (_, i) => `w${i} only${i}`).join(' ');
    const filter = { should: Array.from({ length: 40 }, (_, i) => ({ field: 'tag_set', match_any: Array.from({ length: 50 }, (_, j) => `t${i}-${j}`) })) };
    const heavySearch = async (): Promise<void> => {
      const heavy = await slow.ds.post('/api/chunk/search', { query: words, search_type: 'fulltext', filters: filter, page_size: 10 });
      expect(heavy.status, heavy.text).toBe(200);
    };
    // One slow query may be a garbage collection inside it: the dataset stays (a move of 200
    // chunks takes ~50 ms here, so 500 ms would have seen it).
    await heavySearch();
    await new Promise((r) => setTimeout(r, 500));
    expect((await slowCore.stats(slow.datasetId)).shards).toBe(1);
    // The third within 2 s moves it.
    await heavySearch();
    await heavySearch();
    const stats = await onTwoShards(slowStack, slowCore, slow.datasetId, 'the dataset on 2 shards');
    expect(stats.chunk_count).toBe(200);
    // Every chunk is still found by its own word after the move.
    for (const i of [0, 57, 199]) {
      const found = await slow.ds.post('/api/chunk/search', { query: `only${i}`, search_type: 'bm25', page_size: 1 });
      expect(found.body.chunks.map((c: any) => c.chunk.tracking_id)).toEqual([`doc-${i}`]);
    }
    // A restart keeps it on the threads (small as it is), from the mark beside its snapshots.
    expect(fs.existsSync(path.join(slowStack.dataDir, 'index', slow.datasetId, 'slow-queries'))).toBe(true);
    await slowStack.kill('core', 'SIGTERM');
    await slowStack.start('core');
    const restarted = await eventually({ what: 'the restarted core', timeoutMs: 30_000, context: () => slowStack.output() }, async () => slowCore.stats(slow.datasetId));
    expect(restarted).toMatchObject({ shards: 2, chunk_count: 200 });
    // The restart's own wait is 30 s: the test's budget covers it and the steps before, so a slow
    // restart fails with the stack's output above rather than as a bare test timeout (CI once).
  }, 90_000);

  it('moves a dataset of few but long chunks once it indexes more words than QUARRY_INLINE_SHARD_MAX_TOKENS', async () => {
    const long = await createTenant(slowStack);
    const words = (i: number): string => Array.from({ length: 2000 }, (_, j) => `w${(i * 31 + j) % 500}`).join(' ') + ` only${i}`;
    const write = async (from: number, n: number): Promise<void> => {
      const res = await long.ds.post('/api/chunk', Array.from({ length: n }, (_, j) => ({ chunk_html: words(from + j), tracking_id: `long-${from + j}` })));
      expect(res.status, res.text).toBe(200);
    };
    // 10 chunks, ~20,000 words: inline.
    await write(0, 10);
    expect((await slowCore.stats(long.datasetId)).shards).toBe(1);
    // 30 chunks, ~60,000 words: past the limit with 30 chunks of 15,000 allowed.
    await write(10, 20);
    const stats = await onTwoShards(slowStack, slowCore, long.datasetId, 'the long-chunk dataset on 2 shards');
    expect(stats.chunk_count).toBe(30);
    for (const i of [0, 17, 29]) {
      const found = await long.ds.post('/api/chunk/search', { query: `only${i}`, search_type: 'bm25', page_size: 1 });
      expect(found.body.chunks.map((c: any) => c.chunk.tracking_id)).toEqual([`long-${i}`]);
    }
  });

  it('replays an inline dataset\'s change log in slices, with the event loop free between them', async () => {
    const many = await createTenant(slowStack);
    // 200 chunks of ~1 KB (~30,000 words, under both inline limits): ~13 slices of 16 KB.
    // Chunk 137 also holds a word to correct a query's typo to (words with digits are never corrected).
    const text = (i: number): string => Array.from({ length: 150 }, (_, j) => `v${(i * 7 + j) % 300}`).join(' ') + ` only${i}` + (i === 137 ? ' quokkas' : '');
    for (const from of [0, 100]) {
      const res = await many.ds.post('/api/chunk', Array.from({ length: 100 }, (_, j) => ({ chunk_html: text(from + j), tracking_id: `many-${from + j}` })));
      expect(res.status, res.text).toBe(200);
    }
    // A second engine over the same store, in this process, loads the dataset from its change log
    // (no snapshot in its own directory) while a callback counts the event loop's turns.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-slices-'));
    const store = await openStore(slowStack);
    const pool = new ShardPool(1);
    const engine = new Engine(loadConfig({ QUARRY_DATA_DIR: dir }), store, pool, pino({ level: 'silent' }));
    try {
      let turns = 0;
      let loading = true;
      const count = (): void => {
        turns++;
        if (loading) setImmediate(count);
      };
      setImmediate(count);
      // The store's index reads, watched (not replaced): how many chunks each read, at which turn.
      const reads: { ids: number; turn: number }[] = [];
      const indexReads = store.indexReads;
      const chunks = indexReads.chunks.bind(indexReads);
      indexReads.chunks = (datasetId, ids, model, sparseModel) => {
        if (datasetId === many.datasetId) reads.push({ ids: ids.length, turn: turns });
        return chunks(datasetId, ids, model, sparseModel);
      };
      const index = await engine.dataset(many.datasetId);
      await index.ensureReady();
      loading = false;
      expect(index.inline).toBe(true);
      // In one task, the 200 chunks left the loop no turn in between (1-2 turns in all).
      expect(turns).toBeGreaterThanOrEqual(8);
      // The chunks are read from SQLite 64 at a time, each read in a turn of its own (one read of
      // all 200 held the event loop as long as the store took); from PostgreSQL, whose reads leave
      // the loop free while the server works, in slices of the size it asks for (512: all 200 at once).
      expect(reads.map((r) => r.ids)).toEqual(isPostgres(slowStack) ? [200] : [64, 64, 64, 8]);
      for (let i = 1; i < reads.length; i++) expect(reads[i]!.turn).toBeGreaterThan(reads[i - 1]!.turn);
      expect((await engine.stats(many.datasetId)).chunkCount).toBe(200);
      const hits = await engine.search({ datasetId: many.datasetId, searchType: 'bm25', query: 'only137', filter: null, offset: 0, limit: 1, scoreThreshold: null, countTotal: false });
      expect(hits.chunkIds).toHaveLength(1);
      // Its snapshot is captured in one turn, then encoded and written in later ones: the loop
      // turns while it is encoded, written and synced.
      turns = 0;
      loading = true;
      setImmediate(count);
      await index.snapshot();
      loading = false;
      // Eight file operations, each completed in a later turn (hundreds here); a write in the task: 2.
      expect(turns).toBeGreaterThanOrEqual(8);
      const written = fs.readdirSync(dir, { recursive: true }).map(String);
      expect(written.filter((f) => f.endsWith('shard-0.bin'))).toHaveLength(1);
      expect(written.filter((f) => f.includes('.tmp-'))).toEqual([]);
      // The typo vocabulary, filled at the first corrected query, is counted a slice at a time
      // too: the pool's tasks watched (not replaced), each fill in a turn of its own (all 200
      // chunks went in one task before: 1,000 SciFact chunks held the loop 240-460 ms).
      const fills: { docs: number; text: number; turn: number }[] = [];
      const run = pool.run.bind(pool);
      pool.run = (task: ShardTask, signal?: AbortSignal, inline?: boolean) => {
        if (task.op === 'typoFill' && task.datasetId === many.datasetId) fills.push({ docs: task.docs.length, text: task.docs.reduce((n, d) => n + d.text.length, 0), turn: turns });
        return run(task, signal, inline);
      };
      turns = 0;
      loading = true;
      setImmediate(count);
      const corrected = await engine.search({ datasetId: many.datasetId, searchType: 'bm25', query: 'quokkaz', filter: null, offset: 0, limit: 1, scoreThreshold: null, countTotal: false, typo: DEFAULT_TYPO_OPTIONS });
      loading = false;
      expect(corrected.correctedQuery).toBe('quokkas');
      expect(corrected.chunkIds).toHaveLength(1);
      expect(fills.reduce((n, f) => n + f.docs, 0)).toBe(200);
      expect(fills.length).toBeGreaterThan(1);
      // Each slice: at most 64 chunks, and 16 KB of text but for the chunk that passes it.
      for (const f of fills) expect(f.docs <= 64 && f.text < 16_384 + 1_100).toBe(true);
      for (let i = 1; i < fills.length; i++) expect(fills[i]!.turn).toBeGreaterThan(fills[i - 1]!.turn);
    } finally {
      await engine.close();
      await pool.close();
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes, loads and reloads nothing for a dropped dataset: the directory its purge removed stays gone', async () => {
    const gone = await createTenant(slowStack);
    const post = async (from: number): Promise<void> => {
      const res = await gone.ds.post('/api/chunk', Array.from({ length: 10 }, (_, j) => ({ chunk_html: `dropped words ${from + j}`, tracking_id: `gone-${from + j}` })));
      expect(res.status, res.text).toBe(200);
    };
    await post(0);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-drop-'));
    const store = await openStore(slowStack);
    const pool = new ShardPool(1);
    const engine = new Engine(loadConfig({ QUARRY_DATA_DIR: dir }), store, pool, pino({ level: 'silent' }));
    try {
      const index = await engine.dataset(gone.datasetId);
      await index.ensureReady();
      expect(index.inline).toBe(true);
      await index.snapshot();
      const files = path.join(dir, 'index', gone.datasetId);
      expect(fs.existsSync(path.join(index.dir, 'shard-0.bin'))).toBe(true);
      expect(index.dir.startsWith(files)).toBe(true);
      // The dataset is deleted: the core drops its index, then the purge removes its files.
      await engine.drop(gone.datasetId);
      fs.rmSync(files, { recursive: true, force: true });
      // What still held the old index then ends: a write's apply, a read, a snapshot. None may
      // bring the shards back (they were reloaded from the store before) or write the directory.
      await post(10);
      await expect(index.apply(0)).rejects.toMatchObject({ code: 'unavailable' });
      await expect(
        index.search({ text: 'dropped', fulltext: false, prefixLastWord: false, filter: null, offset: 0, limit: 5, minScore: null, countTotal: false }),
      ).rejects.toMatchObject({ code: 'unavailable' });
      await index.reload();
      await index.snapshot();
      expect(fs.existsSync(files)).toBe(false);
      await expect(pool.run({ op: 'stats', datasetId: gone.datasetId, shard: 0 }, undefined, true)).rejects.toBeInstanceOf(ShardNotLoadedError);
    } finally {
      await engine.close();
      await pool.close();
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('imports that will outgrow the inline shard', () => {
  /** An engine over the stack's store, in this process, with the stack's inline limit and its own snapshot directory. */
  const engineOver = (store: Awaited<ReturnType<typeof openStore>>, pool: ShardPool, dir: string): Engine =>
    new Engine(loadConfig({ QUARRY_DATA_DIR: dir, QUARRY_INLINE_SHARD_MAX_CHUNKS: String(INLINE_MAX), QUARRY_SHARDS_PER_DATASET: '2' }), store, pool, pino({ level: 'silent' }));

  it('moves a dataset to the shard threads while an import in progress is about to take it past the limit, and a restart meanwhile starts it there', async () => {
    const small = await createTenant(stack);
    const res = await small.ds.post('/api/chunk', payloads(0, 5));
    expect(res.status, res.text).toBe(200);
    const dirs = [0, 1, 2].map(() => fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-import-layout-')));
    const store = await openStore(stack);
    const pool = new ShardPool(2);
    const engines = dirs.map((dir) => engineOver(store, pool, dir));
    try {
      const [engine, restarted, later] = engines as [Engine, Engine, Engine];
      await engine.apply(small.datasetId, 0);
      expect((await engine.stats(small.datasetId)).shards).toBe(1);
      // A CSV import in progress: 10 rows committed from its first 1,000 of 10,000 bytes, so ~90 to come.
      const file = await store.files.create(bareFile(small.datasetId, { kind: 'csv', size: 10_000 }));
      await store.files.transition(file.id, ['queued'], 'processing');
      await store.files.commitProgress(file.id, { cursor: { byteOffset: 1000, rowIndex: 10, header: ['id'] }, rowsDone: 10, rowsImported: 10, rowsSkipped: 0, bytesDone: 1000, errors: [] });
      // The next apply finds 6 chunks, and ~90 rows to come past the limit of 60: the dataset moves now.
      const more = await small.ds.post('/api/chunk', payloads(5, 1));
      expect(more.status, more.text).toBe(200);
      await engine.apply(small.datasetId, 0);
      const moved = await eventually({ what: 'the dataset on 2 shards' }, async () => {
        const s = await engine.stats(small.datasetId);
        return s.shards === 2 && s;
      });
      expect(moved.chunkCount).toBe(6);
      // A core started during the import lays the dataset out for the size it is about to have.
      expect((await restarted.dataset(small.datasetId)).inline).toBe(false);
      // Once the import is over, by the size it has.
      await store.files.transition(file.id, ['processing'], 'done', { rowsTotal: 10 });
      expect((await later.dataset(small.datasetId)).inline).toBe(true);
    } finally {
      for (const e of engines) await e.close();
      await pool.close();
      await store.close();
      for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
