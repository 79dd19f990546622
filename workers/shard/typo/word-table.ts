/**
 * Word <-> dense id, with the words' UTF-16 code units in one pool instead of one V8 string per
 * word: a vocabulary of a million words costs tens of bytes per word here against ~100 for a
 * Map<string, number> plus string array, and no word keeps alive the chunk text it was sliced from.
 * Ids of removed words are reused; the pool is compacted once more than half of it is garbage.
 */
import { grown } from '../bm25/grow.js';

/** Longest word the table stores, in UTF-16 code units (lengths are kept in a byte). */
export const MAX_WORD_UNITS = 255;

/** Returned by {@link WordTable.find} for an absent word. */
export const NO_WORD = -1;

/** Word <-> id table over a code-unit pool. */
export class WordTable {
  /** Per slot: id + 1, 0 = empty (open addressing, linear probing, load <= 1/2). */
  private slots = new Uint32Array(1024);
  private mask = 1023;
  /** Per id: the word's hash (kept so a rehash does not re-read the pool). */
  private hashes = new Uint32Array(512);
  /** Per id: offset of the word in {@link chars}. */
  starts = new Uint32Array(512);
  /** Per id: length in code units; 0 marks a free id. */
  lens = new Uint8Array(512);
  /** The pool of code units. */
  chars = new Uint16Array(4096);
  private charsUsed = 0;
  private charsGarbage = 0;
  private top = 0;
  private free: number[] = [];
  private live = 0;

  /** Number of words held. */
  get size(): number {
    return this.live;
  }

  /** One past the largest id ever handed out (ids are below this). */
  get idLimit(): number {
    return this.top;
  }

  /** Bytes of the typed arrays (capacity) plus the free-id stack. */
  get bytes(): number {
    return (
      this.slots.byteLength + this.hashes.byteLength + this.starts.byteLength + this.lens.byteLength + this.chars.byteLength + this.free.length * 8
    );
  }

  /** Id of the word held in `units[0 .. len)`, whose {@link hashUnits} is `h`, or {@link NO_WORD}. */
  find(units: Uint16Array, len: number, h: number): number {
    const { slots, mask, hashes, lens, starts, chars } = this;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const id = slots[s]! - 1;
      if (id < 0) return NO_WORD;
      if (hashes[id] !== h || lens[id] !== len) continue;
      const o = starts[id]!;
      let i = 0;
      while (i < len && chars[o + i] === units[i]) i++;
      if (i === len) return id;
    }
  }

  /** Stores the absent word `units[0 .. len)` (1 <= len <= {@link MAX_WORD_UNITS}) with hash `h`; returns its id. */
  insert(units: Uint16Array, len: number, h: number): number {
    let id = this.free.pop();
    if (id === undefined) {
      id = this.top++;
      this.hashes = grown(this.hashes, this.top);
      this.starts = grown(this.starts, this.top);
      this.lens = grown(this.lens, this.top);
    }
    if ((this.live + 1) * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    if (this.charsUsed + len > this.chars.length) {
      if (this.charsGarbage * 2 > this.charsUsed) this.compact();
      this.chars = grown(this.chars, this.charsUsed + len);
    }
    const o = this.charsUsed;
    this.chars.set(units.subarray(0, len), o);
    this.charsUsed += len;
    this.hashes[id] = h;
    this.starts[id] = o;
    this.lens[id] = len;
    this.live++;
    this.place(id);
    return id;
  }

  /** Forgets word `id` (its id may be handed out again). */
  delete(id: number): void {
    const { slots, mask } = this;
    let s = this.hashes[id]! & mask;
    while (slots[s] !== id + 1) s = (s + 1) & mask;
    // Backward-shift deletion, as in DeletionIndex: no tombstones.
    let j = s;
    for (;;) {
      slots[s] = 0;
      for (;;) {
        j = (j + 1) & mask;
        const other = slots[j]!;
        if (other === 0) {
          this.release(id);
          return;
        }
        const home = this.hashes[other - 1]! & mask;
        const stays = s <= j ? s < home && home <= j : s < home || home <= j;
        if (!stays) break;
      }
      slots[s] = slots[j]!;
      s = j;
    }
  }

  private release(id: number): void {
    this.charsGarbage += this.lens[id]!;
    this.lens[id] = 0;
    this.free.push(id);
    this.live--;
  }

  /** The word of `id` as a string. */
  wordOf(id: number): string {
    const o = this.starts[id]!;
    return String.fromCharCode(...this.chars.subarray(o, o + this.lens[id]!));
  }

  /** Whether `id` currently holds a word. */
  has(id: number): boolean {
    return id < this.top && this.lens[id] !== 0;
  }

  private place(id: number): void {
    const { slots, mask } = this;
    let s = this.hashes[id]! & mask;
    while (slots[s] !== 0) s = (s + 1) & mask;
    slots[s] = id + 1;
  }

  private rehash(capacity: number): void {
    this.slots = new Uint32Array(capacity);
    this.mask = capacity - 1;
    for (let id = 0; id < this.top; id++) if (this.lens[id] !== 0) this.place(id);
  }

  /** Rewrites the pool with live words only (ids do not change, so nothing else is touched). */
  private compact(): void {
    const next = new Uint16Array(Math.max(4096, this.charsUsed - this.charsGarbage));
    let o = 0;
    for (let id = 0; id < this.top; id++) {
      const len = this.lens[id]!;
      if (len === 0) continue;
      const s = this.starts[id]!;
      next.set(this.chars.subarray(s, s + len), o);
      this.starts[id] = o;
      o += len;
    }
    this.chars = next;
    this.charsUsed = o;
    this.charsGarbage = 0;
  }

  /** Grows the slot table for `words` more words at once (bulk load). */
  reserve(words: number): void {
    let cap = this.slots.length;
    while ((this.live + words) * 2 > cap) cap *= 2;
    if (cap !== this.slots.length) this.rehash(cap);
  }
}

