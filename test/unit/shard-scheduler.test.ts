/**
 * A shard thread shares itself fairly between datasets (workers/shard/scheduler.ts): another
 * dataset's searches are answered while a long search runs, by nesting them inside it, and every
 * answer is still exact (each compared with an in-process shard fed the same documents). One
 * dataset's tasks keep their order: a write posted after a long search waits for it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ShardPool } from '../../core/pool/shard-pool.js';
import type { SearchShardReply, ShardDoc, ShardTask } from '../../workers/shard/protocol.js';
import { Shard } from '../../workers/shard/shard.js';
import { textDoc } from '../../workers/shard/text-doc.js';

const bm25 = { k1: 0.9, b: 0.4 };
/** 240 words, 63 distinct: every heavy chunk holds many of them, so a fulltext count scores them all. */
const WORDS = Array.from({ length: 60 }, (_, i) => `w${i} alpha beta gamma`).join(' ');
const HEAVY_DOCS = 20_000;

const doc = textDoc;

const heavyDocs = (salt: number): ShardDoc[] =>
  Array.from({ length: HEAVY_DOCS }, (_, i) => doc(`h${salt}-${i}`, `alpha beta ${(i + salt) % 7} ${WORDS.slice((i * 13 + salt) % 600, ((i * 13 + salt) % 600) + 200)}`));
const SMALL_WORDS = ['river', 'stone', 'maple', 'cloud', 'ember', 'harbor', 'lantern', 'meadow', 'quartz', 'willow'];
const smallDocs: ShardDoc[] = Array.from({ length: 500 }, (_, i) =>
  doc(`s-${i}`, Array.from({ length: 12 }, (_, j) => SMALL_WORDS[(i * 7 + j * 3) % SMALL_WORDS.length]).join(' ') + ` n${i % 50}`),
);

type SearchTask = Extract<ShardTask, { op: 'search' }>;
const heavySearch = (datasetId: string): SearchTask => ({
  op: 'search',
  datasetId,
  shard: 0,
  text: WORDS,
  stats: null,
  k: 100,
  filter: null,
  minScore: null,
  countTotal: true,
  fulltext: true,
});
const smallSearch = (i: number): SearchTask => ({
  op: 'search',
  datasetId: 'small',
  shard: 0,
  text: `${SMALL_WORDS[i % SMALL_WORDS.length]} n${i % 50}`,
  stats: null,
  k: 10,
  filter: null,
  minScore: null,
  countTotal: true,
});

/** The same search on an in-process shard (no thread, no scheduler): the oracle. */
const expected = (shard: Shard, t: SearchTask): SearchShardReply => shard.search(t.text, null, t.k, null, null, t.countTotal, t.fulltext === true);

describe('shard thread scheduling', () => {
  let pool: ShardPool;
  let dir: string;
  const oracle = new Map<string, Shard>();

  async function fill(datasetId: string, docs: ShardDoc[]): Promise<void> {
    await pool.run({ op: 'load', datasetId, shard: 0, dir, bm25 });
    for (let i = 0; i < docs.length; i += 2000) {
      await pool.run({ op: 'apply', datasetId, shard: 0, upserts: docs.slice(i, i + 2000), deletes: [], seq: i + 1, bm25 });
    }
    const shard = new Shard(bm25);
    shard.apply(docs, [], 1);
    oracle.set(datasetId, shard);
  }

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-scheduler-'));
    pool = new ShardPool(1);
    await fill('heavy-a', heavyDocs(0));
    await fill('heavy-b', heavyDocs(5));
    await fill('small', smallDocs);
  }, 120_000);

  afterAll(async () => {
    await pool.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Runs small searches one after another until `done` settles; returns those answered before it, checked. */
  async function smallSearchesDuring(done: Promise<unknown>): Promise<number> {
    let finished = false;
    void done.finally(() => (finished = true));
    let before = 0;
    for (let i = 0; i < 400 && !finished; i++) {
      const got = await pool.run<SearchShardReply>(smallSearch(i));
      expect(got).toEqual(expected(oracle.get('small')!, smallSearch(i)));
      if (!finished) before++;
    }
    return before;
  }

  it('answers a small dataset while another dataset runs a long search, and both answers are exact', async () => {
    const task = heavySearch('heavy-a');
    const heavy = pool.run<SearchShardReply>(task);
    // Let the long search start first: in arrival order the small ones would all wait for it.
    await new Promise((r) => setTimeout(r, 15));
    const answeredMeanwhile = await smallSearchesDuring(heavy);
    const got = await heavy;
    expect(got.total).toBe(HEAVY_DOCS);
    expect(got).toEqual(expected(oracle.get('heavy-a')!, task));
    expect(answeredMeanwhile, 'small searches answered while the long search ran').toBeGreaterThanOrEqual(5);
  });

  it('nests lanes: two long searches of two datasets and small searches, all exact', async () => {
    const a = pool.run<SearchShardReply>(heavySearch('heavy-a'));
    const b = pool.run<SearchShardReply>(heavySearch('heavy-b'));
    await new Promise((r) => setTimeout(r, 15));
    const answeredMeanwhile = await smallSearchesDuring(Promise.all([a, b]));
    expect(await a).toEqual(expected(oracle.get('heavy-a')!, heavySearch('heavy-a')));
    expect(await b).toEqual(expected(oracle.get('heavy-b')!, heavySearch('heavy-b')));
    expect(answeredMeanwhile).toBeGreaterThanOrEqual(5);
  });

  it("keeps one dataset's order: a write posted during its long search waits for it, the next search sees it", async () => {
    const before = pool.run<SearchShardReply>(heavySearch('heavy-a'));
    // Posted without waiting: delete half the dataset and add one chunk, then search again.
    const deletes = Array.from({ length: HEAVY_DOCS / 2 }, (_, i) => `h0-${i * 2}`);
    const added = doc('h0-new', `alpha beta ${WORDS}`);
    const write = pool.run({ op: 'apply', datasetId: 'heavy-a', shard: 0, upserts: [added], deletes, seq: 1_000_000, bm25 });
    const after = pool.run<SearchShardReply>(heavySearch('heavy-a'));
    const shard = oracle.get('heavy-a')!;
    expect(await before).toEqual(expected(shard, heavySearch('heavy-a')));
    await write;
    shard.apply([added], deletes, 1_000_000);
    const got = await after;
    expect(got.total).toBe(HEAVY_DOCS / 2 + 1);
    expect(got).toEqual(expected(shard, heavySearch('heavy-a')));
  });
});
