/**
 * Block-max MaxScore top-k for BM25 (Turtle & Flood 1995; windowed as in Lucene's
 * MaxScoreBulkScorer). The doc id space is cut into windows of 8192 doc ids, each starting at
 * the next document a list that can reach the threshold holds; the pruning threshold starts from a
 * seeded floor (seed-floor.ts) instead of -Infinity; in each window every list gets a bound from its block maxima, lists whose
 * bounds together cannot reach the k-th score are non-essential there, the essential lists are
 * scored term-at-a-time into a window accumulator, and each candidate then probes the
 * non-essential lists until its bound drops below the threshold. Exact: a document is only
 * skipped when an upper bound of its score is strictly below the current k-th score.
 */
import type { Bitset } from './bitset.js';
import { BOUND_SLACK, MaxScoreScratch, THETA_SLACK, WINDOW } from './max-score-scratch.js';
import { advance } from './gallop.js';
import { BLOCK_SHIFT } from './postings-store.js';
import { seedFloor } from './seed-floor.js';
import { overflowTf, TF_OVERFLOW } from './tf-code.js';
import type { TopKHeap } from '../top-k-heap.js';
import { checkStop, checkYield } from '../task-stop.js';

export { MaxScoreScratch };

/** Cursor value of an exhausted list (larger than every doc id). */
const END = 0xffffffff;

/** Past this many blocks a list's window bound is its list-wide bound (cheaper than the scan). */
const MAX_BLOCK_SCAN = 8;

/** Document-level inputs of one search. */
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

/** Sorts `order[0..m)` by `key` ascending (insertion sort: m is a query's term count). */
function sortBy(order: Uint32Array, key: Float64Array, m: number): void {
  for (let a = 1; a < m; a++) {
    const x = order[a]!;
    const kx = key[x]!;
    let j = a - 1;
    while (j >= 0 && key[order[j]!]! > kx) {
      order[j + 1] = order[j]!;
      j--;
    }
    order[j + 1] = x;
  }
}

/**
 * Adds the contributions of the non-essential lists `order[0 .. pivot)` of `doc` to `score`,
 * largest window bound first, leaving their cursors at or past `doc`; returns -1 as soon as what
 * is left cannot lift the document to `thetaLo`.
 */
function probe(s: MaxScoreScratch, doc: number, score: number, norm: number, pivot: number, thetaLo: number): number {
  const { order, prefix, cur, pos, bases, shift, lows, len, tfs, weight } = s;
  for (let q = pivot - 1; q >= 0; q--) {
    if (score + prefix[q]! < thetaLo) return -1;
    const i = order[q]!;
    let c = cur[i]!;
    if (c < doc) {
      const b = bases[i]!;
      const sh = shift[i]!;
      const lo = lows[i]!;
      const n = len[i]!;
      const p = advance(b, sh, lo, n, pos[i]!, doc);
      pos[i] = p;
      c = cur[i] = p < n ? (sh === 0 ? b[p]! : b[p >>> sh]! + lo[p]!) : END;
    }
    if (c === doc) {
      let tf = tfs[i]![pos[i]!]!;
      if (tf === TF_OVERFLOW) tf = overflowTf(s.big[i]!, doc);
      score += (weight[i]! * tf) / (tf + norm);
    }
  }
  return score < thetaLo ? -1 : score;
}

/**
 * The exact score of a candidate: contributions summed in query-term order (the partial sums
 * used for pruning are in bound order, which differs between shards). Non-essential cursors sit
 * at or past `doc` after a full probe; essential lists were consumed term-at-a-time, so their
 * window postings are searched again from a forward-only `rescan` cursor (candidates ascend).
 */
function exactScore(s: MaxScoreScratch, doc: number, norm: number): number {
  const { m, essential, rescan, cur, pos, bases, shift, lows, tfs, weight } = s;
  let exact = 0;
  for (let i = 0; i < m; i++) {
    let p: number;
    if (essential[i] === 1) {
      const b = bases[i]!;
      const sh = shift[i]!;
      const lo = lows[i]!;
      const end = pos[i]!;
      p = rescan[i]!;
      if (p < end && (sh === 0 ? b[p]! : b[p >>> sh]! + lo[p]!) < doc) p = advance(b, sh, lo, end, p, doc);
      rescan[i] = p;
      if (p >= end || (sh === 0 ? b[p]! : b[p >>> sh]! + lo[p]!) !== doc) continue;
    } else {
      if (cur[i] !== doc) continue;
      p = pos[i]!;
    }
    let tf = tfs[i]![p]!;
    if (tf === TF_OVERFLOW) tf = overflowTf(s.big[i]!, doc);
    exact += (weight[i]! * tf) / (tf + norm);
  }
  return exact;
}

/** Scores the lists in `s` into `heap` (already reset to k). */
export function maxScoreTopK(s: MaxScoreScratch, ctx: ScoringContext, heap: TopKHeap): void {
  const m = s.m;
  if (m === 0) return;
  const { bases, shift, lows, tfs, blockLast, blockMax, len, weight, bound, pos, cur, windowBound, order, prefix, globalOrder, globalPrefix } = s;
  const { docLen, alive, allow } = ctx;
  const allowWords = allow === null ? null : allow.words;
  const allowCap = allow === null ? 0 : allow.capacity;
  const lenScale = (ctx.k1 * ctx.b) / ctx.avgdl;
  const lenBase = ctx.k1 * (1 - ctx.b);
  const acc = s.acc;
  const seen = s.seen;
  const essential = s.essential;
  const rescan = s.rescan;

  for (let i = 0; i < m; i++) {
    pos[i] = 0;
    cur[i] = len[i]! > 0 ? bases[i]![0]! + lows[i]![0]! : END;
    globalOrder[i] = i;
  }
  // Lists sorted by list-wide bound: a prefix that cannot reach theta on its own never starts a window.
  sortBy(globalOrder, bound, m);
  let sum = 0;
  for (let q = 0; q < m; q++) globalPrefix[q] = sum += bound[globalOrder[q]!]!;

  // theta is the score to beat: the heap's k-th score, or the seeded floor while that is lower.
  let theta = Math.max(heap.threshold, seedFloor(s, heap.limit, docLen, alive, allow, lenBase, lenScale));
  let thetaLo = theta * THETA_SLACK;
  let globalPivot = 0;
  while (globalPivot < m && globalPrefix[globalPivot]! < thetaLo) globalPivot++;

  for (;;) {
    // Between windows the scratch (acc, seen) is clean, so stopping here leaves nothing behind.
    checkStop(m * 256);
    // Window start: the next doc of a list that could reach theta together with all others.
    let wmin = END;
    for (let q = globalPivot; q < m; q++) {
      const c = cur[globalOrder[q]!]!;
      if (c < wmin) wmin = c;
    }
    if (wmin === END) break;
    const wmax = wmin + WINDOW - 1;

    // Each list's bound inside [wmin, wmax]: the max over the blocks that overlap it.
    for (let i = 0; i < m; i++) {
      let c = cur[i]!;
      const b = bases[i]!;
      const sh = shift[i]!;
      const lo = lows[i]!;
      const n = len[i]!;
      if (c < wmin) {
        const p = advance(b, sh, lo, n, pos[i]!, wmin);
        pos[i] = p;
        c = cur[i] = p < n ? (sh === 0 ? b[p]! : b[p >>> sh]! + lo[p]!) : END;
      }
      if (c > wmax) {
        windowBound[i] = 0;
        continue;
      }
      const last = blockLast[i]!;
      const bmax = blockMax[i]!;
      const blocks = (n + (1 << BLOCK_SHIFT) - 1) >>> BLOCK_SHIFT;
      let j = pos[i]! >>> BLOCK_SHIFT;
      let mx = bmax[j]!;
      let wb = 0;
      for (let scanned = 0; last[j]! < wmax && j + 1 < blocks && b[((j + 1) << BLOCK_SHIFT) >>> sh]! + lo[(j + 1) << BLOCK_SHIFT]! <= wmax; scanned++) {
        if (scanned === MAX_BLOCK_SCAN) {
          wb = bound[i]!;
          break;
        }
        j++;
        if (bmax[j]! > mx) mx = bmax[j]!;
      }
      windowBound[i] = wb > 0 ? wb : weight[i]! * mx * BOUND_SLACK;
    }
    for (let i = 0; i < m; i++) order[i] = i;
    sortBy(order, windowBound, m);
    sum = 0;
    for (let q = 0; q < m; q++) prefix[q] = sum += windowBound[order[q]!]!;

    if (prefix[m - 1]! >= thetaLo) {
      // Lists order[0 .. pivot) are non-essential here: together they cannot lift a document to theta.
      let pivot = 0;
      while (prefix[pivot]! < thetaLo) pivot++;
      const restBound = pivot > 0 ? prefix[pivot - 1]! : 0;

      if (pivot === m - 1) {
        // One essential list: document-at-a-time over its postings in the window.
        const e = order[pivot]!;
        const eb = bases[e]!;
        const esh = shift[e]!;
        const elo = lows[e]!;
        const et = tfs[e]!;
        const en = len[e]!;
        const ew = weight[e]!;
        essential.fill(0, 0, m);
        let p = pos[e]!;
        for (; p < en; p++) {
          const doc = esh === 0 ? eb[p]! : eb[p >>> esh]! + elo[p]!;
          if (doc > wmax) break;
          // Mid-window the scratch is in use: only yield the thread (see task-stop.ts).
          if ((p & 1023) === 0) checkYield(1024);
          if (alive[doc] !== 1) continue;
          if (allowWords !== null && (doc >= allowCap || (allowWords[doc >>> 5]! & (1 << (doc & 31))) === 0)) continue;
          let tf = et[p]!;
          if (tf === TF_OVERFLOW) tf = overflowTf(s.big[e]!, doc);
          const norm = lenBase + lenScale * docLen[doc]!;
          const score = (ew * tf) / (tf + norm);
          if (score + restBound < thetaLo) continue;
          if (pivot > 0 && probe(s, doc, score, norm, pivot, thetaLo) < 0) continue;
          // The essential list's cursor is this posting, so exactScore reads it like the others'.
          pos[e] = p;
          cur[e] = doc;
          const exact = exactScore(s, doc, norm);
          if (exact >= thetaLo && heap.push(doc, exact) && heap.threshold > theta) {
            theta = heap.threshold;
            thetaLo = theta * THETA_SLACK;
            while (globalPivot < m && globalPrefix[globalPivot]! < thetaLo) globalPivot++;
          }
        }
        pos[e] = p;
        cur[e] = p < en ? (esh === 0 ? eb[p]! : eb[p >>> esh]! + elo[p]!) : END;
      } else {
        // Several essential lists: term-at-a-time into the window accumulator, then candidates in doc order.
        essential.fill(0, 0, m);
        for (let q = pivot; q < m; q++) {
          const i = order[q]!;
          const b = bases[i]!;
          const sh = shift[i]!;
          const lo = lows[i]!;
          const tl = tfs[i]!;
          const n = len[i]!;
          const w = weight[i]!;
          let p = pos[i]!;
          essential[i] = 1;
          rescan[i] = p;
          for (; p < n; p++) {
            const doc = sh === 0 ? b[p]! : b[p >>> sh]! + lo[p]!;
            if (doc > wmax) break;
            const slot = doc - wmin;
            let tf = tl[p]!;
            if (tf === TF_OVERFLOW) tf = overflowTf(s.big[i]!, doc);
            // Same operation order as everywhere else (norm first), so scores are bit-identical across paths.
            const norm = lenBase + lenScale * docLen[doc]!;
            const c = (w * tf) / (tf + norm);
            const word = slot >>> 5;
            const bit = 1 << (slot & 31);
            if ((seen[word]! & bit) === 0) {
              seen[word] = seen[word]! | bit;
              acc[slot] = c;
            } else {
              acc[slot] = acc[slot]! + c;
            }
          }
          checkYield(p - rescan[i]);
          pos[i] = p;
          cur[i] = p < n ? (sh === 0 ? b[p]! : b[p >>> sh]! + lo[p]!) : END;
        }
        const words = ((wmax - wmin) >>> 5) + 1;
        for (let word = 0; word < words; word++) {
          // Each of the word's 32 documents may be scored against every list.
          if ((word & 7) === 0) checkYield(m << 8);
          let v = seen[word]!;
          if (v === 0) continue;
          seen[word] = 0;
          while (v !== 0) {
            const low = v & -v;
            v ^= low;
            const slot = (word << 5) + 31 - Math.clz32(low);
            const doc = wmin + slot;
            const score = acc[slot]!;
            if (score + restBound < thetaLo) continue;
            if (alive[doc] !== 1) continue;
            if (allowWords !== null && (doc >= allowCap || (allowWords[doc >>> 5]! & (1 << (doc & 31))) === 0)) continue;
            const norm = lenBase + lenScale * docLen[doc]!;
            if (pivot > 0 && probe(s, doc, score, norm, pivot, thetaLo) < 0) continue;
            const exact = exactScore(s, doc, norm);
            if (exact >= thetaLo && heap.push(doc, exact) && heap.threshold > theta) {
              theta = heap.threshold;
              thetaLo = theta * THETA_SLACK;
              while (globalPivot < m && globalPrefix[globalPivot]! < thetaLo) globalPivot++;
            }
          }
        }
      }
    }

    // Everything up to wmax is scored or provably hopeless: move the window-starting lists past it.
    for (let q = globalPivot; q < m; q++) {
      const i = globalOrder[q]!;
      if (cur[i]! <= wmax) {
        const b = bases[i]!;
        const sh = shift[i]!;
        const lo = lows[i]!;
        const n = len[i]!;
        const p = advance(b, sh, lo, n, pos[i]!, wmax + 1);
        pos[i] = p;
        cur[i] = p < n ? (sh === 0 ? b[p]! : b[p >>> sh]! + lo[p]!) : END;
      }
    }
  }
}
