/**
 * LEB128 codes of unsigned 32-bit integers: 7 bits a byte, low bits first, the high bit set on
 * every byte but the last. The sequence store codes the gaps between a document's sorted distinct
 * term ids with it (mostly one or two bytes instead of four). Hand-written because it is on the
 * indexing path; readers decode in place (sequence-store.ts), where a call per value would cost.
 */

/** Most bytes one value takes (32 bits in 7-bit groups). */
export const MAX_VARINT_BYTES = 5;

/**
 * Writes `values[0 .. n)` into `out` from byte `at`; returns the end offset. `out` must hold
 * n * {@link MAX_VARINT_BYTES} bytes from `at`.
 */
export function encodeVarints(values: ArrayLike<number>, n: number, out: Uint8Array, at: number): number {
  let w = at;
  for (let i = 0; i < n; i++) {
    let v = values[i]! >>> 0;
    while (v >= 0x80) {
      out[w++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    out[w++] = v;
  }
  return w;
}
