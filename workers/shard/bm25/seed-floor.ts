/** Seeded pruning threshold for the block-max MaxScore top-k (see {@link seedFloor}). */
import type { Bitset } from './bitset.js';
import { BOUND_SLACK, SEED_MAX_K, type MaxScoreScratch } from './max-score-scratch.js';
import { advance } from './gallop.js';
import { BLOCK_SHIFT } from './postings-store.js';
import { overflowTf, TF_OVERFLOW } from './tf-code.js';

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
  const { m, globalOrder, len, bases, shift, lows, tfs, weight, blockMax } = s;
  let e = -1;
  for (let q = m - 1; q >= 0; q--) {
    if (len[globalOrder[q]!]! >= k) {
      e = globalOrder[q]!;
      break;
    }
  }
  if (e < 0) return -Infinity;
  const eb = bases[e]!;
  const esh = shift[e]!;
  const elo = lows[e]!;
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
      const doc = (esh === 0 ? eb[p]! : (esh === 0 ? eb[p]! : eb[p >>> esh]! + elo[p]!));
      if (alive[doc] !== 1) continue;
      if (allowWords !== null && (doc >= allowCap || (allowWords[doc >>> 5]! & (1 << (doc & 31))) === 0)) continue;
      let tf = tl[p]!;
      if (tf === TF_OVERFLOW) tf = overflowTf(s.big[e]!, doc);
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
  // Exact scores of those k documents: the k-th best, i.e. the lowest of them, is a far better
  // floor than one list's contribution on long queries. Documents in ascending order and lists in
  // query-term order (each list walked forward once, not a binary search per document and list):
  // every exact[r] still sums its contributions in query-term order, as the final score does.
  sortAscending(top2, k);
  const exact = s.seedExact;
  const norms = s.seedNorm;
  for (let r = 0; r < k; r++) {
    exact[r] = 0;
    norms[r] = lenBase + lenScale * docLen[top2[r]!]!;
  }
  for (let i = 0; i < m; i++) {
    const bi = bases[i]!;
    const shi = shift[i]!;
    const loi = lows[i]!;
    const ti = tfs[i]!;
    const wi = weight[i]!;
    const n = len[i]!;
    let p = 0;
    for (let r = 0; r < k && p < n; r++) {
      const doc = top2[r]!;
      p = advance(bi, shi, loi, n, p, doc);
      if (p === n || (shi === 0 ? bi[p]! : (shi === 0 ? bi[p]! : bi[p >>> shi]! + loi[p]!)) !== doc) continue;
      let tf = ti[p]!;
      if (tf === TF_OVERFLOW) tf = overflowTf(s.big[i]!, doc);
      exact[r] = exact[r]! + (wi * tf) / (tf + norms[r]!);
    }
  }
  let floor = Infinity;
  for (let r = 0; r < k; r++) if (exact[r]! < floor) floor = exact[r]!;
  return floor;
}

/** Sorts `a[0..n)` ascending (insertion sort: n is at most {@link SEED_MAX_K}, usually 10). */
function sortAscending(a: Uint32Array, n: number): void {
  for (let i = 1; i < n; i++) {
    const x = a[i]!;
    let j = i - 1;
    while (j >= 0 && a[j]! > x) {
      a[j + 1] = a[j]!;
      j--;
    }
    a[j + 1] = x;
  }
}
