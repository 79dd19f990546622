/**
 * Counting and listing the chunks pending embedding reads only what is pending: the usage route
 * and the job workers' sweep call it for every dataset, and a scan of the whole dataset (a LEFT
 * JOIN over every chunk) blocks the calling process's event loop for ~0.7 s per 200,000 chunks.
 * The count equals the LEFT JOIN definition (the oracle) through edits, deletions and a model change.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../store/repository.js';
import { openSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { openDatabase, type Db } from '../../store/sqlite/database.js';

const CHUNKS = 60_000;
let dir: string;
let store: Store;
let db: Db;
let datasetId: string;

/** The definition of "pending embedding" as one query over every chunk: the oracle, and the old cost. */
function oracleCount(model: string): number {
  return (
    db
      .prepare(
        `SELECT COUNT(*) AS n FROM chunks c LEFT JOIN chunk_vectors v ON v.chunk_id = c.id
         WHERE c.dataset_id = ? AND (v.chunk_id IS NULL OR v.model != ? OR c.semantic_hash IS NULL OR v.content_hash != c.semantic_hash)`,
      )
      .get(datasetId, model) as { n: number }
  ).n;
}

/** Median wall time of `fn` over 5 runs, in ms. */
async function medianMs(fn: () => unknown): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  return times.sort((a, b) => a - b)[2]!;
}

/** Embeds (with a constant vector) everything pending for `model`. */
async function embedAll(model: string): Promise<void> {
  for (;;) {
    const pending = await store.vectors.pending(datasetId, model, 2000);
    if (pending.length === 0) return;
    await store.vectors.put(datasetId, model, pending.map((p) => ({ chunkId: p.chunk.id, contentHash: p.contentHash, vector: new Float32Array(4).fill(0.5) })));
  }
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-pending-'));
  store = openSqliteStore(dir);
  db = openDatabase(dir);
  const org = await store.organizations.create({ name: 'o' });
  datasetId = (await store.datasets.create({ organizationId: org.id, name: 'big', trackingId: null, serverConfiguration: {} })).id;
  for (let i = 0; i < CHUNKS; i += 2000) {
    await store.chunks.createMany(datasetId, Array.from({ length: 2000 }, (_, j) => ({ chunkHtml: `chunk ${i + j} words`, trackingId: `t${i + j}` })));
  }
  await embedAll('m');
}, 120_000);

afterAll(async () => {
  db?.close();
  await store?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('chunks pending embedding', () => {
  it('are counted in time that does not grow with the dataset', async () => {
    await store.chunks.createMany(datasetId, Array.from({ length: 10 }, (_, j) => ({ chunkHtml: `new ${j}`, trackingId: `new${j}` })));
    expect(await store.vectors.pendingCount(datasetId, 'm')).toBe(10);
    expect(oracleCount('m')).toBe(10);
    const scan = await medianMs(() => oracleCount('m'));
    const count = await medianMs(() => store.vectors.pendingCount(datasetId, 'm'));
    const list = await medianMs(() => store.vectors.pending(datasetId, 'm', 4));
    // A whole-dataset scan of 60,000 chunks costs tens of ms here; reading 10 pending rows, well under 1.
    expect(count, `count ${count} ms vs scan ${scan} ms`).toBeLessThan(scan / 10);
    expect(list, `list ${list} ms vs scan ${scan} ms`).toBeLessThan(scan / 10);
  });

  it('equal the whole-dataset definition through edits, deletions and a model change', async () => {
    await store.chunks.update(datasetId, { trackingId: 't5' }, { chunkHtml: 'edited text' });
    await store.chunks.update(datasetId, { trackingId: 't6' }, { weight: 3 });
    await store.chunks.delete(datasetId, { trackingId: 't7' });
    await store.chunks.delete(datasetId, { trackingId: 'new0' });
    expect(await store.vectors.pendingCount(datasetId, 'm')).toBe(oracleCount('m'));
    expect((await store.vectors.pending(datasetId, 'm', 100)).map((p) => p.chunk.trackingId).sort()).toEqual(
      ['t5', ...Array.from({ length: 9 }, (_, j) => `new${j + 1}`)].sort(),
    );
    await embedAll('m');
    expect(await store.vectors.pendingCount(datasetId, 'm')).toBe(0);
    expect(oracleCount('m')).toBe(0);
    // Another model: every chunk is pending for it, and embedding with it empties it again.
    const total = await store.datasets.chunkCount(datasetId);
    expect(await store.vectors.pendingCount(datasetId, 'other')).toBe(total);
    expect(oracleCount('other')).toBe(total);
    await store.chunks.update(datasetId, { trackingId: 't9' }, { chunkHtml: 'edited again' });
    expect(await store.vectors.pendingCount(datasetId, 'other')).toBe(oracleCount('other'));
    await embedAll('other');
    expect(await store.vectors.pendingCount(datasetId, 'other')).toBe(0);
    expect(await store.vectors.pendingCount(datasetId, 'm')).toBe(oracleCount('m'));
    expect(oracleCount('m')).toBe(total);
  }, 120_000);
});
