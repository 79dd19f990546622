/**
 * Each document's content-term sequence (term ids in text order, stop words left out), kept for
 * proximity scoring: fulltext search counts query term pairs that occur near each other, which
 * postings without positions cannot tell. One Uint32 arena for every document (a typed array per
 * document would cost more in object headers than the terms themselves); ranges of removed
 * documents are garbage until a compaction rewrites the arena.
 */
import { grown } from './grow.js';

/** Per-document term sequences in one arena. */
export class SequenceStore {
  private start = new Uint32Array(64);
  private count = new Uint32Array(64);
  private pool = new Uint32Array(1024);
  private used = 0;
  private garbage = 0;

  /** Stores `ids[i]` for every i < n whose `skip[ids[i]]` is not 1, as document `doc`'s sequence. */
  set(doc: number, ids: Uint32Array, n: number, skip: Uint8Array): void {
    this.clear(doc);
    if (doc >= this.start.length) {
      this.start = grown(this.start, doc + 1);
      this.count = grown(this.count, doc + 1);
    }
    if (this.used + n > this.pool.length) this.reserve(n);
    const pool = this.pool;
    let w = this.used;
    for (let i = 0; i < n; i++) {
      const t = ids[i]!;
      if (skip[t] !== 1) pool[w++] = t;
    }
    this.start[doc] = this.used;
    this.count[doc] = w - this.used;
    this.used = w;
  }

  /** Forgets document `doc`'s sequence (its range becomes garbage). */
  clear(doc: number): void {
    if (doc >= this.count.length) return;
    this.garbage += this.count[doc]!;
    this.count[doc] = 0;
  }

  /** Document `doc`'s sequence as a view (valid until the next write). */
  get(doc: number): Uint32Array {
    if (doc >= this.count.length) return this.pool.subarray(0, 0);
    const s = this.start[doc]!;
    return this.pool.subarray(s, s + this.count[doc]!);
  }

  /** Term ids stored, garbage excluded (for memory reports). */
  get size(): number {
    return this.used - this.garbage;
  }

  /** Makes room for `n` more ids: compacts when at least half of the arena is garbage, else grows it. */
  private reserve(n: number): void {
    if (this.garbage >= this.used / 2) this.compact(n);
    if (this.used + n > this.pool.length) this.pool = grown(this.pool, this.used + n);
  }

  /** Rewrites the arena without garbage, with room for `extra` more ids. */
  private compact(extra: number): void {
    const live = this.used - this.garbage;
    const pool = new Uint32Array(Math.max(1024, (live + extra) * 2));
    let w = 0;
    for (let d = 0; d < this.count.length; d++) {
      const n = this.count[d]!;
      if (n === 0) continue;
      const s = this.start[d]!;
      pool.set(this.pool.subarray(s, s + n), w);
      this.start[d] = w;
      w += n;
    }
    this.pool = pool;
    this.used = w;
    this.garbage = 0;
  }

  /** Offsets (`capacity + 1` entries) and concatenated sequences of documents `0 .. capacity`. */
  export(capacity: number): { offsets: Uint32Array; terms: Uint32Array } {
    const offsets = new Uint32Array(capacity + 1);
    for (let d = 0; d < capacity; d++) offsets[d + 1] = offsets[d]! + (d < this.count.length ? this.count[d]! : 0);
    const terms = new Uint32Array(offsets[capacity]!);
    for (let d = 0; d < capacity; d++) terms.set(this.get(d), offsets[d]);
    return { offsets, terms };
  }

  /** A store holding {@link export}'s output. */
  static restore(offsets: Uint32Array, terms: Uint32Array): SequenceStore {
    const s = new SequenceStore();
    const cap = offsets.length - 1;
    s.start = grown(s.start, Math.max(cap, 1));
    s.count = grown(s.count, Math.max(cap, 1));
    for (let d = 0; d < cap; d++) {
      s.start[d] = offsets[d]!;
      s.count[d] = offsets[d + 1]! - offsets[d]!;
    }
    s.pool = grown(new Uint32Array(0), Math.max(terms.length, 1024));
    s.pool.set(terms);
    s.used = terms.length;
    return s;
  }
}
