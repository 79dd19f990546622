/**
 * The shards of one dataset: their lifecycle (load from snapshots and the change-log tail, apply
 * new changes in order, snapshot, reload after a lost thread) and its queries. Scatter/gather is
 * shard-set.ts, typo correction dataset-typos.ts, merged term statistics term-stats.ts, hybrid
 * fusion hybrid-fusion.ts.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Filter } from '../domain/filter.js';
import type { SparseVector } from '../domain/sparse-vector.js';
import type { TypoOptions } from '../typo/options.js';
import type { Store } from '../../store/repository.js';
import type { Bm25Params, LoadReply, ScrollShardReply, SearchShardReply, ShardDoc, ShardStatsReply, TermStatsReply } from '../../workers/shard/protocol.js';
import type { ShardPool } from '../pool/shard-pool.js';
import { ShardNotLoadedError } from '../pool/shard-not-loaded.js';
import { QuarryError } from '../domain/errors.js';
import type { Reranker } from '../embed/reranker.js';
import { rerankText } from '../domain/lexical-text.js';
import { toShardDoc } from './to-shard-doc.js';
import { DatasetTypos, type TypoCorrection } from './dataset-typos.js';
import { fuseHybrid } from './hybrid-fusion.js';
import { byScoreThenId, mergeHits, ShardSet, type DatasetHits } from './shard-set.js';
import { mergeTermStats, TermStatsCache } from './term-stats.js';
import { nextTurn, sliceEnd } from './inline-slices.js';
import { snapshotDue } from './snapshot-policy.js';
import { withFields } from '../domain/with-fields.js';

export type { DatasetHits } from './shard-set.js';

/** Change-log entries read per batch while applying (the event loop is freed between batches). */
const APPLY_BATCH = 512;

/** What a read or write of an index dropped while it ran answers: a retry finds the dataset's current index, or that it is gone. */
function droppedError(datasetId: string, cause?: unknown): QuarryError {
  return new QuarryError('unavailable', `the index of dataset ${datasetId} was dropped (the dataset was deleted or is being rebuilt); retry shortly`, {
    cause,
    retryAfterSeconds: 1,
  });
}

/**
 * A batch's chunks are converted to shard documents (HTML to text) this many at a time, with the
 * event loop free between slices (measured: a tenant's 100-chunk writes racing its searches held
 * the event loop 15 ms at a time when a whole batch went at once). The store names its own read
 * slice (`Store.indexReads`: small on SQLite, whose reads hold this thread).
 */
const READ_SLICE = 64;
/** Candidates taken from each leg of a hybrid search (more when the page reaches deeper). */
const HYBRID_POOL = 100;

/** A search over one dataset, already validated. */
export interface DatasetSearch {
  readonly text: string;
  readonly filter: Filter | null;
  readonly offset: number;
  readonly limit: number;
  readonly minScore: number | null;
  readonly countTotal: boolean;
  /** Fulltext: BM25 plus proximity pairs of adjacent query words. */
  readonly fulltext?: boolean;
  /** Query words also in the phrase weigh `factor` times more (bm25 and fulltext). */
  readonly boost?: { readonly phrase: string; readonly factor: number } | null;
  /** Autocomplete: the last word also matches the indexed words it begins. */
  readonly prefixLastWord?: boolean;
  /** Fulltext with a sparse encoder: the query's SPLADE vector (then BM25 is not used). */
  readonly sparse?: SparseVector | null;
}

/**
 * Where a dataset's shards are, for health: never asked for, loading, serving, the last load
 * failed, or a shard thread that held some of them died and they have not been reloaded yet.
 */
export type ShardState = 'unloaded' | 'loading' | 'ready' | 'failed' | 'lost';

/**
 * How many shards a dataset has and where they live: on the shard threads, or (one shard of a
 * small dataset) inline in the core's own thread. Chosen by the engine from the dataset's size.
 */
export interface ShardLayout {
  readonly shards: number;
  readonly inline: boolean;
}

/** Identity of the parameters a dataset's shards are built with (part of the snapshot path). */
export function indexFingerprint(params: Bm25Params, modelKey: string, sparseModelKey: string | null = null): string {
  // Without a sparse encoder the identity is what it was before sparse vectors existed (same snapshot paths).
  const parts = [params.k1, params.b, params.distance ?? 'cosine', modelKey, ...(sparseModelKey ? [sparseModelKey] : [])];
  return createHash('sha1').update(JSON.stringify(parts)).digest('hex').slice(0, 12);
}

/** The shards of one dataset. */
export class DatasetIndex {
  appliedSeq = 0;
  private ready: Promise<void> | undefined;
  private applying: Promise<unknown> = Promise.resolve();
  private unsnapshotted = 0;
  /** Changes applied since this index loaded (what the snapshot interval grows with). */
  private appliedSinceLoad = 0;
  private firstUnsnapshottedAt = 0;
  private snapshotting: Promise<void> | undefined;
  /** Compacts the shards on the threads once the dataset's writes stop for {@link compactIdleMs} (re-armed by each apply; never inline shards). */
  private idleTimer: NodeJS.Timeout | undefined;
  /** Changes applied since the shards last compacted: an idle period after none compacts nothing. */
  private uncompacted = 0;
  /** Where the shards' snapshots are written. */
  readonly dir: string;
  private readonly set: ShardSet;
  private readonly typos: DatasetTypos;
  /** Merged term statistics of recent queries (multi-shard datasets), valid while no apply runs. */
  private readonly statsCache = new TermStatsCache();
  private applyInFlight = 0;
  private loadState: 'unloaded' | 'loading' | 'ready' | 'failed' = 'unloaded';
  /** Counts thread deaths that took shards of this dataset; a load started after the last one clears `lost`. */
  private losses = 0;
  private lost = false;
  private reloading: Promise<void> | undefined;
  /**
   * Dropped (the dataset was deleted or rebuilt) or replaced by an index of another layout: no
   * more snapshots, loads or reloads. Without it an apply or read that ended after the drop found
   * its shards gone, reloaded them from the store, and the next snapshot wrote the dataset's
   * directory again after the purge had removed it.
   */
  private retired = false;

  /** Whether dense scores are distances (euclidean, manhattan) rather than similarities. */
  private get lowerIsBetter(): boolean {
    const distance = this.params.distance ?? 'cosine';
    return distance === 'euclidean' || distance === 'manhattan';
  }

  /** Parameters the shards were built with; a dataset whose configuration changes them is rebuilt. */
  readonly fingerprint: string;

  /** Number of shards. */
  readonly shards: number;
  /** The shards live in the core's own thread. */
  readonly inline: boolean;

  constructor(
    readonly datasetId: string,
    layout: ShardLayout,
    private readonly params: Bm25Params,
    /** Vectors of this model key are indexed; others are ignored (never mixed). */
    readonly modelKey: string,
    private readonly pool: ShardPool,
    private readonly store: Store,
    private readonly dataDir: string,
    private readonly logger: Logger,
    /** SPLADE vectors of this encoder are indexed (null: the dataset has no sparse encoder). */
    readonly sparseModelKey: string | null = null,
    /** Shards on the threads give back their growth room this long after the last apply (0: never; see Config.compactIdleMs). */
    private readonly compactIdleMs = 0,
  ) {
    this.fingerprint = indexFingerprint(params, modelKey, sparseModelKey);
    this.shards = layout.shards;
    this.inline = layout.inline;
    this.set = new ShardSet(datasetId, layout.shards, pool, layout.inline);
    this.typos = new DatasetTypos(this.set, store, logger);
    // An inline shard and a one-shard dataset on a thread write the same snapshot.
    this.dir = path.join(dataDir, 'index', datasetId, `${layout.shards}-${this.fingerprint}`);
  }

  /** A new, unloaded index of this dataset with the same parameters and another layout. */
  withLayout(layout: ShardLayout): DatasetIndex {
    return new DatasetIndex(this.datasetId, layout, this.params, this.modelKey, this.pool, this.store, this.dataDir, this.logger, this.sparseModelKey, this.compactIdleMs);
  }

  /** Loads snapshots and replays the change log once; later calls wait for the same load. */
  ensureReady(): Promise<void> {
    if (this.ready) return this.ready;
    if (this.retired) return Promise.reject(droppedError(this.datasetId));
    const losses = this.losses;
    this.loadState = 'loading';
    this.ready = this.load().then(
      () => {
        this.loadState = 'ready';
        if (this.losses === losses) this.lost = false;
      },
      (err: unknown) => {
        this.ready = undefined;
        this.loadState = 'failed';
        throw err;
      },
    );
    return this.ready;
  }

  /** Health of this dataset's shards. */
  get state(): ShardState {
    return this.lost ? 'lost' : this.loadState;
  }

  /**
   * A shard thread died: when it held shards of this dataset (after they were loaded), they are
   * gone, so the dataset reloads (snapshot + change log) in the background; reads meanwhile wait
   * for that reload or fail loudly, never answer from an empty shard.
   */
  threadLost(thread: number): void {
    if (this.loadState === 'unloaded' || this.retired) return;
    if (!this.set.onThread(thread)) return;
    this.losses++;
    this.lost = true;
    this.logger.warn({ dataset: this.datasetId, thread }, 'a shard thread holding this dataset died; reloading its shards');
    void this.reload().catch((err: unknown) => this.logger.error({ err, dataset: this.datasetId }, 'reload after a shard thread restart failed'));
  }

  /** Whether shards were lost and not reloaded since. */
  get needsReload(): boolean {
    return this.lost;
  }

  /**
   * Forgets the loaded state and loads again, after any apply in flight and before any later one
   * (a reload replays the change log itself); concurrent callers share one reload.
   */
  reload(): Promise<void> {
    if (this.retired) return Promise.resolve();
    this.reloading ??= (async () => {
      // A load in flight finishes first: two loads replaying into the same shards would interleave.
      await this.ready?.catch(() => undefined);
      const run = this.applying.then(() => {
        this.ready = undefined;
        // A fresh shard has no typo vocabulary and other statistics than the cached ones.
        this.typos.reset();
        this.statsCache.invalidate();
        return this.ensureReady();
      });
      this.applying = run.catch(() => undefined);
      await run;
    })().finally(() => {
      this.reloading = undefined;
    });
    return this.reloading;
  }

  /**
   * Runs a read over the shards; when a thread answers that it does not hold a shard (it was
   * replaced since the load), reloads the dataset and runs it once more. A second miss is a 503:
   * an empty answer would pass for a dataset without matches.
   */
  private async withShards<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof ShardNotLoadedError)) throw err;
      if (this.retired) throw droppedError(this.datasetId, err);
      this.logger.warn({ dataset: this.datasetId, shard: err.shard }, 'a shard thread does not hold this dataset; reloading it before answering');
      this.losses++;
      this.lost = true;
      await this.reload();
    }
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof ShardNotLoadedError)) throw err;
      throw new QuarryError('unavailable', `the shards of dataset ${this.datasetId} are reloading after a shard thread restart; retry shortly`, {
        cause: err,
        retryAfterSeconds: 1,
      });
    }
  }

  private async load(): Promise<void> {
    const started = Date.now();
    const replies = await this.set.run<LoadReply>(() => ({ op: 'load', dir: this.dir, bm25: this.params }));
    // Replaying from the oldest snapshot is safe: applying the current state of a chunk twice is idempotent.
    this.appliedSeq = Math.min(...replies.map((r) => r.appliedSeq));
    const replayed = await this.applyPending(Number.POSITIVE_INFINITY);
    // Their typo vocabularies were on before the restart: filled again now, a slice at a time.
    if (replies.some((r) => r.typo)) this.typos.warm();
    this.logger.info(
      { dataset: this.datasetId, shards: this.shards, snapshots: replies.filter((r) => r.loaded).length, replayed, ms: Date.now() - started },
      'dataset loaded',
    );
  }

  /** Applies the change log at least through `minSeq` (everything recorded when it is 0). */
  apply(minSeq: number): Promise<number> {
    return this.withShards(() => this.applyThrough(minSeq));
  }

  private async applyThrough(minSeq: number): Promise<number> {
    await this.ensureReady();
    if (minSeq > 0 && this.appliedSeq >= minSeq) return this.appliedSeq;
    // One apply at a time per dataset, in log order.
    const run = this.applying.then(() => this.applyPending(Number.POSITIVE_INFINITY));
    this.applying = run.catch(() => undefined);
    await run;
    return this.appliedSeq;
  }

  /** Applies entries after `appliedSeq`; returns how many entries it read. */
  private async applyPending(limit: number): Promise<number> {
    let read = 0;
    for (;;) {
      const entries = await this.store.changeLog.since(this.datasetId, this.appliedSeq, APPLY_BATCH);
      if (entries.length === 0) break;
      read += entries.length;
      const last = new Map<string, 'upsert' | 'delete'>();
      for (const e of entries) last.set(e.chunkId, e.op);
      const upsertIds = [...last].filter(([, op]) => op === 'upsert').map(([id]) => id);
      const docs: ShardDoc[] = [];
      const present = new Set<string>();
      // The store says how many chunks to ask for at once (few where its reads hold this thread).
      const slice = this.store.indexReads.sliceSize;
      for (let i = 0; i < upsertIds.length; i += slice) {
        if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
        docs.push(...(await this.readDocs(upsertIds.slice(i, i + slice))));
      }
      for (const d of docs) present.add(d.chunkId);
      const upserts = this.set.partition(docs, (d) => d.chunkId).byShard;
      // An upsert whose chunk is gone was deleted later in the log than this batch saw: drop it.
      const deletes = this.set.partition([...last].filter(([id, op]) => op === 'delete' || !present.has(id)).map(([id]) => id), (id) => id).byShard;
      const seq = entries[entries.length - 1]!.seq;
      // Shards change from here on: cached statistics are stale (and none is stored meanwhile).
      this.applyInFlight++;
      this.statsCache.invalidate();
      try {
        if (this.inline) await this.applyInSlices(upserts[0]!, deletes[0]!, seq);
        // Every shard gets the batch's sequence, even with nothing of it: its snapshot then says how far it is.
        else await this.set.run((shard) => ({ op: 'apply', upserts: upserts[shard]!, deletes: deletes[shard]!, seq, bm25: this.params }));
        this.appliedSeq = seq;
      } finally {
        this.applyInFlight--;
      }
      this.noteChanges(entries.length);
      if (read >= limit || entries.length < APPLY_BATCH) break;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    return read;
  }

  /** The shard documents of these chunks as the store has them now (chunks gone are left out). */
  private async readDocs(ids: readonly string[]): Promise<ShardDoc[]> {
    // One snapshot for the chunks, groups and vectors; the conversion, which extracts text from
    // HTML, still frees the event loop every READ_SLICE.
    const found = await this.store.indexReads.chunks(this.datasetId, ids, this.modelKey, this.sparseModelKey);
    const docs: ShardDoc[] = [];
    for (let i = 0; i < found.length; i += READ_SLICE) {
      if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      for (const f of found.slice(i, i + READ_SLICE)) docs.push(toShardDoc(f.chunk, f.groupIds, f.vector, f.sparse));
    }
    return docs;
  }

  /**
   * Applies a batch to the inline shard a slice at a time (see inline-slices.ts), letting other
   * requests run between slices. Only the last slice carries `seq`: a snapshot taken between
   * slices records the sequence before the batch, whose replay is idempotent.
   */
  private async applyInSlices(upserts: readonly ShardDoc[], deletes: readonly string[], seq: number): Promise<void> {
    let start = 0;
    let first = true;
    do {
      const end = sliceEnd(upserts, start);
      const last = end >= upserts.length;
      const slice = upserts.slice(start, end);
      await this.set.run(() => ({ op: 'apply', upserts: slice, deletes: first ? deletes : [], seq: last ? seq : this.appliedSeq, bm25: this.params }));
      first = false;
      start = end;
      if (!last) await nextTurn();
    } while (start < upserts.length);
  }

  private noteChanges(n: number): void {
    if (this.unsnapshotted === 0) this.firstUnsnapshottedAt = Date.now();
    this.unsnapshotted += n;
    this.appliedSinceLoad += n;
    // An inline dataset is snapshotted by its count of changes only (see snapshotDue).
    if (snapshotDue(this.unsnapshotted, this.appliedSinceLoad, Date.now() - this.firstUnsnapshottedAt, !this.inline)) {
      void this.snapshot().catch((err: unknown) => this.logger.error({ err, dataset: this.datasetId }, 'snapshot failed'));
    }
    this.uncompacted += n;
    // Not an inline shard: its copy would run in one piece on the event loop that answers every
    // tenant's requests (SciFact's 5,183 chunks: 10-19 ms alone, a p99.9 of 27 ms against 7 in
    // the service's first seconds after the writes), for the little room a shard small enough
    // to be inline holds (0.66 MiB of SciFact's ~18). Its room goes at its next load.
    if (this.compactIdleMs > 0 && !this.inline) {
      clearTimeout(this.idleTimer);
      this.idleTimer = setTimeout(() => void this.compactIdle(), this.compactIdleMs).unref();
    }
  }

  /**
   * The idle timer's compaction: the shards grew by whole arrays (postings by a quarter at a
   * time) while the writes ran, and give the room back now. Not a snapshot: writing the whole
   * index after every run of writes cost a 1M-row import 23 s of CPU and its capture's memory
   * beside the live index (bench/README.md, file-import).
   */
  private async compactIdle(): Promise<void> {
    this.idleTimer = undefined;
    if (this.uncompacted === 0 || this.retired || this.lost || this.loadState !== 'ready') return;
    const changes = this.uncompacted;
    this.uncompacted = 0;
    try {
      // Not through withShards: a shard a thread lost is reloaded by the next read, laid out as a load lays it.
      const freed = await this.set.run<number>(() => ({ op: 'compact' }));
      this.logger.info({ dataset: this.datasetId, changes, freedBytes: freed.reduce((s, b) => s + b, 0) }, 'writes stopped: the index gave back its growth room');
    } catch (err) {
      // A shard not held (or threads shutting down) is laid out compactly by its next load anyway.
      if (err instanceof ShardNotLoadedError || (err instanceof QuarryError && err.code === 'unavailable')) return;
      this.logger.warn({ err, dataset: this.datasetId }, 'compaction after the writes stopped failed; the index keeps its growth room');
    }
  }

  /**
   * Writes every shard's snapshot (one at a time per dataset). A shard its thread does not hold is
   * not written (its last snapshot stays): writing an empty shard with a recent sequence would
   * make the loss permanent.
   */
  snapshot(): Promise<void> {
    if (this.snapshotting) return this.snapshotting;
    if (!this.ready || this.lost || this.retired) return Promise.resolve();
    this.unsnapshotted = 0;
    this.snapshotting = Promise.allSettled(this.set.all.map((shard) => this.set.run(() => ({ op: 'snapshot', dir: this.dir }), undefined, [shard])))
      .then((results) => {
        const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as unknown);
        if (failed.some((e) => e instanceof ShardNotLoadedError) && !this.lost) {
          this.losses++;
          this.lost = true;
          void this.reload().catch((err: unknown) => this.logger.error({ err, dataset: this.datasetId }, 'reload after a missing shard failed'));
        }
        const other = failed.find((e) => !(e instanceof ShardNotLoadedError));
        if (other !== undefined) throw other;
      })
      .finally(() => {
        this.snapshotting = undefined;
      });
    return this.snapshotting;
  }

  /** Ranked search with statistics summed over all shards. */
  search(q: DatasetSearch, signal?: AbortSignal): Promise<DatasetHits> {
    if (q.fulltext && q.sparse) return this.searchSparse(q.sparse, q, signal);
    return this.withShards(() => this.searchLexical(q, signal));
  }

  private async searchLexical(q: DatasetSearch, signal?: AbortSignal): Promise<DatasetHits> {
    await this.ensureReady();
    const k = q.offset + q.limit;
    const prefix = q.prefixLastWord === true;
    let global: TermStatsReply | null = null;
    if (this.shards > 1) {
      const key = `${q.fulltext === true ? 1 : 0}${prefix ? 1 : 0}${q.text}`;
      const seqBefore = this.appliedSeq;
      if (this.applyInFlight === 0) global = this.statsCache.get(key, seqBefore);
      if (global === null) {
        const parts = await this.set.run<TermStatsReply>(() => ({ op: 'termStats', text: q.text, pairs: q.fulltext === true, prefix }), signal);
        global = mergeTermStats(parts, prefix);
        // Kept only when no change was applied while the shards answered.
        if (this.applyInFlight === 0 && this.appliedSeq === seqBefore) this.statsCache.set(key, seqBefore, global);
      }
    }
    const replies = await this.set.run<SearchShardReply>(
      () => ({ op: 'search', text: q.text, stats: global, k, filter: q.filter, minScore: q.minScore, countTotal: q.countTotal, fulltext: q.fulltext === true, boost: q.boost ?? null, prefix }),
      signal,
    );
    return mergeHits(replies, q.offset, k);
  }

  /** Typo correction of a query against the words of every shard (see dataset-typos.ts). */
  correctTypos(query: string, options: TypoOptions, signal?: AbortSignal): Promise<TypoCorrection> {
    return this.withShards(async () => {
      await this.ensureReady();
      return this.typos.correct(query, options, signal);
    });
  }

  /** Best chunks by SPLADE dot product over all shards (fulltext with a sparse encoder). */
  async searchSparse(vector: SparseVector, q: Omit<DatasetSearch, 'text'>, signal?: AbortSignal): Promise<DatasetHits> {
    return this.scatterVector('searchSparse', vector, q, false, signal);
  }

  /**
   * Nearest chunks to a query vector over all shards. Scores are similarities for cosine and dot
   * (best = highest) and distances for euclidean and manhattan (best = lowest).
   */
  async searchDense(vector: Float32Array, q: Omit<DatasetSearch, 'text'>, signal?: AbortSignal): Promise<DatasetHits> {
    return this.scatterVector('searchDense', vector, q, this.lowerIsBetter, signal);
  }

  /** One vector search on every shard, merged by score (ascending when lower is better), then paged. */
  private async scatterVector(
    op: 'searchDense' | 'searchSparse',
    vector: Float32Array | SparseVector,
    q: Omit<DatasetSearch, 'text'>,
    lowerIsBetter: boolean,
    signal?: AbortSignal,
  ): Promise<DatasetHits> {
    return this.withShards(() => this.scatterVectorOnce(op, vector, q, lowerIsBetter, signal));
  }

  private async scatterVectorOnce(
    op: 'searchDense' | 'searchSparse',
    vector: Float32Array | SparseVector,
    q: Omit<DatasetSearch, 'text'>,
    lowerIsBetter: boolean,
    signal?: AbortSignal,
  ): Promise<DatasetHits> {
    await this.ensureReady();
    const k = q.offset + q.limit;
    const body = { vector, k, filter: q.filter, threshold: q.minScore, countTotal: q.countTotal };
    const replies = await this.set.run<SearchShardReply>(() => (op === 'searchDense' ? { op, ...body, vector: vector as Float32Array } : { op, ...body, vector: vector as SparseVector }), signal);
    return mergeHits(replies, q.offset, k, lowerIsBetter);
  }

  /**
   * Hybrid: the union of the fulltext and the dense candidates (at least {@link HYBRID_POOL} of
   * each), each candidate scored by both (missing scores computed), then fused (hybrid-fusion.ts).
   */
  searchHybrid(vector: Float32Array, q: DatasetSearch, signal?: AbortSignal): Promise<DatasetHits> {
    return this.withShards(() => this.searchHybridOnce(vector, q, signal));
  }

  private async searchHybridOnce(vector: Float32Array, q: DatasetSearch, signal?: AbortSignal): Promise<DatasetHits> {
    const pool = Math.max(HYBRID_POOL, q.offset + q.limit);
    const leg = withFields(q, { offset: 0, limit: pool, minScore: null, countTotal: false, fulltext: true });
    const [lexical, dense] = await Promise.all([this.search(leg, signal), this.searchDense(vector, leg, signal)]);
    const ids = [...new Set([...lexical.chunkIds, ...dense.chunkIds])];
    if (ids.length === 0) return { chunkIds: [], scores: [], total: 0 };
    const bm25 = new Map(lexical.chunkIds.map((id, i) => [id, lexical.scores[i]!]));
    const cos = new Map(dense.chunkIds.map((id, i) => [id, dense.scores[i]!]));
    const needLexical = ids.filter((id) => !bm25.has(id));
    if (needLexical.length > 0) {
      const more = await this.search(
        { text: q.text, filter: { must: [{ has_id: { ids: needLexical } }] }, offset: 0, limit: needLexical.length, minScore: null, countTotal: false, fulltext: true, sparse: q.sparse ?? null },
        signal,
      );
      more.chunkIds.forEach((id, i) => bm25.set(id, more.scores[i]!));
    }
    const needDense = ids.filter((id) => !cos.has(id));
    if (needDense.length > 0) {
      const { byShard, shards } = this.set.partition(needDense, (id) => id);
      const replies = await this.set.run<number[]>((shard) => ({ op: 'denseScores', vector, chunkIds: byShard[shard]! }), signal, shards);
      shards.forEach((shard, r) =>
        byShard[shard]!.forEach((id, i) => {
          const score = replies[r]![i]!;
          if (!Number.isNaN(score)) cos.set(id, score);
        }),
      );
    }
    return fuseHybrid({ ids, lexical: bm25, dense: cos, denseLowerIsBetter: this.lowerIsBetter, minScore: q.minScore, offset: q.offset, limit: q.limit, countTotal: q.countTotal });
  }

  /**
   * Hybrid with a cross-encoder (as the reference implementation does): the union of one window
   * (offset + limit) of each leg, each candidate's text (first 100 words) scored against the
   * query by the reranker, sorted by that score; score_threshold applies to it.
   */
  async searchHybridReranked(vector: Float32Array, q: DatasetSearch, reranker: Reranker, signal?: AbortSignal): Promise<DatasetHits> {
    const leg = withFields(q, { offset: 0, limit: q.offset + q.limit, minScore: null, countTotal: false, fulltext: true });
    const [lexical, dense] = await Promise.all([this.search(leg, signal), this.searchDense(vector, leg, signal)]);
    const ids = [...new Set([...lexical.chunkIds, ...dense.chunkIds])];
    if (ids.length === 0) return { chunkIds: [], scores: [], total: 0 };
    const chunks = await this.store.chunks.getMany(this.datasetId, ids);
    const texts = chunks.map((c) => rerankText(c));
    const scores = await reranker.score(q.text, texts, signal);
    const ranked = chunks
      .map((c, i) => ({ id: c.id, score: scores[i]! }))
      .filter((h) => q.minScore === null || h.score >= q.minScore)
      .sort(byScoreThenId);
    const page = ranked.slice(q.offset, q.offset + q.limit);
    return { chunkIds: page.map((h) => h.id), scores: page.map((h) => h.score), total: q.countTotal ? ranked.length : 0 };
  }

  /** Filtered listing by id ascending (from `afterId`, inclusive) or by a field. */
  scroll(filter: Filter | null, afterId: string | null, limit: number, sortField: string | null, descending: boolean, signal?: AbortSignal): Promise<string[]> {
    return this.withShards(() => this.scrollOnce(filter, afterId, limit, sortField, descending, signal));
  }

  private async scrollOnce(filter: Filter | null, afterId: string | null, limit: number, sortField: string | null, descending: boolean, signal?: AbortSignal): Promise<string[]> {
    await this.ensureReady();
    const replies = await this.set.run<ScrollShardReply>(() => ({ op: 'scroll', filter, afterId, limit, sortField, descending }), signal);
    const all: { id: string; key: number }[] = [];
    for (const r of replies) for (let i = 0; i < r.chunkIds.length; i++) all.push({ id: r.chunkIds[i]!, key: r.keys[i]! });
    const dir = descending ? -1 : 1;
    all.sort((a, b) => {
      if (sortField !== null) {
        const an = Number.isNaN(a.key);
        const bn = Number.isNaN(b.key);
        if (an !== bn) return an ? 1 : -1;
        if (!an && a.key !== b.key) return (a.key - b.key) * dir;
      }
      return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
    });
    return all.slice(0, limit).map((x) => x.id);
  }

  /** Chunk count and applied sequence over all shards. */
  stats(): Promise<{ chunkCount: number; appliedSeq: number; tokenCount: number }> {
    return this.withShards(async () => {
      await this.ensureReady();
      const replies = await this.set.run<ShardStatsReply>(() => ({ op: 'stats' }));
      return { chunkCount: replies.reduce((s, r) => s + r.chunkCount, 0), appliedSeq: this.appliedSeq, tokenCount: replies.reduce((s, r) => s + r.tokenCount, 0) };
    });
  }

  /** Forgets every shard of this dataset in memory (after a snapshot being written, which needs them). */
  async drop(): Promise<void> {
    this.retired = true;
    clearTimeout(this.idleTimer);
    await this.snapshotting?.catch(() => undefined);
    await this.set.run(() => ({ op: 'drop' }));
  }

  /**
   * After an index of another layout took this one's place: writes no more snapshots, forgets its
   * shards and deletes its snapshot files (a later start picks the layout by size again and would
   * never read them), unless `successor` writes to the same place.
   */
  async retire(successor: DatasetIndex): Promise<void> {
    this.retired = true;
    clearTimeout(this.idleTimer);
    await this.snapshotting?.catch(() => undefined);
    await this.drop();
    if (successor.dir !== this.dir) fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
