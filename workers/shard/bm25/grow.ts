/** Amortised growth for typed arrays used as vectors. */

type Growable = Uint32Array | Uint16Array | Uint8Array | Float64Array | Float32Array;

/**
 * `arr` itself when it holds `need` elements, else a copy with room to spare (zero-filled tail).
 * Small arrays double; past 1 Mi elements growth is 1.5x, so a big list wastes at most a third
 * of its bytes instead of half while copies stay amortised O(1) per element.
 */
export function grown<T extends Growable>(arr: T, need: number): T {
  if (need <= arr.length) return arr;
  const n = arr.length;
  return copyInto(arr, Math.max(need, n < 1 << 20 ? n * 2 : n + (n >>> 1), 8));
}

/**
 * Like {@link grown}, but past 64 Ki elements by 1.25x: for the arenas that hold most of an index's
 * bytes (postings, token codes), where 1.5x left 19-30% of them unused at 1M chunks
 * (bench/bm25-synthetic.ts). Each element is copied about four times as the array grows instead of twice.
 */
export function grownTight<T extends Growable>(arr: T, need: number): T {
  if (need <= arr.length) return arr;
  const n = arr.length;
  return copyInto(arr, Math.max(need, n < 1 << 16 ? n * 2 : n + (n >>> 2), 8));
}

/** A zero-filled array of `length` elements of `arr`'s type starting with `arr`'s elements. */
function copyInto<T extends Growable>(arr: T, length: number): T {
  const next = new (arr.constructor as new (n: number) => T)(length);
  next.set(arr);
  return next;
}
