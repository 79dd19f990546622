/** Seeded pruning threshold for the block-max MaxScore top-k (see {@link seedFloor}). */
import type { Bitset } from './bitset.js';
import { BOUND_SLACK, SEED_MAX_K, type MaxScoreScratch } from './max-score-scratch.js';
import { BLOCK_SHIFT } from './postings-store.js';

/** Postings scanned at most to seed the floor. */
const SEED_SCAN = 2048;

/**
 * A lower bound of the final k-th score, to prune from the first window on instead of scoring
 * everything until the heap fills. Every contribution is positive and float addition is
 * monotone, so a document's exact score is at least its contribution from one list; the k-th
 * largest single-list contribution over k distinct live, allowed documents is therefore at most
 * the final k-th score. We take it from the list with the largest bound (the rarest term,
 * usually), scanning its best blocks first and at most {@link SEED_SCAN} postings.
 */
export function seedFloor(s: MaxScoreScratch, k: number, docLen: Uint32Array, alive: Uint8Array, allow: Bitset | null, lenBase: number, lenScale: number): number {
  if (k <= 0 || k > SEED_MAX_K) return -Infinity;
  const { m, globalOrder, len, docs, tfs, weight, blockMax } = s;
  let e = -1;
  for (let q = m - 1; q >= 0; q--) {
    if (len[globalOrder[q]!]! >= k) {
      e = globalOrder[q]!;
      break;
    }
  }
  if (e < 0) return -Infinity;
  const d = docs[e]!;
  const tl = tfs[e]!;
  const n = len[e]!;
  const w = weight[e]!;
  const bmax = blockMax[e]!;
  const blocks = (n + (1 << BLOCK_SHIFT) - 1) >>> BLOCK_SHIFT;
  const allowWords = allow === null ? null : allow.words;
  const allowCap = allow === null ? 0 : allow.capacity;
  // Min-heap of the k best contributions seen; top[0] is the k-th best once `size === k`.
  const top = s.seedTop;
  const top2 = s.seedDocs;
  let size = 0;
  let budget = SEED_SCAN;
  // Best block first (it alone often holds k good documents), then the others in list order.
  let best = 0;
  for (let j = 1; j < blocks; j++) if (bmax[j]! > bmax[best]!) best = j;
  for (let step = -1; step < blocks && budget > 0; step++) {
    const j = step < 0 ? best : step;
    if (step === best) continue;
    // Skip blocks that cannot improve the k-th best (their bound is below it).
    if (size === k && w * bmax[j]! * BOUND_SLACK <= top[0]!) continue;
    const end = Math.min(n, (j + 1) << BLOCK_SHIFT);
    for (let p = j << BLOCK_SHIFT; p < end; p++) {
      const doc = d[p]!;
      if (alive[doc] !== 1) continue;
      if (allowWords !== null && (doc >= allowCap || (allowWords[doc >>> 5]! & (1 << (doc & 31))) === 0)) continue;
      const tf = tl[p]!;
      const norm = lenBase + lenScale * docLen[doc]!;
      const c = (w * tf) / (tf + norm);
      if (size < k) {
        // Sift up.
        let i = size++;
        while (i > 0) {
          const parent = (i - 1) >> 1;
          if (top[parent]! <= c) break;
          top[i] = top[parent]!;
          top2[i] = top2[parent]!;
          i = parent;
        }
        top[i] = c;
        top2[i] = doc;
      } else if (c > top[0]!) {
        // Replace the root and sift down.
        let i = 0;
        for (;;) {
          const l = 2 * i + 1;
          if (l >= k) break;
          const r = l + 1;
          const child = r < k && top[r]! < top[l]! ? r : l;
          if (top[child]! >= c) break;
          top[i] = top[child]!;
          top2[i] = top2[child]!;
          i = child;
        }
        top[i] = c;
        top2[i] = doc;
      }
    }
    budget -= end - (j << BLOCK_SHIFT);
  }
  if (size < k) return -Infinity;
  // Exact scores of those k documents (binary search in every list): the k-th best, i.e. the
  // lowest of them, is a far better floor than one list's contribution on long queries.
  let floor = Infinity;
  for (let r = 0; r < k; r++) {
    const doc = top2[r]!;
    const norm = lenBase + lenScale * docLen[doc]!;
    let exact = 0;
    for (let i = 0; i < m; i++) {
      const di = docs[i]!;
      let lo = 0;
      let hi = len[i]!;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (di[mid]! < doc) lo = mid + 1;
        else hi = mid;
      }
      if (lo === len[i]! || di[lo] !== doc) continue;
      const tf = tfs[i]![lo]!;
      exact += (weight[i]! * tf) / (tf + norm);
    }
    if (exact < floor) floor = exact;
  }
  return floor;
}

