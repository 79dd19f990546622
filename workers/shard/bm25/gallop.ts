/** Cursor moves in an ascending doc-id list, shared by the top-k's list walks. */

/** First index >= from whose doc is >= target (galloping, then binary search). */
export function advance(docs: Uint32Array, length: number, from: number, target: number): number {
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
