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
  const next = new (arr.constructor as new (n: number) => T)(Math.max(need, n < 1 << 20 ? n * 2 : n + (n >>> 1), 8));
  next.set(arr);
  return next;
}
