/**
 * Deletion neighbourhood keys (SymSpell). If Levenshtein(w, q) <= k, deleting at most k units
 * from w and at most k from q yields a common string (a substitution is one delete on each
 * side, an insertion or deletion one delete on one side). That stays true for the first P units
 * of each word (P = the prefix length): the common string's part that falls inside both prefixes
 * is reached with at most k deletes from each prefix. So a word indexed under the hashes of every
 * <= 2-delete variant of its prefix is found by looking up the <= k-delete variants of the query's
 * prefix, and candidates are then verified with the real distance.
 *
 * Keys are 32-bit hashes, not strings: a collision only adds a candidate that verification drops,
 * and no string is allocated per key.
 */
import { FNV_SEED, fnvStep } from '../../../core/domain/fnv1a.js';

/** murmur3 finaliser: FNV's low bits are weak and tables index by them. */
export function mix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Hash of `chars[off .. off + len)` (the key of a whole word in the word table). */
export function hashUnits(chars: Uint16Array, off: number, len: number): number {
  let h = FNV_SEED;
  for (let i = 0; i < len; i++) h = fnvStep(h, chars[off + i]!);
  return mix32(h ^ len);
}

/** Hash of `chars[off .. off + len)` with the units at positions `skipA` and `skipB` left out. */
function hashWithout(chars: Uint16Array, off: number, len: number, skipA: number, skipB: number): number {
  let h = FNV_SEED;
  let n = 0;
  for (let i = 0; i < len; i++) {
    if (i === skipA || i === skipB) continue;
    h = fnvStep(h, chars[off + i]!);
    n++;
  }
  return mix32(h ^ n);
}

/** Upper bound of the keys {@link deleteKeys} writes for a prefix of `p` units and `maxDeletes` <= 2. */
export function maxDeleteKeys(p: number, maxDeletes: number): number {
  return 1 + (maxDeletes >= 1 ? p : 0) + (maxDeletes >= 2 ? (p * (p - 1)) / 2 : 0);
}

/**
 * Writes into `out` the distinct hashes of every variant of the first `prefixLength` units of
 * `chars[off .. off + len)` with 0 to `maxDeletes` (<= 2) units deleted, ascending; returns how
 * many. `out` must hold {@link maxDeleteKeys}(min(len, prefixLength), maxDeletes) values.
 */
export function deleteKeys(
  chars: Uint16Array,
  off: number,
  len: number,
  prefixLength: number,
  maxDeletes: number,
  out: Uint32Array,
): number {
  const p = len < prefixLength ? len : prefixLength;
  let n = 0;
  out[n++] = hashWithout(chars, off, p, -1, -1);
  if (maxDeletes >= 1) {
    for (let i = 0; i < p; i++) {
      // Deleting either unit of a run of equal units gives the same string: keep the first only.
      if (i > 0 && chars[off + i] === chars[off + i - 1]) continue;
      out[n++] = hashWithout(chars, off, p, i, -1);
    }
  }
  if (maxDeletes >= 2) {
    for (let i = 0; i < p; i++) {
      for (let j = i + 1; j < p; j++) out[n++] = hashWithout(chars, off, p, i, j);
    }
  }
  // Sort and drop duplicates (equal variants and, rarely, colliding hashes): the index must hold
  // each (key, word) pair once so that removing a word removes exactly what adding it added.
  const keys = out.subarray(0, n).sort();
  let m = 0;
  for (let i = 0; i < n; i++) if (i === 0 || keys[i] !== keys[m - 1]) keys[m++] = keys[i]!;
  return m;
}
