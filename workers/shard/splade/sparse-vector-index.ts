/**
 * SPLADE vectors of one shard, keyed by the shard's internal ids, scored by dot product (no idf:
 * the encoder's weights are the whole score, as in the reference's sparse search).
 *
 * Postings are append-only per vector index, each entry stamped with its document's generation;
 * an update or delete bumps the generation, so old entries stop counting at once and a posting
 * is compacted when more than half of it is stale. Queries accumulate term-at-a-time over the
 * query's indexes (SPLADE queries hold tens of indexes), then take the top k.
 */
import type { SparseVector } from '../../../core/domain/sparse-vector.js';
import type { Bitset } from '../bm25/bitset.js';
import { grown } from '../bm25/grow.js';
import { byInternalId, TopKHeap, type TieBreak } from '../top-k-heap.js';

/** One index's entries: documents, weights and the document generation each was written at. */
interface Posting {
  docs: Uint32Array;
  vals: Float32Array;
  gens: Uint32Array;
  len: number;
  stale: number;
}

/** Top hits of a sparse search, best first (ties ordered by the caller's comparator). */
export interface SparseHits {
  ids: number[];
  scores: number[];
  /** Documents scoring above the threshold (all scored documents when there is none). */
  total: number;
}

/** Sparse vectors with dot-product search. */
export class SparseVectorIndex {
  private readonly postings = new Map<number, Posting>();
  private vectors: (SparseVector | undefined)[] = [];
  private gen = new Uint32Array(64);
  private count = 0;
  private acc = new Float64Array(64);
  /** The best k of a search (reused). */
  private readonly heap = new TopKHeap(byInternalId, 16);

  /** Documents holding a vector. */
  get size(): number {
    return this.count;
  }

  /** The vector of a document, if it has one. */
  get(doc: number): SparseVector | undefined {
    return this.vectors[doc];
  }

  /** Stores (or replaces) a document's vector. */
  upsert(doc: number, v: SparseVector): void {
    this.remove(doc);
    if (doc >= this.gen.length) this.gen = grown(this.gen, doc + 1);
    const g = ++this.gen[doc]!;
    for (let i = 0; i < v.indices.length; i++) {
      const key = v.indices[i]!;
      let p = this.postings.get(key);
      if (!p) this.postings.set(key, (p = { docs: new Uint32Array(4), vals: new Float32Array(4), gens: new Uint32Array(4), len: 0, stale: 0 }));
      if (p.len === p.docs.length) {
        p.docs = grown(p.docs, p.len + 1);
        p.vals = grown(p.vals, p.len + 1);
        p.gens = grown(p.gens, p.len + 1);
      }
      p.docs[p.len] = doc;
      p.vals[p.len] = v.values[i]!;
      p.gens[p.len++] = g;
    }
    this.vectors[doc] = v;
    this.count++;
  }

  /** Forgets a document's vector (no-op when it has none). */
  remove(doc: number): void {
    const old = this.vectors[doc];
    if (!old) return;
    this.gen[doc]!++;
    this.vectors[doc] = undefined;
    this.count--;
    for (const key of old.indices) {
      const p = this.postings.get(key)!;
      if (++p.stale * 2 > p.len) this.compact(key, p);
    }
  }

  private compact(key: number, p: Posting): void {
    let w = 0;
    for (let i = 0; i < p.len; i++) {
      if (p.gens[i] !== this.gen[p.docs[i]!]) continue;
      p.docs[w] = p.docs[i]!;
      p.vals[w] = p.vals[i]!;
      p.gens[w++] = p.gens[i]!;
    }
    if (w === 0) this.postings.delete(key);
    p.len = w;
    p.stale = 0;
  }

  /**
   * The `k` best documents by dot product with `query` among `allow` (all when null); with a
   * threshold, only scores at or above it count (and are counted in `total`).
   */
  search(query: SparseVector, k: number, allow: Bitset | null, threshold: number | null, tieBreak: TieBreak = byInternalId): SparseHits {
    const cap = this.gen.length;
    if (this.acc.length < cap) this.acc = new Float64Array(cap);
    const acc = this.acc;
    const touched: number[] = [];
    for (let q = 0; q < query.indices.length; q++) {
      const p = this.postings.get(query.indices[q]!);
      if (!p) continue;
      const w = query.values[q]!;
      for (let i = 0; i < p.len; i++) {
        const d = p.docs[i]!;
        if (p.gens[i] !== this.gen[d] || (allow !== null && !allow.has(d))) continue;
        if (acc[d] === 0) touched.push(d);
        acc[d]! += w * p.vals[i]!;
        // A sum that lands on exactly 0 would be pushed twice; keep it distinguishable.
        if (acc[d] === 0) acc[d] = Number.MIN_VALUE;
      }
    }
    const heap = this.heap;
    heap.reset(k, tieBreak);
    let total = 0;
    for (const d of touched) {
      const s = acc[d]!;
      acc[d] = 0;
      if (threshold !== null && s < threshold) continue;
      total++;
      heap.push(d, s);
    }
    const top = heap.drain();
    return { ids: Array.from(top.ids), scores: Array.from(top.scores), total };
  }
}
