/** Cursor moves in an ascending doc-id list, shared by the top-k's list walks. */

/**
 * First index >= from whose doc is >= target in a list read as doc-blocks.ts says (doc p is
 * `bases[p >>> shift] + lows[p]`; shift 0: `bases` holds the doc ids).
 */
export function advance(bases: Uint32Array, shift: number, lows: Uint16Array, length: number, from: number, target: number): number {
  return shift === 0 ? advancePlain(bases, length, from, target) : advanceNarrow(bases, shift, lows, length, from, target);
}

/** {@link advance} over plain doc ids: galloping, then binary search. */
function advancePlain(docs: Uint32Array, length: number, from: number, target: number): number {
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

/**
 * {@link advance} over a narrow list: gallops over the group bases (dense, one load a step) to the
 * last group starting below `target`, then binary-searches its u16 offsets.
 */
function advanceNarrow(bases: Uint32Array, shift: number, lows: Uint16Array, length: number, from: number, target: number): number {
  if (from >= length || bases[from >>> shift]! >= target) return from;
  const groups = ((length - 1) >>> shift) + 1;
  // bases[lo] < target throughout; hi is past the last group that might start below target.
  let lo = from >>> shift;
  let hi = lo + 1;
  let step = 1;
  while (hi < groups && bases[hi]! < target) {
    lo = hi;
    hi += step;
    step *= 2;
  }
  if (hi > groups) hi = groups;
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (bases[mid]! < target) lo = mid;
    else hi = mid;
  }
  // The answer is in group lo, or the next group's first entry (which starts at or past target).
  const want = target - bases[lo]!;
  let a = Math.max(from, lo << shift);
  let b = Math.min(length, (lo + 1) << shift);
  if (want > 0xffff) return b;
  while (a < b) {
    const mid = (a + b) >>> 1;
    if (lows[mid]! < want) a = mid + 1;
    else b = mid;
  }
  return a;
}
