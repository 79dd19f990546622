/**
 * FNV-1a, 32-bit, over UTF-16 code units: the one stable hash of the codebase (shard placement,
 * the shard's token and typo tables, bench and test helpers). Stable across processes and
 * versions, so a chunk's shard never depends on which process computed it.
 */

/** FNV-1a offset basis, as a signed 32-bit integer: the hash of the empty string. */
export const FNV_SEED = 0x811c9dc5 | 0;

/** One FNV-1a step: mixes code unit `c` into hash `h` (signed 32-bit in and out). */
export const fnvStep = (h: number, c: number): number => Math.imul(h ^ c, 16777619);

/** FNV-1a of a string's UTF-16 code units, as an unsigned 32-bit integer. */
export function fnv1a(text: string): number {
  let h = FNV_SEED;
  for (let i = 0; i < text.length; i++) h = fnvStep(h, text.charCodeAt(i));
  return h >>> 0;
}
