/**
 * Scatter/gather over one dataset's shards: every task the core sends a dataset goes through
 * {@link ShardSet.run} (all shards, or the ones a partition names), and every ranked answer is
 * gathered by {@link mergeHits}.
 */
import type { SearchShardReply, ShardTask } from '../../workers/shard/protocol.js';
import type { ShardPool } from '../pool/shard-pool.js';
import { shardOf } from './placement.js';

/** A shard task without the dataset and shard it is addressed to (the set fills them in). */
export type TaskBody = ShardTask extends infer T ? (T extends ShardTask ? Omit<T, 'datasetId' | 'shard'> : never) : never;

/** Ranked results of a search. */
export interface DatasetHits {
  readonly chunkIds: string[];
  readonly scores: number[];
  readonly total: number;
}

/** Orders hits by score descending, then chunk id ascending (the same tie-break as each shard). */
export const byScoreThenId = (a: { id: string; score: number }, b: { id: string; score: number }): number =>
  b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** The shards of one dataset, on the threads of the pool. */
export class ShardSet {
  /** Shard numbers 0..count-1. */
  readonly all: readonly number[];

  constructor(
    readonly datasetId: string,
    readonly count: number,
    private readonly pool: ShardPool,
    /** The shards live in the calling thread (see ShardPool), not on the pool's threads. */
    readonly inline = false,
  ) {
    this.all = Array.from({ length: count }, (_, i) => i);
  }

  /**
   * Runs `body(shard)` on each of `shards` (every shard by default) in parallel; replies in the
   * order of `shards`. `signal` stops tasks that have not started and makes running ones stop.
   */
  run<T>(body: (shard: number) => TaskBody, signal?: AbortSignal, shards: readonly number[] = this.all): Promise<T[]> {
    return Promise.all(shards.map((shard) => this.pool.run<T>({ datasetId: this.datasetId, shard, ...body(shard) }, signal, this.inline)));
  }

  /**
   * Items grouped by the shard that holds their chunk (`idOf`), and the shards that got any:
   * for tasks about given chunks, which only their shards are asked.
   */
  partition<T>(items: readonly T[], idOf: (item: T) => string): { byShard: T[][]; shards: number[] } {
    const byShard = this.all.map(() => [] as T[]);
    for (const item of items) byShard[shardOf(idOf(item), this.count)]!.push(item);
    return { byShard, shards: this.all.filter((s) => byShard[s]!.length > 0) };
  }

  /** Whether thread `thread` holds any shard of this dataset. */
  onThread(thread: number): boolean {
    return !this.inline && this.all.some((shard) => this.pool.threadOf(shard) === thread);
  }
}

/**
 * The page `offset..k` of the shards' top-k lists merged: by score (ascending when lower is
 * better, for distances), ties by chunk id as each shard breaks them; totals summed.
 */
export function mergeHits(replies: readonly SearchShardReply[], offset: number, k: number, lowerIsBetter = false): DatasetHits {
  // One shard's list is already in this order.
  if (replies.length === 1) {
    const [r] = replies as [SearchShardReply];
    return { chunkIds: r.chunkIds.slice(offset, k), scores: r.scores.slice(offset, k), total: r.total };
  }
  const merged: { id: string; score: number }[] = [];
  for (const r of replies) for (let i = 0; i < r.chunkIds.length; i++) merged.push({ id: r.chunkIds[i]!, score: r.scores[i]! });
  merged.sort(lowerIsBetter ? (a, b) => a.score - b.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) : byScoreThenId);
  const page = merged.slice(offset, k);
  return { chunkIds: page.map((h) => h.id), scores: page.map((h) => h.score), total: replies.reduce((s, r) => s + r.total, 0) };
}
