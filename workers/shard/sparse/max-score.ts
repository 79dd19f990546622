/**
 * MaxScore dynamic pruning (Turtle & Flood 1995, document-at-a-time form) for BM25 top-k.
 * Returns exactly what exhaustive scoring would: pruning only skips documents whose upper bound
 * is strictly below the current k-th score, so ties at the threshold are still scored.
 */
import type { Bitset } from './bitset.js';
import type { TopKHeap } from './top-k-heap.js';

/** One query term's postings, as prepared by the index for a search. */
export interface ScoringList {
  /** Doc ids ascending; only the first `length` entries are valid. */
  docs: Uint32Array;
  /** Term frequencies aligned with `docs`. */
  tfs: Uint16Array;
  /** Number of valid entries. */
  length: number;
  /** qtf * idf * (k1 + 1): the factor in front of the tf saturation. */
  weight: number;
  /** Upper bound of this term's contribution to any document's score. */
  upperBound: number;
  /**
   * Canonical position (first occurrence in the query, 0..m-1). Final scores are summed in this
   * order so that a document scores bit-identically whatever the shard's own list order is.
   */
  rank: number;
}

/** Document-level inputs shared by all lists of one search. */
export interface ScoringContext {
  /** Token count per internal id. */
  docLen: Uint32Array;
  /** 1 for live ids, 0 for tombstones (postings are purged lazily). */
  alive: Uint8Array;
  /** Optional filter; only members may be returned. */
  allow: Bitset | null;
  k1: number;
  b: number;
  /** Global average document length. */
  avgdl: number;
}

// Upper bounds are inflated by this relative margin so that rounding in a sum of bounds can never
// make a tied or better document look prunable (exactness over a negligible loss of pruning).
const BOUND_SLACK = 1 + 1e-9;

const END = 0xffffffff;

/** Scores `lists` into `heap` (already reset to k); lists may be reordered. Scratch is reused by the caller. */
export function maxScoreTopK(lists: ScoringList[], ctx: ScoringContext, heap: TopKHeap, scratch: MaxScoreScratch): void {
  const m = lists.length;
  if (m === 0) return;
  // Cheapest bounds first: the non-essential prefix is then as long as possible.
  lists.sort((x, y) => x.upperBound - y.upperBound);
  scratch.ensure(m);
  const pos = scratch.pos;
  const cur = scratch.cur;
  const prefix = scratch.prefix;
  const contrib = scratch.contrib;
  let acc = 0;
  for (let i = 0; i < m; i++) {
    const l = lists[i]!;
    pos[i] = 0;
    cur[i] = l.length > 0 ? l.docs[0]! : END;
    acc += l.upperBound * BOUND_SLACK;
    prefix[i] = acc;
  }
  const { docLen, alive, allow, k1, b } = ctx;
  const lenScale = (k1 * b) / ctx.avgdl;
  const lenBase = k1 * (1 - b);

  let theta = heap.threshold;
  // Lists [0, pivot) are non-essential: together they cannot lift a document to theta.
  let pivot = 0;
  while (pivot < m && prefix[pivot]! < theta) pivot++;

  while (pivot < m) {
    let doc = END;
    for (let i = pivot; i < m; i++) if (cur[i]! < doc) doc = cur[i]!;
    if (doc === END) break;

    const usable = alive[doc] === 1 && (allow === null || allow.has(doc));
    const norm = lenBase + lenScale * docLen[doc]!;
    let score = 0;
    if (usable) contrib.fill(0, 0, m);
    for (let i = pivot; i < m; i++) {
      if (cur[i] !== doc) continue;
      const l = lists[i]!;
      const p = pos[i]!;
      if (usable) {
        const tf = l.tfs[p]!;
        const c = (l.weight * tf) / (tf + norm);
        contrib[l.rank] = c;
        score += c;
      }
      const np = p + 1;
      pos[i] = np;
      cur[i] = np < l.length ? l.docs[np]! : END;
    }
    if (!usable) continue;

    // Non-essential lists, biggest bound first; stop as soon as the rest cannot reach theta.
    let hopeless = false;
    for (let i = pivot - 1; i >= 0; i--) {
      if (score + prefix[i]! < theta) {
        hopeless = true;
        break;
      }
      if (cur[i]! < doc) {
        const l = lists[i]!;
        const np = advance(l.docs, l.length, pos[i]!, doc);
        pos[i] = np;
        cur[i] = np < l.length ? l.docs[np]! : END;
      }
      if (cur[i] === doc) {
        const l = lists[i]!;
        const tf = l.tfs[pos[i]!]!;
        const c = (l.weight * tf) / (tf + norm);
        contrib[l.rank] = c;
        score += c;
      }
    }
    if (hopeless) continue;
    let exact = 0;
    for (let r = 0; r < m; r++) exact += contrib[r]!;
    if (heap.push(doc, exact)) {
      const t = heap.threshold;
      if (t !== theta) {
        theta = t;
        while (pivot < m && prefix[pivot]! < theta) pivot++;
      }
    }
  }
}

/** First index >= from whose doc is >= target (galloping, then binary search). */
function advance(docs: Uint32Array, length: number, from: number, target: number): number {
  let lo = from;
  let step = 1;
  let hi = from;
  while (hi < length && docs[hi]! < target) {
    lo = hi + 1;
    hi += step;
    step *= 2;
  }
  if (hi > length) hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (docs[mid]! < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Reusable per-search buffers (one per index, so one per shard thread). */
export class MaxScoreScratch {
  pos = new Uint32Array(16);
  cur = new Float64Array(16);
  prefix = new Float64Array(16);
  contrib = new Float64Array(16);

  /** Grows the buffers to hold `m` lists. */
  ensure(m: number): void {
    if (m <= this.pos.length) return;
    this.pos = new Uint32Array(m);
    this.cur = new Float64Array(m);
    this.prefix = new Float64Array(m);
    this.contrib = new Float64Array(m);
  }
}
