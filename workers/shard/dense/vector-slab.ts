/**
 * The full-precision copy of every live vector, indexed by internal id. The HNSW graph holds f16
 * copies that cannot be read back through the usearch JavaScript API, so exact scans (selective
 * filters, the Manhattan metric) and exact re-scoring of graph results read from here.
 */
import { normOf } from './vector-kernels.js';

/**
 * Row `id` of `data` is the vector of id `id` (meaningful only while `id` is live). Liveness is a
 * bitset in the same word layout as `Bitset`, so a filter can be intersected word by word.
 */
export class VectorSlab {
  /** Components per vector. */
  readonly dimension: number;
  /** Vectors, `dimension` floats per id slot. */
  data: Float32Array;
  /** 1 / Euclidean norm per id (0 for a zero vector), so cosine is one dot product per candidate. */
  invNorms: Float64Array;
  /** Live bits: bit `id & 31` of word `id >>> 5`. */
  live: Uint32Array;
  /** Number of live vectors. */
  size = 0;
  private slots: number;

  /** An empty slab with room for ids below `initialSlots` (it grows on demand). */
  constructor(dimension: number, initialSlots = 1024) {
    this.dimension = dimension;
    this.slots = Math.max(32, initialSlots);
    this.data = new Float32Array(this.slots * dimension);
    this.invNorms = new Float64Array(this.slots);
    this.live = new Uint32Array((this.slots + 31) >>> 5);
  }

  /** Upper bound (exclusive) of the ids the slab currently has room for. */
  get capacity(): number {
    return this.slots;
  }

  /** Whether `id` holds a live vector. */
  has(id: number): boolean {
    if (id >= this.slots || id < 0) return false;
    return (this.live[id >>> 5]! & (1 << (id & 31))) !== 0;
  }

  /** Stores `vec` under `id` (replacing any previous vector); returns whether `id` was new. */
  put(id: number, vec: Float32Array | Float64Array, from = 0): boolean {
    if (id >= this.slots) this.grow(id + 1);
    const dim = this.dimension;
    const base = id * dim;
    for (let j = 0; j < dim; j++) this.data[base + j] = vec[from + j]!;
    // Norm of the stored (f32-rounded) values, so cosine is exact over what we keep.
    const norm = normOf(this.data, base, dim);
    this.invNorms[id] = norm > 0 ? 1 / norm : 0;
    const w = id >>> 5;
    const bit = 1 << (id & 31);
    const wasLive = (this.live[w]! & bit) !== 0;
    if (!wasLive) {
      this.live[w]! |= bit;
      this.size++;
    }
    return !wasLive;
  }

  /** Marks `id` dead; returns whether it was live. The row is left as garbage until reused. */
  delete(id: number): boolean {
    if (!this.has(id)) return false;
    this.live[id >>> 5]! &= ~(1 << (id & 31));
    this.size--;
    return true;
  }

  /** Bytes held by the slab arrays (what a snapshot of it costs, and its share of memory). */
  get byteLength(): number {
    return this.data.byteLength + this.invNorms.byteLength + this.live.byteLength;
  }

  /** Grows to hold ids below at least `minSlots`, doubling to keep upserts amortised O(dim). */
  private grow(minSlots: number): void {
    let slots = this.slots;
    while (slots < minSlots) slots *= 2;
    if (slots > 0x100000000) slots = 0x100000000;
    const data = new Float32Array(slots * this.dimension);
    data.set(this.data);
    const inv = new Float64Array(slots);
    inv.set(this.invNorms);
    const live = new Uint32Array((slots + 31) >>> 5);
    live.set(this.live);
    this.data = data;
    this.invNorms = inv;
    this.live = live;
    this.slots = slots;
  }
}
