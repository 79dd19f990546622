/**
 * Byte accounting of the BM25 index's structures, for benchmarks and capacity planning. Typed
 * arrays count their exact `byteLength`; V8 objects (Map entries, strings, JS arrays, typed-array
 * headers) are estimated from V8's layouts on 64-bit Node without pointer compression, Node's
 * default: the bench prints the measured heap beside the sum, so the estimates can be checked.
 */

/** Bytes of each structure, by name (insertion order is report order). */
export type MemoryParts = Record<string, number>;

/**
 * V8 bytes of one typed array before its first element: JSTypedArray (~80 B), JSArrayBuffer
 * (~80 B) and the backing store's record (~30 B); the postings store's layout note measured ~190.
 */
export const TYPED_ARRAY_OVERHEAD = 190;

/** Bytes of one slot of a JS array or of a V8 hash table (a tagged pointer). */
const SLOT = 8;

/** Estimated heap bytes of a string: a 16-byte header, then 1 byte per char (Latin-1) or 2, rounded to 8. */
export function stringBytes(s: string): number {
  let wide = false;
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) > 0xff) {
      wide = true;
      break;
    }
  }
  return 16 + ((((wide ? 2 : 1) * s.length + 7) >>> 3) << 3);
}

/**
 * Estimated bytes of a `Map` with `size` entries: V8's OrderedHashMap keeps 3 slots per entry
 * (key, value, chain) and a bucket per 2 entries, at a power-of-two capacity of at least `size`.
 * Small-integer values are stored in the slot (no heap number).
 */
export function mapBytes(size: number): number {
  let capacity = 4;
  while (capacity < size) capacity *= 2;
  return capacity * 3 * SLOT + (capacity / 2) * SLOT;
}

/** Estimated bytes of a JS array's elements holding `length` pointers (growth slack not known, left out). */
export function arrayBytes(length: number): number {
  return length * SLOT;
}

/** Sum of a report's parts. */
export function totalBytes(parts: MemoryParts): number {
  let sum = 0;
  for (const v of Object.values(parts)) sum += v;
  return sum;
}
