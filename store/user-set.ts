/**
 * Exact sets of a dataset's users, as the per-user rollups store them (./user-rollup-batch.ts):
 * each user is a small integer (its ordinal in the dataset, `analytics_users`), and a set is
 * stored in whichever of two encodings is smaller:
 *
 * - sparse: tag 0, the member count, then the gaps between ascending members, each a LEB128
 *   varint (an hour's few thousand users out of millions: a byte or three each);
 * - dense: tag 1, then a bitset whose bit `i % 8` of byte `i >> 3` is member `i` (a day's users
 *   when most of the dataset's users come back: one bit each).
 *
 * A report unions the sets of its rows into one {@link UserBits} and counts its bits: 90 daily sets
 * of 20k users is 225 KB of ORs. Written here rather than taken from a roaring-bitmap package: the
 * npm ones are native addons or WASM builds, and these two encodings (a page of code) are all
 * the reports need.
 */

const SPARSE = 0;
const DENSE = 1;

/** The bytes of `n`'s LEB128 varint. */
const varintLength = (n: number): number => (n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5);

/** Largest member + 1: members are ordinals, shifted as 32-bit integers. */
export const MEMBER_LIMIT = 2 ** 31;

/** Encodes ascending, distinct integers in [0, {@link MEMBER_LIMIT}) (`members`) as the smaller encoding. */
export function encodeUserSet(members: ArrayLike<number>): Uint8Array {
  const n = members.length;
  if (n > 0 && !(members[n - 1]! < MEMBER_LIMIT)) throw new RangeError(`user ordinal ${members[n - 1]} is out of range`);
  let sparseBytes = 1 + varintLength(n);
  for (let i = 0, prev = 0; i < n; i++) {
    sparseBytes += varintLength(members[i]! - prev);
    prev = members[i]!;
  }
  const denseBytes = 1 + (n === 0 ? 0 : (members[n - 1]! >> 3) + 1);
  if (denseBytes < sparseBytes) {
    const out = new Uint8Array(denseBytes);
    out[0] = DENSE;
    for (let i = 0; i < n; i++) out[1 + (members[i]! >> 3)]! |= 1 << (members[i]! & 7);
    return out;
  }
  const out = new Uint8Array(sparseBytes);
  out[0] = SPARSE;
  let at = 1;
  const put = (v: number): void => {
    while (v >= 0x80) {
      out[at++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    out[at++] = v;
  };
  put(n);
  for (let i = 0, prev = 0; i < n; i++) {
    put(members[i]! - prev);
    prev = members[i]!;
  }
  return out;
}

/** Calls `each` with every member of an encoded set, ascending. */
export function forEachUser(encoded: Uint8Array, each: (member: number) => void): void {
  if (encoded.length === 0) return;
  if (encoded[0] === DENSE) {
    for (let byte = 1; byte < encoded.length; byte++) {
      let bits = encoded[byte]!;
      while (bits !== 0) {
        const low = bits & -bits;
        each(((byte - 1) << 3) + 31 - Math.clz32(low));
        bits ^= low;
      }
    }
    return;
  }
  let at = 1;
  const next = (): number => {
    let v = 0;
    let scale = 1;
    for (;;) {
      const b = encoded[at++]!;
      v += (b & 0x7f) * scale;
      if (b < 0x80) return v;
      scale *= 128;
    }
  };
  const n = next();
  for (let i = 0, member = 0; i < n; i++) {
    member += next();
    each(member);
  }
}

/** The members of an encoded set, ascending. */
export function decodeUserSet(encoded: Uint8Array): number[] {
  const out: number[] = [];
  forEachUser(encoded, (m) => out.push(m));
  return out;
}

/**
 * `members` (any order) added to a dense set without decoding it: a copy with their bits set, and
 * how many were not in it; undefined when the set is sparse or a member is past its bitset (then
 * decode and re-encode: the smaller encoding may change).
 */
export function addToDense(encoded: Uint8Array, members: readonly number[]): { encoded: Uint8Array; added: number } | undefined {
  if (encoded[0] !== DENSE) return undefined;
  const limit = (encoded.length - 1) * 8;
  if (!members.every((m) => m < limit)) return undefined;
  const out = Uint8Array.from(encoded);
  let added = 0;
  for (const m of members) {
    const at = 1 + (m >> 3);
    const bit = 1 << (m & 7);
    if ((out[at]! & bit) === 0) {
      out[at]! |= bit;
      added++;
    }
  }
  return { encoded: out, added };
}

/** The ascending union of two ascending, distinct lists. */
export function unionSorted(a: readonly number[], b: readonly number[]): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i]! < b[j]!) out.push(a[i++]!);
    else if (a[i]! > b[j]!) out.push(b[j++]!);
    else {
      out.push(a[i++]!);
      j++;
    }
  }
  while (i < a.length) out.push(a[i++]!);
  while (j < b.length) out.push(b[j++]!);
  return out;
}

/** A growable bitset of user ordinals: the union a report counts. */
export class UserBits {
  private words = new Uint32Array(64);

  /** Adds one member. */
  add(member: number): void {
    const w = member >>> 5;
    if (w >= this.words.length) this.grow(w);
    this.words[w]! |= 1 << (member & 31);
  }

  /** Adds every member of an encoded set; a dense one is ORed byte by byte. */
  addEncoded(encoded: Uint8Array): void {
    if (encoded.length === 0) return;
    if (encoded[0] !== DENSE) {
      forEachUser(encoded, (m) => this.add(m));
      return;
    }
    const bytes = encoded.length - 1;
    if (bytes === 0) return;
    const lastWord = (bytes - 1) >>> 2;
    if (lastWord >= this.words.length) this.grow(lastWord);
    const words = this.words;
    for (let i = 0; i < bytes; i++) {
      const b = encoded[1 + i]!;
      if (b !== 0) words[i >>> 2]! |= b << ((i & 3) << 3);
    }
  }

  /** How many members the union holds. */
  count(): number {
    let n = 0;
    for (let v of this.words) {
      // Popcount of a 32-bit word.
      v -= (v >>> 1) & 0x55555555;
      v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
      n += Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
    }
    return n;
  }

  private grow(word: number): void {
    let size = this.words.length;
    while (size <= word) size *= 2;
    const words = new Uint32Array(size);
    words.set(this.words);
    this.words = words;
  }
}
