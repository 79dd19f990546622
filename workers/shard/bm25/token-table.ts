/**
 * Unstemmed token -> term id, keyed by the token's UTF-16 code units read straight from a range of
 * the text, so indexing ASCII text allocates no token strings and hashes no V8 strings: on SciFact
 * the regex matches, the substrings they allocate and the Map lookups on them were ~45% of the
 * indexing CPU time. Also cheaper in memory than a Map with string keys (a pool of code units).
 */
import { FNV_SEED, fnvStep } from '../../../core/domain/fnv1a.js';

/** Code units of `s`, with ASCII A-Z mapped to a-z (the analyzer lowercases before splitting). */
const lower = (c: number): number => (c >= 65 && c <= 90 ? c | 0x20 : c);

/** Returned by {@link TokenTable.get} for a token not in the table. */
export const ABSENT = -2;

/**
 * Open-addressing (linear probing, load <= 1/2) table from a token's code units to an int value.
 * Bounded: when `maxEntries` is reached it is cleared wholesale (values can be recomputed).
 */
export class TokenTable {
  /** Per slot: entry index + 1, 0 = empty. */
  private slots = new Int32Array(1024);
  private mask = 1023;
  private hashes = new Int32Array(512);
  private starts = new Uint32Array(512);
  private lens = new Uint16Array(512);
  private values = new Int32Array(512);
  private chars = new Uint16Array(4096);
  private charsUsed = 0;
  private count = 0;

  /** A table holding at most `maxEntries` tokens before it clears itself. */
  constructor(private readonly maxEntries: number) {}

  /** Number of tokens held. */
  get size(): number {
    return this.count;
  }

  /** Value of the token `text[start .. end)` (A-Z read as a-z) whose hash is `h`, or {@link ABSENT}. */
  get(text: string, start: number, end: number, h: number): number {
    const len = end - start;
    const { slots, mask, hashes, lens, starts, chars } = this;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const e = slots[s]! - 1;
      if (e < 0) return ABSENT;
      if (hashes[e] !== h || lens[e] !== len) continue;
      const o = starts[e]!;
      let i = 0;
      while (i < len && chars[o + i] === lower(text.charCodeAt(start + i))) i++;
      if (i === len) return this.values[e]!;
    }
  }

  /** Stores `value` for the token `text[start .. end)` (A-Z read as a-z), which must be absent. */
  set(text: string, start: number, end: number, h: number, value: number): void {
    if (this.count >= this.maxEntries) this.clear();
    const len = end - start;
    if (len > 0xffff) return; // never cached; callers drop such tokens long before
    const e = this.count++;
    if (e === this.hashes.length) this.growEntries();
    if (this.count * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    if (this.charsUsed + len > this.chars.length) {
      const next = new Uint16Array(Math.max(this.chars.length * 2, this.charsUsed + len));
      next.set(this.chars.subarray(0, this.charsUsed));
      this.chars = next;
    }
    const o = this.charsUsed;
    for (let i = 0; i < len; i++) this.chars[o + i] = lower(text.charCodeAt(start + i));
    this.charsUsed += len;
    this.hashes[e] = h;
    this.starts[e] = o;
    this.lens[e] = len;
    this.values[e] = value;
    this.place(e);
  }

  /** Forgets every token (keeps the buffers). */
  clear(): void {
    this.slots.fill(0);
    this.count = 0;
    this.charsUsed = 0;
  }

  private place(e: number): void {
    const { slots, mask } = this;
    let s = this.hashes[e]! & mask;
    while (slots[s] !== 0) s = (s + 1) & mask;
    slots[s] = e + 1;
  }

  private rehash(size: number): void {
    this.slots = new Int32Array(size);
    this.mask = size - 1;
    for (let e = 0; e < this.count - 1; e++) this.place(e);
  }

  private growEntries(): void {
    const n = this.hashes.length * 2;
    const hashes = new Int32Array(n);
    hashes.set(this.hashes);
    this.hashes = hashes;
    const values = new Int32Array(n);
    values.set(this.values);
    this.values = values;
    const starts = new Uint32Array(n);
    starts.set(this.starts);
    this.starts = starts;
    const lens = new Uint16Array(n);
    lens.set(this.lens);
    this.lens = lens;
  }
}

/** Hash of a whole string as {@link TokenTable} keys it (for tokens the analyzer already split). */
export function hashOf(s: string): number {
  let h = FNV_SEED;
  for (let i = 0; i < s.length; i++) h = fnvStep(h, lower(s.charCodeAt(i)));
  return h;
}
