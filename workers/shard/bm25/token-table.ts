/**
 * Unstemmed token -> term id, keyed by the token's UTF-8 bytes read straight from a range of the
 * scanner's byte buffer, so indexing allocates no token strings and hashes no V8 strings: on
 * SciFact the regex matches, the substrings they allocate and the Map lookups on them were ~45% of
 * the indexing CPU time. Also cheaper in memory than a Map with string keys (a pool of bytes).
 */
import { FNV_SEED, fnvStep } from '../../../core/domain/fnv1a.js';

/** Returned by {@link TokenTable.get} for a token not in the table. */
export const ABSENT = -2;

/** Int32 words per slot: hash, (offset of the bytes << 8) | length (0: empty slot), value. */
const STRIDE = 3;
/** Longest token kept, in bytes (its length has 8 bits of the slot); longer ones are resolved every time. */
const MAX_LEN = 0xff;
/** Bytes the pool may hold (its offsets have the other 23 bits). */
const MAX_BYTES = 1 << 23;

/**
 * Open-addressing (linear probing, load <= 1/2) table from a token's bytes to an int value. A
 * slot holds the whole entry (hash, where its bytes are, value), so a lookup reads one slot and
 * the bytes: a vocabulary of tens of thousands of tokens outgrows the L2 cache, where one array
 * per field costs a cache miss per field. Bounded: when `maxEntries` is reached it is cleared
 * wholesale (values can be recomputed).
 */
export class TokenTable {
  private slots = new Int32Array(1024 * STRIDE);
  private mask = 1023;
  private pool = new Uint8Array(4096);
  private poolUsed = 0;
  private count = 0;

  /** A table holding at most `maxEntries` tokens before it clears itself. */
  constructor(private readonly maxEntries: number) {
    // Stored twice so that V8 does not compile them in as constants (see TermScanner's constructor).
    this.slots = new Int32Array(1024 * STRIDE);
    this.mask = 1023;
    this.pool = new Uint8Array(4096);
  }

  /** Number of tokens held. */
  get size(): number {
    return this.count;
  }

  /** Value of the token `bytes[start .. end)` whose hash ({@link hashBytes}) is `h`, or {@link ABSENT}. */
  get(bytes: Uint8Array, start: number, end: number, h: number): number {
    const len = end - start;
    const { slots, mask, pool } = this;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const at = s * STRIDE;
      const where = slots[at + 1]!;
      if (where === 0) return ABSENT;
      if (slots[at] !== h || (where & MAX_LEN) !== len) continue;
      const o = where >>> 8;
      let i = 0;
      while (i < len && pool[o + i] === bytes[start + i]) i++;
      if (i === len) return slots[at + 2]!;
    }
  }

  /** Stores `value` for the token `bytes[start .. end)` whose hash is `h`, which must be absent. */
  set(bytes: Uint8Array, start: number, end: number, h: number, value: number): void {
    const len = end - start;
    if (len > MAX_LEN || len === 0) return; // never cached; callers drop such tokens long before
    if (this.count >= this.maxEntries || this.poolUsed + len > MAX_BYTES) this.clear();
    this.count++;
    if (this.count * 2 > this.mask + 1) this.rehash((this.mask + 1) * 2);
    if (this.poolUsed + len > this.pool.length) {
      const next = new Uint8Array(Math.min(MAX_BYTES, Math.max(this.pool.length * 2, this.poolUsed + len)));
      next.set(this.pool.subarray(0, this.poolUsed));
      this.pool = next;
    }
    const o = this.poolUsed;
    this.pool.set(bytes.subarray(start, end), o);
    this.poolUsed += len;
    this.place(h, (o << 8) | len, value);
  }

  /** Forgets every token (keeps the buffers). */
  clear(): void {
    this.slots.fill(0);
    this.count = 0;
    this.poolUsed = 0;
  }

  private place(h: number, where: number, value: number): void {
    const { slots, mask } = this;
    let s = h & mask;
    while (slots[s * STRIDE + 1] !== 0) s = (s + 1) & mask;
    const at = s * STRIDE;
    slots[at] = h;
    slots[at + 1] = where;
    slots[at + 2] = value;
  }

  private rehash(size: number): void {
    const old = this.slots;
    this.slots = new Int32Array(size * STRIDE);
    this.mask = size - 1;
    for (let at = 0; at < old.length; at += STRIDE) if (old[at + 1] !== 0) this.place(old[at]!, old[at + 1]!, old[at + 2]!);
  }
}

/** The key hash of `bytes[start .. end)`, as the scanner computes it while it splits. */
export function hashBytes(bytes: Uint8Array, start: number, end: number): number {
  let h = FNV_SEED;
  for (let i = start; i < end; i++) h = fnvStep(h, bytes[i]!);
  return h;
}
