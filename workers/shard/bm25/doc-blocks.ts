/**
 * Doc ids of a long postings list in about half the bytes: a u32 base per group of 2^shift
 * entries (the group's first doc id) and a u16 offset from it per entry, so doc p is
 * `bases[p >>> shift] + lows[p]`, still one random access (MaxScore gallops and probes lists;
 * bit-packed blocks, which decode a block at a time, would cost it a decode per probe). A list
 * whose groups cannot all span under 65,536 ids at any shift down to {@link MIN_NARROW_SHIFT}
 * keeps plain u32 doc ids, and so does a list shorter than {@link NARROW_MIN_ENTRIES}. Readers
 * see one shape: a plain list is bases = its doc ids, shift 0 and lows = {@link zeroLows}, and
 * the hot loops test `shift === 0` to read it with one load.
 */

/** Largest group (128 entries, the block-max block size): 4 bytes of base per 128 postings. */
export const MAX_NARROW_SHIFT = 7;
/** Smallest group worth it: 2 + 4/4 = 3 bytes a posting; groups of 2 would cost as much as u32. */
export const MIN_NARROW_SHIFT = 2;
/**
 * Shortest list coded narrow. A narrow doc id costs a second load and an add, which shows where
 * the index is cache-resident: SciFact's queries (5,183 chunks) ran ~10% slower with every list
 * past the arena's 512 narrow, and no slower from this length on (no SciFact list is this long).
 * On the 1M synthetic corpus doc ids take 112 bytes a chunk from 513 entries on, 132 from this
 * length on (184 all u32), and its queries were no slower (bench/README.md).
 */
export const NARROW_MIN_ENTRIES = 8192;
/** Largest offset from a group's base. */
const MAX_LOW = 0xffff;

/** A list's doc ids as read here: doc p (p < n) is `bases[p >>> shift] + lows[p]`. */
export interface BlockDocs {
  bases: Uint32Array;
  shift: number;
  lows: Uint16Array;
  n: number;
}

let zeros = new Uint16Array(1024);

/** A shared all-zero Uint16Array of at least `n` entries: the lows of a plain list (never written). */
export function zeroLows(n: number): Uint16Array {
  if (n > zeros.length) zeros = new Uint16Array(Math.max(n, zeros.length * 2));
  return zeros;
}

/**
 * The largest shift at which every group of `docs[0 .. n)` lies within [its first id, first +
 * 65,535], or -1 when none from {@link MAX_NARROW_SHIFT} down to {@link MIN_NARROW_SHIFT} does.
 */
export function narrowShift(docs: Uint32Array, n: number): number {
  for (let sh = MAX_NARROW_SHIFT; sh >= MIN_NARROW_SHIFT; sh--) {
    let fits = true;
    for (let g = 0; g < n && fits; g += 1 << sh) {
      const base = docs[g]!;
      const end = Math.min(n, g + (1 << sh));
      for (let p = g + 1; p < end; p++) {
        const off = docs[p]! - base;
        if (off < 0 || off > MAX_LOW) {
          fits = false;
          break;
        }
      }
    }
    if (fits) return sh;
  }
  return -1;
}

/** Codes `docs[0 .. n)` at `shift` (which {@link narrowShift} found fitting) into `bases` and `lows`. */
export function encodeNarrow(docs: Uint32Array, n: number, shift: number, bases: Uint32Array, lows: Uint16Array): void {
  const mask = (1 << shift) - 1;
  for (let p = 0; p < n; p++) {
    if ((p & mask) === 0) bases[p >>> shift] = docs[p]!;
    lows[p] = docs[p]! - bases[p >>> shift]!;
  }
}

/** Doc ids `0 .. n)` of a list coded at `shift`, into `out` (plain u32). */
export function decodeNarrow(bases: Uint32Array, shift: number, lows: Uint16Array, n: number, out: Uint32Array): Uint32Array {
  for (let p = 0; p < n; p++) out[p] = bases[p >>> shift]! + lows[p]!;
  return out;
}

/** Whether `doc` can be entry `p` of a list coded at `shift` whose earlier entries are in place (and sets it if so). */
export function appendNarrow(bases: Uint32Array, shift: number, lows: Uint16Array, p: number, doc: number): boolean {
  if ((p & ((1 << shift) - 1)) === 0) {
    bases[p >>> shift] = doc;
    lows[p] = 0;
    return true;
  }
  const off = doc - bases[p >>> shift]!;
  if (off < 0 || off > MAX_LOW) return false;
  lows[p] = off;
  return true;
}
