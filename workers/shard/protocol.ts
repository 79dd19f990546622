/**
 * Messages between the core and a shard thread. Plain data only (structured clone); the core
 * imports these as types.
 */
import type { DistanceMetric } from '../../core/domain/distance-metric.js';
import type { Filter } from '../../core/domain/filter.js';
import type { SparseVector } from '../../core/domain/sparse-vector.js';
import type { TaskStop } from './task-stop.js';
import type { VocabularyLookup } from './typo/vocabulary.js';

export type { TaskStop } from './task-stop.js';

/** What a shard indexes of one chunk. */
export interface ShardDoc {
  readonly chunkId: string;
  /** Text for BM25 (fulltext_content, else chunk_html as text). */
  readonly text: string;
  readonly trackingId: string | null;
  readonly link: string | null;
  readonly tagSet: readonly string[];
  readonly numValue: number | null;
  /** Epoch milliseconds. */
  readonly timeStamp: number | null;
  readonly lat: number | null;
  readonly lon: number | null;
  readonly groupIds: readonly string[];
  /** The chunk's metadata, parsed (absent or null: none); not read when {@link metadataJson} is set. */
  readonly metadata?: unknown;
  /**
   * The chunk's metadata as the store's JSON text, in place of {@link metadata}: one string to
   * send and keep instead of an object graph, parsed by the shard only when a filter, a sort or
   * a read needs it (filter/field-store.ts).
   */
  readonly metadataJson?: string | null;
  /** fulltext_boost: the phrase's words weigh `factor` times more in this chunk. */
  readonly boost?: { readonly phrase: string; readonly factor: number } | null;
  /** The chunk's SPLADE vector, when the dataset has a sparse encoder and the chunk is encoded. */
  readonly sparse?: SparseVector | null;
  /** The chunk's dense vector from the dataset's current model, when it has one. */
  readonly vector?: Float32Array | null;
}

/** Identifies one shard of a dataset. */
export interface ShardKey {
  readonly datasetId: string;
  /** Index of this shard among the dataset's shards. */
  readonly shard: number;
}

/** Index parameters of a dataset: BM25 k1/b and the dense distance (DISTANCE_METRIC). */
export interface Bm25Params {
  readonly k1: number;
  readonly b: number;
  /** cosine, dot, euclidean or manhattan. @defaultValue cosine */
  readonly distance?: DistanceMetric;
}

/** Tasks a shard thread runs. */
export type ShardTask =
  | ({ readonly op: 'apply'; readonly upserts: readonly ShardDoc[]; readonly deletes: readonly string[]; readonly seq: number; readonly bm25: Bm25Params } & ShardKey)
  | ({
      readonly op: 'termStats';
      readonly text: string;
      /** Also count the query's proximity pairs (fulltext search). */
      readonly pairs?: boolean;
      /** Also list completions of the query's last word (autocomplete). */
      readonly prefix?: boolean;
    } & ShardKey)
  | ({
      readonly op: 'search';
      /** The query text; analyzed here when `stats` is null. */
      readonly text: string;
      /** Corpus statistics summed over all shards, with `terms`; null: this is the only shard. */
      readonly stats: TermStatsReply | null;
      readonly k: number;
      readonly filter: Filter | null;
      readonly minScore: number | null;
      readonly countTotal: boolean;
      /** Fulltext: BM25 plus proximity pairs (see bm25/proximity.ts). */
      readonly fulltext?: boolean;
      /** Query words also in this phrase weigh `factor` times more. */
      readonly boost?: { readonly phrase: string; readonly factor: number } | null;
      /** Autocomplete (single shard): complete the last word. */
      readonly prefix?: boolean;
    } & ShardKey)
  | ({
      readonly op: 'searchDense';
      readonly vector: Float32Array;
      readonly k: number;
      readonly filter: Filter | null;
      /** score_threshold with the metric's direction (absent or 0: none). */
      readonly threshold: number | null;
      readonly countTotal: boolean;
    } & ShardKey)
  | ({
      readonly op: 'searchSparse';
      readonly vector: SparseVector;
      readonly k: number;
      readonly filter: Filter | null;
      /** Minimum dot product (absent: none). */
      readonly threshold: number | null;
      readonly countTotal: boolean;
    } & ShardKey)
  | ({ readonly op: 'typo'; readonly lookups: readonly VocabularyLookup[] } & ShardKey)
  | ({ readonly op: 'typoEnable' } & ShardKey)
  | ({ readonly op: 'typoFill'; readonly docs: readonly { readonly chunkId: string; readonly text: string }[] } & ShardKey)
  | ({ readonly op: 'sparseScores'; readonly vector: SparseVector; readonly chunkIds: readonly string[] } & ShardKey)
  | ({ readonly op: 'denseScores'; readonly vector: Float32Array; readonly chunkIds: readonly string[] } & ShardKey)
  | ({ readonly op: 'scroll'; readonly filter: Filter | null; readonly afterId: string | null; readonly limit: number; readonly sortField: string | null; readonly descending: boolean } & ShardKey)
  | ({ readonly op: 'stats' } & ShardKey)
  | ({ readonly op: 'analyze'; readonly text: string } & ShardKey)
  | ({ readonly op: 'snapshot'; readonly dir: string } & ShardKey)
  /** Gives back the index's growth room (Bm25Index.compactStorage); answers the bytes freed. */
  | ({ readonly op: 'compact' } & ShardKey)
  | ({ readonly op: 'load'; readonly dir: string; readonly bm25: Bm25Params } & ShardKey)
  | ({ readonly op: 'drop' } & ShardKey);

/** A task as posted to a thread: read tasks carry their stop condition (see task-stop.ts). */
export type ShardMessage = ShardTask & { readonly stop?: TaskStop };

/**
 * Why a task did not run: `stopped` (deadline passed or caller cancelled) or `not_loaded` (the
 * thread does not hold the shard: only `load` creates one, so a fresh thread answers this until
 * the core reloads the dataset).
 */
export type ShardFault = 'stopped_deadline' | 'stopped_cancelled' | 'not_loaded';

/** Every reply of a thread: the task's value, or why it did not run. */
export type ShardReply = { readonly value: unknown } | { readonly fault: ShardFault; readonly message: string };

/** What a thread posts back for the job numbered `id`: its reply, or the error a bug threw. */
export type ThreadReply =
  /** `runMs`: how long the task ran in the thread (from its start to its reply). */
  | { readonly id: number; readonly reply: ShardReply; readonly runMs: number }
  | { readonly id: number; readonly error: { readonly name: string; readonly message: string; readonly stack: string } };

/** Reply of `termStats`: the analyzed query and this shard's statistics for it. */
export interface TermStatsReply {
  readonly terms: string[];
  readonly docCount: number;
  readonly totalLength: number;
  readonly docFreqs: number[];
  /** The query's proximity pairs (fulltext only). */
  readonly pairs?: [string, string][];
  /** Documents where each pair occurs, aligned with `pairs`. */
  readonly pairDocFreqs?: number[];
  /** Completions of the last query word found here (autocomplete), with their document frequencies. */
  readonly completions?: string[];
  readonly completionDocFreqs?: number[];
}

/** Reply of `search`: best first. */
export interface SearchShardReply {
  readonly chunkIds: string[];
  readonly scores: number[];
  /** Matches above minScore (only when countTotal). */
  readonly total: number;
}

/** Reply of `scroll`: ids in the requested order with the sort key (NaN when none). */
export interface ScrollShardReply {
  readonly chunkIds: string[];
  readonly keys: number[];
}

/** Reply of `stats`. */
export interface ShardStatsReply {
  readonly chunkCount: number;
  readonly appliedSeq: number;
  /** Words indexed (the sum of the chunks' BM25 lengths): what its snapshot, load and applies cost. */
  readonly tokenCount: number;
}

/** Reply of `load`: the sequence the snapshot covers (0 when there was none). */
export interface LoadReply {
  readonly appliedSeq: number;
  readonly loaded: boolean;
  /** The snapshot's typo vocabulary was on: the core fills it again (it is not restored by the load). */
  readonly typo: boolean;
}
