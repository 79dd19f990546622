/**
 * The per-shard dense vector index: a usearch HNSW graph (f16 by default) for fast approximate
 * search, plus an f32 copy of every vector for exact scans under selective filters, exact
 * re-scoring of graph results and the Manhattan metric. Keys are the shard's dense u32 ids.
 */
import { Index, MetricKind, ScalarKind } from 'usearch';
import type { Bitset } from '../bm25/bitset.js';
import { higherIsBetter, type DenseMetric } from './dense-metric.js';
import { dotAt, l1At, l2sqAt, normOf } from './vector-kernels.js';
import { VectorSlab } from './vector-slab.js';
import { checkStop } from '../task-stop.js';
import { byInternalId, TopKHeap, type TieBreak } from '../top-k-heap.js';

/** Storage precision of the vectors inside the HNSW graph (the f32 slab is always exact). */
export type DenseQuantization = 'f32' | 'f16' | 'bf16' | 'i8';

/** Options of a {@link DenseIndex}; all but `dimension` and `metric` have defaults. */
export interface DenseIndexOptions {
  /** Components per vector. */
  dimension: number;
  /** Distance; see {@link DenseMetric} for what each returns as a score. */
  metric: DenseMetric;
  /** Graph precision. f16 matched f32 recall and was ~1.8x faster here; i8 lost recall (0.86). @defaultValue 'f16' */
  quantization?: DenseQuantization;
  /** HNSW M: neighbours per node on the upper levels (2M on the base level). @defaultValue 16 */
  connectivity?: number;
  /** efConstruction: candidate list size while inserting. @defaultValue 128 */
  expansionAdd?: number;
  /** Default ef of a search (raised to k when k is larger). @defaultValue 64 */
  expansionSearch?: number;
  /**
   * Searches over at most this many allowed live ids always scan exactly (besides the cost rule:
   * exact whenever ef x 4 >= allowed ids, see `HNSW_COST_PER_EF`). @defaultValue 256
   */
  exactMaxCount?: number;
  /** Filters allowing at most this fraction of the live ids always scan exactly. @defaultValue 0.01 */
  exactMaxFraction?: number;
  /** Id slots to allocate up front (the slab doubles when an id does not fit). @defaultValue 1024 */
  initialCapacity?: number;
}

/** Defaults of {@link DenseIndexOptions}; thresholds measured in bench (see the dense tests and report). */
export const DENSE_INDEX_DEFAULTS = Object.freeze({
  quantization: 'f16',
  connectivity: 16,
  expansionAdd: 128,
  expansionSearch: 64,
  exactMaxCount: 256,
  exactMaxFraction: 0.01,
  initialCapacity: 1024,
});

/** Per-query options of {@link DenseIndex.search}. */
export interface DenseSearchOptions {
  /** HNSW candidate list size for this query (ignored on the exact path). */
  ef?: number;
  /** Order of equal scores (the shard passes chunk id ascending, as the core merges); default internal id. */
  tieBreak?: TieBreak;
}

/** Search result, best first: ids and their scores (see {@link DenseMetric} for the meaning). */
export interface DenseHits {
  /** Internal ids, best first. */
  ids: Uint32Array;
  /** Score of each id: similarity for cos/ip (descending), distance for l2sq/l1 (ascending). */
  scores: Float64Array;
  /** Which path answered: an exact scan, or the HNSW graph (approximate). */
  path: 'exact' | 'graph';
}

// Oversampling of a filtered graph search: a filter passing fraction s of the ids needs about k/s
// graph results to keep k; twice that absorbs the variance of where the allowed ids fall.
const FILTER_OVERSAMPLE = 2;
// One unit of HNSW ef costs about this many exact-scan vector scores. Measured at 100k x 512
// (cos, f16, M 16): the graph takes ~150 us at ef 10, ~300 us at 64, ~800 us at 512 and ~2.6 ms at
// 1024, about 1.5-2.5 us per ef unit; the JS exact scan costs ~0.45-0.9 us per vector. A graph
// search whose ef times this exceeds the allowed count is slower than scanning those ids exactly.
// For k 10 on 100k vectors this puts the switch near 3% selectivity.
const HNSW_COST_PER_EF = 4;
// Growth of the graph's candidate list when a filtered search kept fewer than k.
const RETRY_GROWTH = 4;

const USEARCH_METRIC: Record<Exclude<DenseMetric, 'l1'>, MetricKind> = {
  cos: MetricKind.Cos,
  ip: MetricKind.IP,
  l2sq: MetricKind.L2sq,
};

const USEARCH_SCALAR: Record<DenseQuantization, ScalarKind> = {
  f32: ScalarKind.F32,
  f16: ScalarKind.F16,
  bf16: ScalarKind.BF16,
  i8: ScalarKind.I8,
};

/** The resolved configuration of an index (what a snapshot records). */
export type DenseIndexConfig = Required<DenseIndexOptions>;

/**
 * A dense index over u32 ids. `upsert` replaces, `remove` hides the id at once, and an id may be
 * reused after removal. Search is synchronous; filtered search never returns fewer than
 * min(k, allowed live ids) results: selective filters are scanned exactly, others use the graph
 * with oversampling, retries and an exact fallback.
 */
export class DenseIndex {
  /** The resolved options. */
  readonly config: DenseIndexConfig;
  /** Components per vector. */
  readonly dimension: number;
  /** The metric. */
  readonly metric: DenseMetric;
  /** The HNSW graph; null for `l1`, which usearch's HNSW does not support. */
  readonly graph: Index | null;
  /** Full-precision vectors and the live set. */
  readonly slab: VectorSlab;

  private readonly key1 = new BigUint64Array(1);
  private readonly q64: Float64Array;
  private readonly heap = new TopKHeap(byInternalId, 64);
  private cand = new Uint32Array(256);

  /** An empty index. */
  constructor(options: DenseIndexOptions) {
    const config: DenseIndexConfig = Object.assign({}, DENSE_INDEX_DEFAULTS, stripUndefined(options));
    if (!Number.isInteger(config.dimension) || config.dimension <= 0) {
      throw new RangeError(`dense dimension must be a positive integer, got ${config.dimension}`);
    }
    if (!['cos', 'ip', 'l2sq', 'l1'].includes(config.metric)) throw new RangeError(`unknown dense metric '${config.metric}'`);
    if (!(config.quantization in USEARCH_SCALAR)) throw new RangeError(`unknown dense quantization '${config.quantization}'`);
    this.config = Object.freeze(config);
    this.dimension = config.dimension;
    this.metric = config.metric;
    this.slab = new VectorSlab(config.dimension, config.initialCapacity);
    this.q64 = new Float64Array(config.dimension);
    this.graph =
      config.metric === 'l1'
        ? null
        : new Index({
            dimensions: config.dimension,
            metric: USEARCH_METRIC[config.metric],
            quantization: USEARCH_SCALAR[config.quantization],
            connectivity: config.connectivity,
            expansion_add: config.expansionAdd,
            // usearch searches with max(expansion_search, wanted) and its JS API has no per-query
            // ef, so the configured value is 1 and each search asks for max(k, ef) results.
            expansion_search: 1,
            multi: false,
          });
  }

  /** Number of live vectors. */
  get size(): number {
    return this.slab.size;
  }

  /** Whether `id` has a live vector. */
  has(id: number): boolean {
    return this.slab.has(id);
  }

  /** Inserts or replaces the vector of `id`. A failed graph insert leaves `id` absent, never stale. */
  upsert(id: number, vec: Float32Array): void {
    checkId(id);
    this.checkVector(vec);
    const graph = this.graph;
    if (graph !== null) {
      this.key1[0] = BigInt(id);
      // usearch rejects duplicate keys, so a replace is remove + add (the freed slot is reused).
      if (this.slab.has(id)) graph.remove(this.key1);
      try {
        graph.add(this.key1, vec, 1);
      } catch (err) {
        this.slab.delete(id);
        throw err;
      }
    }
    this.slab.put(id, vec);
  }

  /**
   * Bulk insert or replace: row i of `vectors` belongs to `ids[i]`. `threads` > 1 builds the graph
   * in parallel (for rebuilds and benchmarks; a shard thread normally passes 1). Ids must be distinct;
   * if the graph insert fails, every id of the batch is left absent (never stale).
   */
  upsertMany(ids: Uint32Array, vectors: Float32Array, threads = 1): void {
    const dim = this.dimension;
    if (vectors.length !== ids.length * dim) throw new RangeError(`expected ${ids.length * dim} floats, got ${vectors.length}`);
    const seen = new Set<number>();
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      checkId(id);
      if (seen.has(id)) throw new RangeError(`id ${id} appears twice in one upsertMany`);
      seen.add(id);
      checkFinite(vectors, i * dim, dim);
    }
    const graph = this.graph;
    if (graph !== null && ids.length > 0) {
      const keys = new BigUint64Array(ids.length);
      for (let i = 0; i < ids.length; i++) {
        keys[i] = BigInt(ids[i]!);
        if (this.slab.has(ids[i]!)) {
          this.key1[0] = keys[i]!;
          graph.remove(this.key1);
          this.slab.delete(ids[i]!);
        }
      }
      try {
        graph.add(keys, vectors, Math.max(1, threads));
      } catch (err) {
        // Part of the batch may be in the graph; drop it all so no graph key lacks a slab row
        // (a later upsert of such an id would otherwise fail as a duplicate key).
        graph.remove(keys);
        throw err;
      }
    }
    for (let i = 0; i < ids.length; i++) this.slab.put(ids[i]!, vectors, i * dim);
  }

  /** Removes `id`; it is absent from every later search. Returns whether it was present. */
  remove(id: number): boolean {
    if (!this.slab.has(id)) return false;
    if (this.graph !== null) {
      this.key1[0] = BigInt(id);
      this.graph.remove(this.key1);
    }
    this.slab.delete(id);
    return true;
  }

  /**
   * The best `k` live ids for `query`, restricted to `allow` when given (ids outside it, or without
   * a vector, never appear). Returns exactly min(k, allowed live ids) results, best first.
   */
  search(query: Float32Array, k: number, allow: Bitset | null, options?: DenseSearchOptions): DenseHits {
    this.checkVector(query);
    if (!Number.isInteger(k) || k < 0) throw new RangeError(`k must be a non-negative integer, got ${k}`);
    const live = this.slab.size;
    const allowed = allow === null ? live : this.countAllowed(allow);
    const want = Math.min(k, allowed);
    if (want === 0) return { ids: new Uint32Array(0), scores: new Float64Array(0), path: 'exact' };
    this.loadQuery(query);
    const tie = options?.tieBreak ?? byInternalId;
    const cfg = this.config;
    const graph = this.graph;
    if (graph === null || allowed <= cfg.exactMaxCount || (allow !== null && allowed <= cfg.exactMaxFraction * live)) {
      return this.exact(want, allow, tie);
    }
    const ef = Math.max(1, options?.ef ?? cfg.expansionSearch);
    let wanted = Math.max(ef, k);
    if (allow !== null) wanted = Math.max(wanted, Math.ceil((k * FILTER_OVERSAMPLE * live) / allowed));
    for (;;) {
      // A graph search this wide costs more than scanning the allowed ids, or cannot find more.
      if (wanted * HNSW_COST_PER_EF >= allowed || wanted >= live) return this.exact(want, allow, tie);
      const m = graph.search(query, wanted, 1);
      const keys = m.keys;
      if (this.cand.length < want) this.cand = new Uint32Array(Math.max(want, this.cand.length * 2));
      const cand = this.cand;
      let got = 0;
      for (let i = 0; i < keys.length && got < want; i++) {
        const id = Number(keys[i]!);
        // The slab check guards against any graph entry the index no longer considers live.
        if ((allow === null || allow.has(id)) && this.slab.has(id)) cand[got++] = id;
      }
      if (got >= want) return this.rescore(cand, want, tie);
      wanted *= RETRY_GROWTH;
    }
  }

  /** Exact score of the stored vector of `id` against `query` (for tests and re-ranking callers). */
  scoreOf(id: number, query: Float32Array): number {
    if (!this.slab.has(id)) throw new RangeError(`id ${id} has no vector`);
    this.checkVector(query);
    this.loadQuery(query);
    return this.toScore(this.keyOf(id));
  }

  /** Approximate resident bytes per live vector: the f32 slab plus the graph's own copy and links. */
  bytesPerVector(): { slab: number; graph: number } {
    const d = this.dimension;
    const slab = 4 * d + 8 + 1 / 8;
    if (this.graph === null) return { slab, graph: 0 };
    const scalarBytes = { f32: 4, f16: 2, bf16: 2, i8: 1 }[this.config.quantization];
    const m = this.config.connectivity;
    // Base level: 2M u32 neighbours + count; upper levels add M per level with probability 1/M;
    // plus key (u64), level (i16) and the key lookup entry (u64 key + u32 slot).
    const links = 4 * (2 * m + 1) + (4 * (m + 1)) / (m - 1) + 8 + 2 + 12;
    return { slab, graph: scalarBytes * d + links };
  }

  // ---- internals ----------------------------------------------------------------------------

  /** Live ids in `allow`: popcount of the word-wise AND, no allocation. */
  private countAllowed(allow: Bitset): number {
    const live = this.slab.live;
    const aw = allow.words;
    const n = Math.min(live.length, aw.length);
    let total = 0;
    for (let i = 0; i < n; i++) {
      let v = live[i]! & aw[i]!;
      v = v - ((v >>> 1) & 0x55555555);
      v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
      total += (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
    }
    return total;
  }

  /** Copies the query into the f64 scratch, unit-normalised for cosine so a score is one dot. */
  private loadQuery(query: Float32Array): void {
    const q = this.q64;
    const dim = this.dimension;
    let scale = 1;
    if (this.metric === 'cos') {
      const n = normOf(query, 0, dim);
      scale = n > 0 ? 1 / n : 0;
    }
    for (let j = 0; j < dim; j++) q[j] = query[j]! * scale;
  }

  /** Ranking key of `id` against the loaded query: higher is better for every metric. */
  private keyOf(id: number): number {
    const slab = this.slab;
    const dim = this.dimension;
    const base = id * dim;
    switch (this.metric) {
      case 'cos':
        return dotAt(this.q64, slab.data, base, dim) * slab.invNorms[id]!;
      case 'ip':
        return dotAt(this.q64, slab.data, base, dim);
      case 'l2sq':
        return -l2sqAt(this.q64, slab.data, base, dim);
      case 'l1':
        return -l1At(this.q64, slab.data, base, dim);
    }
  }

  /** The product's score for a ranking key (Euclidean is reported as a distance, not squared). */
  private toScore(key: number): number {
    if (higherIsBetter(this.metric)) return key;
    return this.metric === 'l2sq' ? Math.sqrt(-key) : -key;
  }

  /** Exact top `want` over live ∩ allow, walking set bits word by word. */
  private exact(want: number, allow: Bitset | null, tie: TieBreak): DenseHits {
    const heap = this.heap;
    heap.reset(want, tie);
    const { live, data, invNorms } = this.slab;
    const q = this.q64;
    const dim = this.dimension;
    // Metric code hoisted out of the loop so each branch stays monomorphic and inlinable.
    const code = this.metric === 'cos' ? 0 : this.metric === 'ip' ? 1 : this.metric === 'l2sq' ? 2 : 3;
    const aw = allow === null ? null : allow.words;
    for (let wi = 0; wi < live.length; wi++) {
      checkStop();
      let v = live[wi]!;
      if (aw !== null) v &= wi < aw.length ? aw[wi]! : 0;
      while (v !== 0) {
        const low = v & -v;
        const id = wi * 32 + (31 - Math.clz32(low));
        v ^= low;
        const base = id * dim;
        let key: number;
        if (code === 0) key = dotAt(q, data, base, dim) * invNorms[id]!;
        else if (code === 1) key = dotAt(q, data, base, dim);
        else if (code === 2) key = -l2sqAt(q, data, base, dim);
        else key = -l1At(q, data, base, dim);
        heap.push(id, key);
      }
    }
    return this.drain('exact');
  }

  /** Scores the first `n` graph candidates exactly and returns them sorted best first. */
  private rescore(cand: Uint32Array, n: number, tie: TieBreak): DenseHits {
    const heap = this.heap;
    heap.reset(n, tie);
    for (let i = 0; i < n; i++) heap.push(cand[i]!, this.keyOf(cand[i]!));
    return this.drain('graph');
  }

  /** Empties the heap into fresh result arrays, converting keys to scores. */
  private drain(path: DenseHits['path']): DenseHits {
    const { ids, scores } = this.heap.drain();
    for (let i = 0; i < scores.length; i++) scores[i] = this.toScore(scores[i]!);
    return { ids, scores, path };
  }

  /** Rejects a vector of the wrong type or length, or with a non-finite component. */
  private checkVector(vec: Float32Array): void {
    if (!(vec instanceof Float32Array)) throw new TypeError('dense vectors must be Float32Array');
    if (vec.length !== this.dimension) throw new RangeError(`vector has ${vec.length} components, index expects ${this.dimension}`);
    checkFinite(vec, 0, this.dimension);
  }
}

/** Rejects non-finite components: one NaN would poison every distance to that vector. */
function checkFinite(vec: Float32Array, from: number, dim: number): void {
  for (let j = 0; j < dim; j++) {
    if (!Number.isFinite(vec[from + j]!)) throw new RangeError(`vector component ${j} is not finite`);
  }
}

/** Ids are u32: the shard's dense internal ids. */
function checkId(id: number): void {
  if (!Number.isInteger(id) || id < 0 || id > 0xffffffff) throw new RangeError(`dense id must be a u32, got ${id}`);
}

/** Drops undefined members so they do not override defaults in a spread. */
function stripUndefined<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(o)) if (value !== undefined) out[key] = value;
  return out as T;
}
