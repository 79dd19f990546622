/**
 * Levenshtein distance with a cutoff, over UTF-16 code units held in typed arrays. The typo lookup
 * only needs to know whether a candidate is within 0, 1 or 2 edits, so the dynamic programme is
 * restricted to the diagonal band |i - j| <= max and stops as soon as a whole row exceeds max:
 * a verification costs about (2 max + 1) x length cells instead of length².
 */

// Two DP rows, shared by every call (the hot path is synchronous and single-threaded per worker).
let prevRow = new Int32Array(64);
let curRow = new Int32Array(64);

/**
 * Levenshtein distance between `a[aOff .. aOff + aLen)` and `b[bOff .. bOff + bLen)` (insert,
 * delete and substitute all cost 1), or `max + 1` when it exceeds `max`.
 */
export function boundedLevenshtein(
  a: Uint16Array,
  aOff: number,
  aLen: number,
  b: Uint16Array,
  bOff: number,
  bLen: number,
  max: number,
): number {
  const over = max + 1;
  if (aLen - bLen > max || bLen - aLen > max) return over;
  if (aLen === 0 || bLen === 0) return Math.max(aLen, bLen);
  if (prevRow.length < bLen + 2) {
    prevRow = new Int32Array(bLen + 2);
    curRow = new Int32Array(bLen + 2);
  }
  let prev = prevRow;
  let cur = curRow;
  // Row 0: cost of inserting b's first j units; cells right of the band read as "too far".
  const first = Math.min(bLen, max);
  for (let j = 0; j <= first; j++) prev[j] = j;
  if (first + 1 <= bLen) prev[first + 1] = over;
  for (let i = 1; i <= aLen; i++) {
    const lo = i - max > 1 ? i - max : 1;
    const hi = i + max < bLen ? i + max : bLen;
    // Invariant: prev[lo - 1 .. hi] are this band's inputs; prev[hi] was set to `over` by the
    // previous row when it lay outside that row's band, so no stale value leaks in.
    cur[lo - 1] = lo === 1 ? i : over;
    const ca = a[aOff + i - 1]!;
    let rowMin = over;
    for (let j = lo; j <= hi; j++) {
      let v = prev[j - 1]! + (ca === b[bOff + j - 1] ? 0 : 1);
      const del = prev[j]! + 1;
      if (del < v) v = del;
      const ins = cur[j - 1]! + 1;
      if (ins < v) v = ins;
      if (v > over) v = over;
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return over;
    if (hi + 1 <= bLen) cur[hi + 1] = over;
    const t = prev;
    prev = cur;
    cur = t;
  }
  const d = prev[bLen]!;
  return d > max ? over : d;
}
