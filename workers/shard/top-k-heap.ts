/**
 * The one bounded top-k of the shard's indexes (BM25, dense, SPLADE): a binary min-heap of the
 * best k (internal id, score) pairs. Every index breaks score ties the way the core's merge does
 * (chunk id ascending, through the owner's {@link TieBreak}), so a tie at a shard's cut keeps the
 * same documents a single-shard ranking would.
 */
import { checkYield } from './task-stop.js';

/** Orders two internal ids when their scores are equal: negative when `a` ranks first. */
export type TieBreak = (a: number, b: number) => number;

/** Internal id ascending: the tie-break of an index used without a chunk-id order (tests, tools). */
export const byInternalId: TieBreak = (a, b) => a - b;

/**
 * Keeps the k best entries seen; the root is the current worst, so admission is one comparison.
 * "Better" means higher score, or equal score and a tie-break that ranks first (chunk id ascending).
 * Buffers are reused across `reset` calls to keep searches allocation-light.
 */
export class TopKHeap {
  private ids: Uint32Array;
  private scores: Float64Array;
  private k = 0;
  private size = 0;

  /** A heap with room for `initialCapacity` entries (it grows on a larger `reset`). */
  constructor(
    private tieBreak: TieBreak,
    initialCapacity = 16,
  ) {
    this.ids = new Uint32Array(initialCapacity);
    this.scores = new Float64Array(initialCapacity);
  }

  /** Empties the heap and sets the number of entries to keep (and the tie-break, when given). */
  reset(k: number, tieBreak?: TieBreak): void {
    if (tieBreak) this.tieBreak = tieBreak;
    if (k > this.ids.length) {
      this.ids = new Uint32Array(k);
      this.scores = new Float64Array(k);
    }
    this.k = k;
    this.size = 0;
  }

  /** Entries currently held. */
  get length(): number {
    return this.size;
  }

  /** The k of the last {@link reset}: how many entries are kept. */
  get limit(): number {
    return this.k;
  }

  /** Whether k entries are held (only then does {@link threshold} mean anything). */
  get full(): boolean {
    return this.size >= this.k;
  }

  /** Score of the worst kept entry; -Infinity until the heap is full. */
  get threshold(): number {
    return this.size >= this.k && this.k > 0 ? this.scores[0]! : -Infinity;
  }

  /** Offers an entry; returns whether it was kept. */
  push(id: number, score: number): boolean {
    if (this.k === 0) return false;
    if (this.size < this.k) {
      let i = this.size++;
      // Sift up: the new entry climbs while it is worse than its parent.
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!this.worse(id, score, this.ids[p]!, this.scores[p]!)) break;
        this.ids[i] = this.ids[p]!;
        this.scores[i] = this.scores[p]!;
        i = p;
      }
      this.ids[i] = id;
      this.scores[i] = score;
      return true;
    }
    if (!this.worse(this.ids[0]!, this.scores[0]!, id, score)) return false;
    this.siftDown(id, score);
    return true;
  }

  /** Drains into arrays sorted best first; the heap is empty afterwards. */
  drain(): { ids: Uint32Array; scores: Float64Array } {
    const n = this.size;
    const ids = new Uint32Array(n);
    const scores = new Float64Array(n);
    // Popping the worst repeatedly fills the output from the back.
    for (let out = n - 1; out >= 0; out--) {
      // Each pop sifts through log2(n) levels.
      if ((out & 255) === 0) checkYield(4096);
      ids[out] = this.ids[0]!;
      scores[out] = this.scores[0]!;
      const last = --this.size;
      if (last > 0) this.siftDown(this.ids[last]!, this.scores[last]!);
    }
    return { ids, scores };
  }

  /** Whether entry a ranks strictly below entry b. */
  private worse(aId: number, aScore: number, bId: number, bScore: number): boolean {
    if (aScore !== bScore) return aScore < bScore;
    return this.tieBreak(aId, bId) > 0;
  }

  /** Places (id, score) at the root and sinks it to restore the heap order. */
  private siftDown(id: number, score: number): void {
    const n = this.size;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      let c = l;
      if (r < n && this.worse(this.ids[r]!, this.scores[r]!, this.ids[l]!, this.scores[l]!)) c = r;
      if (!this.worse(this.ids[c]!, this.scores[c]!, id, score)) break;
      this.ids[i] = this.ids[c]!;
      this.scores[i] = this.scores[c]!;
      i = c;
    }
    this.ids[i] = id;
    this.scores[i] = score;
  }
}
