/**
 * The `compact` shard task (run once a dataset's writes stop) leaves the shard in the layout a
 * snapshot load builds: the postings' growth room given back (the bytes freed are its answer),
 * answers unchanged, and writes after it indexed as before (the same answers as a shard never
 * compacted).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ShardHost } from '../../workers/shard/shard-host.js';
import type { ShardDoc, ShardMessage } from '../../workers/shard/protocol.js';
import { Shard } from '../../workers/shard/shard.js';
import { rng } from '../helpers/random-corpus.js';

const BM25 = { k1: 0.9, b: 0.4 };
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** Chunks `from`..`from + n` of Zipf-ish words over a small vocabulary (long lists grow in steps). */
function docs(from: number, n: number): ShardDoc[] {
  const r = rng(from + 1);
  return Array.from({ length: n }, (_, j): ShardDoc => ({
    chunkId: `c${from + j}`,
    text: Array.from({ length: 5 + Math.floor(r() * 20) }, () => `w${Math.floor(r() ** 3 * 300)}`).join(' '),
    trackingId: null,
    link: null,
    tagSet: [],
    numValue: null,
    timeStamp: null,
    lat: null,
    lon: null,
    groupIds: [],
    metadata: null,
  }));
}

/** The shard's top 10 for a few queries (each a page of ids and scores). */
function answers(shard: Shard): unknown[] {
  const pages = ['w0', 'w1 w7', 'w3 w40 w299', 'w12 w13'].map((q) => shard.search(q, null, 10, null, null, false));
  expect(pages.every((p) => JSON.stringify(p).includes('"c'))).toBe(true);
  return pages;
}

const slack = (shard: Shard): number => {
  const parts = shard.index.memoryReport() as Record<string, number>;
  return Object.entries(parts).filter(([k]) => k.startsWith('postings slack')).reduce((s, [, v]) => s + v, 0);
};

it('gives back the growth room, answering and indexing as a shard never compacted', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-compact-'));
  dirs.push(dir);
  const host = new ShardHost();
  const key = { datasetId: 'ds', shard: 0 };
  const run = (task: ShardMessage): unknown => {
    const reply = host.run(task);
    if (!('value' in reply)) throw new Error(JSON.stringify(reply));
    return reply.value;
  };
  run({ ...key, op: 'load', dir, bm25: BM25 });
  const plain = new Shard(BM25);
  const apply = (from: number, n: number, seq: number): void => {
    run({ ...key, op: 'apply', upserts: docs(from, n), deletes: [], seq, bm25: BM25 });
    plain.apply(docs(from, n), [], seq);
  };
  for (let b = 0; b < 20; b++) apply(b * 500, 500, b + 1);
  const live = (host as unknown as { shards: Map<string, Shard> }).shards.values().next().value as Shard;
  const before = slack(live);
  expect(before).toBeGreaterThan(10_000);
  expect(answers(live)).toEqual(answers(plain));
  const freed = run({ ...key, op: 'compact' }) as number;
  expect(slack(live)).toBeLessThan(before / 4);
  expect(freed).toBeGreaterThanOrEqual(before - slack(live));
  expect(answers(live)).toEqual(answers(plain));
  // Writes after it: new chunks, rewritten and deleted ones.
  run({ ...key, op: 'apply', upserts: [...docs(10_000, 800), ...docs(3, 50)], deletes: ['c7', 'c9000'], seq: 30, bm25: BM25 });
  plain.apply([...docs(10_000, 800), ...docs(3, 50)], ['c7', 'c9000'], 30);
  expect(answers(live)).toEqual(answers(plain));
  expect(live.stats()).toEqual(plain.stats());
});
