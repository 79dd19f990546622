/** Amortised growth for typed arrays used as vectors. */

/** `arr` itself when it holds `need` elements, else a copy at least twice as large (zero-filled tail). */
export function grown<T extends Uint32Array | Uint16Array | Uint8Array>(arr: T, need: number): T {
  if (need <= arr.length) return arr;
  const next = new (arr.constructor as new (n: number) => T)(Math.max(need, arr.length * 2, 8));
  next.set(arr);
  return next;
}
