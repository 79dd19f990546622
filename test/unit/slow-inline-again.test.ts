/**
 * A slow inline query is run once more before its dataset moves to the shard threads
 * (`ShardPool.onSlowInlineQuery`'s `again`): a heavy query is slow again, a light one that only
 * looked slow (a busy machine, the process's other threads) is not, so it stays inline.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ShardPool } from '../../core/pool/shard-pool.js';
import { callDeadline } from '../../core/pool/task-stop.js';
import type { ShardDoc, ShardTask } from '../../workers/shard/protocol.js';
import { textDoc } from '../../workers/shard/text-doc.js';

const bm25 = { k1: 0.9, b: 0.4 };
const WORDS = Array.from({ length: 60 }, (_, i) => `w${i} alpha beta gamma`).join(' ');
const heavyDocs: ShardDoc[] = Array.from({ length: 60_000 }, (_, i) => textDoc(`h-${i}`, `alpha beta ${i % 7} ${WORDS.slice((i * 13) % 600, ((i * 13) % 600) + 200)}`));
const smallDocs: ShardDoc[] = Array.from({ length: 50 }, (_, i) => textDoc(`s-${i}`, `river stone n${i}`));

type SearchTask = Extract<ShardTask, { op: 'search' }>;
const search = (datasetId: string, text: string, fulltext: boolean): SearchTask => ({
  op: 'search',
  datasetId,
  shard: 0,
  text,
  stats: null,
  k: 10,
  filter: null,
  minScore: null,
  countTotal: true,
  fulltext,
});

describe('slow inline queries, run again', () => {
  let pool: ShardPool;
  let dir: string;
  const seen: { datasetId: string; ms: number; again: () => number }[] = [];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-again-'));
    pool = new ShardPool(1);
    for (const [datasetId, docs] of [['heavy', heavyDocs], ['small', smallDocs]] as const) {
      await pool.run({ op: 'load', datasetId, shard: 0, dir, bm25 }, undefined, true);
      await pool.run({ op: 'apply', datasetId, shard: 0, upserts: docs, deletes: [], seq: 1, bm25 }, undefined, true);
    }
    // Every inline query counts as slow here, so both datasets report one.
    pool.onSlowInlineQuery(0, (datasetId, ms, again) => seen.push({ datasetId, ms, again }));
  }, 60_000);

  afterAll(async () => {
    await pool.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('times the same query again: a heavy search is slow again, a light one is not', async () => {
    // A deadline that has passed by the time the query runs again: the second run must not stop at it.
    const deadline = callDeadline(Date.now() + 2000, 'the test search');
    await pool.run(search('heavy', WORDS, true), deadline.signal, true);
    await pool.run(search('small', 'river n3', false), deadline.signal, true);
    await new Promise((r) => setTimeout(r, 2100));
    deadline.dispose();
    const heavy = seen.find((s) => s.datasetId === 'heavy');
    const small = seen.find((s) => s.datasetId === 'small');
    expect(heavy && small).toBeTruthy();
    const heavyAgain = Math.min(heavy!.again(), heavy!.again());
    const smallAgain = Math.min(small!.again(), small!.again());
    // The fulltext search over 60,000 chunks of 60 shared words takes milliseconds; the light one microseconds.
    expect(heavyAgain).toBeGreaterThan(2);
    expect(smallAgain).toBeLessThan(1);
    expect(heavyAgain).toBeGreaterThan(10 * smallAgain);
  }, 60_000);

  it('runs a query its deadline cut short no longer again than it first ran', async () => {
    let full = Infinity;
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      await pool.run(search('heavy', WORDS, true), undefined, true);
      full = Math.min(full, performance.now() - t0);
    }
    // The caller allows 3 ms of a query that needs `full`: it stops there, and so must its second run.
    await new Promise((r) => setTimeout(r, 200));
    seen.length = 0;
    const deadline = callDeadline(Date.now() + 3, 'the test search');
    await expect(pool.run(search('heavy', WORDS, true), deadline.signal, true)).rejects.toMatchObject({ code: 'timeout' });
    deadline.dispose();
    await new Promise((r) => setTimeout(r, 200));
    const cut = seen.find((s) => s.datasetId === 'heavy');
    expect(cut).toBeTruthy();
    expect(full).toBeGreaterThan(40);
    // The cut run checks its deadline every few ms, so it ran a fraction of `full` (10-25 ms of
    // ~100 here); run again without a deadline of its own (the caller's has passed) it takes all of it.
    expect(cut!.again()).toBeLessThan(full / 2);
  }, 60_000);
});
