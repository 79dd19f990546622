/**
 * Multimap from a 32-bit deletion key to the word ids indexed under it, in typed arrays: an
 * open-addressing key table (linear probing) whose slot holds either the only word id of its key
 * (most keys have one word) or the head of a singly linked list of (word id, next) entries. Key
 * and value share a slot, entry fields share an 8-byte cell: each probe or hop is one cache miss.
 * Everything is incremental: a removed pair's entry goes on a free list, a list shrinking back to
 * one word is folded into its slot again, and a key left with no word leaves the table by
 * backward-shift deletion, so nothing degrades however long the vocabulary churns.
 *
 * Read a key's words with a cursor: `for (let c = first(key); c !== NIL; c = next(c)) word(c)`.
 */
import { grown } from '../bm25/grow.js';

/** End of a list / empty key slot. */
export const NIL = 0xffffffff;

/** Tag of a slot value or cursor that is a word id itself rather than an entry index. */
const SINGLE = 0x80000000;

/** Largest word id the index can hold. */
export const MAX_WORD_ID = SINGLE - 1;

// Grown when more than this share of slots is used (linear probing stays short below ~3/4).
const MAX_LOAD = 0.75;

/** Deletion key -> word ids. */
export class DeletionIndex {
  /** Per slot s: key at 2s; at 2s + 1 the value: NIL (empty), SINGLE | word id, or an entry index. */
  private slots = new Uint32Array(2048).fill(NIL);
  private mask = 1023;
  private usedSlots = 0;
  /** Per entry e: word id at 2e, next entry (or NIL) at 2e + 1; free entries chain through 2e + 1. */
  private cells = new Uint32Array(1024);
  private entryTop = 0;
  private freeEntry = NIL;
  private pairCount = 0;

  /** Number of (key, word) pairs held. */
  get pairs(): number {
    return this.pairCount;
  }

  /** Number of distinct keys held. */
  get keyCount(): number {
    return this.usedSlots;
  }

  /** Bytes of the typed arrays (capacity, not just the used part). */
  get bytes(): number {
    return this.slots.byteLength + this.cells.byteLength;
  }

  /** Cursor on the first word of `key`, or {@link NIL} when it has none. */
  first(key: number): number {
    const { slots, mask } = this;
    for (let s = key & mask; ; s = (s + 1) & mask) {
      const v = slots[2 * s + 1]!;
      if (v === NIL || slots[2 * s] === key) return v;
    }
  }

  /** Cursor after `cursor` in its key's list, or {@link NIL}. */
  next(cursor: number): number {
    return cursor >= SINGLE ? NIL : this.cells[2 * cursor + 1]!;
  }

  /** Word id at `cursor`. */
  word(cursor: number): number {
    return cursor >= SINGLE ? cursor - SINGLE : this.cells[2 * cursor]!;
  }

  /** Adds the pair (key, wordId); the caller guarantees it is not already present. */
  add(key: number, wordId: number): void {
    if (wordId > MAX_WORD_ID) throw new RangeError(`word id ${wordId} exceeds ${MAX_WORD_ID}`);
    if (this.usedSlots + 1 > (this.mask + 1) * MAX_LOAD) this.rehash((this.mask + 1) * 2);
    this.pairCount++;
    const { slots, mask } = this;
    let s = key & mask;
    for (; ; s = (s + 1) & mask) {
      const v = slots[2 * s + 1]!;
      if (v === NIL) {
        slots[2 * s] = key;
        slots[2 * s + 1] = (SINGLE | wordId) >>> 0;
        this.usedSlots++;
        return;
      }
      if (slots[2 * s] === key) break;
    }
    let head = slots[2 * s + 1]!;
    // A key gaining a second word moves its first word out of the slot into an entry.
    if (head >= SINGLE) head = this.entry(head - SINGLE, NIL);
    this.slots[2 * s + 1] = this.entry(wordId, head);
  }

  /** Removes the pair (key, wordId); returns false when it was not present. */
  remove(key: number, wordId: number): boolean {
    const { slots, mask } = this;
    let s = key & mask;
    for (; ; s = (s + 1) & mask) {
      const v = slots[2 * s + 1]!;
      if (v === NIL) return false;
      if (slots[2 * s] === key) break;
    }
    const head = slots[2 * s + 1]!;
    if (head >= SINGLE) {
      if (head - SINGLE !== wordId) return false;
      this.pairCount--;
      this.deleteSlot(s);
      return true;
    }
    const cells = this.cells;
    let prev = NIL;
    for (let e = head; e !== NIL; prev = e, e = cells[2 * e + 1]!) {
      if (cells[2 * e] !== wordId) continue;
      if (prev === NIL) slots[2 * s + 1] = cells[2 * e + 1]!;
      else cells[2 * prev + 1] = cells[2 * e + 1]!;
      this.release(e);
      this.pairCount--;
      // Lists hold >= 2 words; one left goes back into the slot.
      const rest = slots[2 * s + 1]!;
      if (cells[2 * rest + 1] === NIL) {
        slots[2 * s + 1] = (SINGLE | cells[2 * rest]!) >>> 0;
        this.release(rest);
      }
      return true;
    }
    return false;
  }

  /** Grows the key table ahead of `keys` more distinct keys (avoids rehash cascades on bulk load). */
  reserve(keys: number): void {
    let cap = this.mask + 1;
    while (this.usedSlots + keys > cap * MAX_LOAD) cap *= 2;
    if (cap !== this.mask + 1) this.rehash(cap);
  }

  private entry(wordId: number, next: number): number {
    let e = this.freeEntry;
    if (e !== NIL) {
      this.freeEntry = this.cells[2 * e + 1]!;
    } else {
      e = this.entryTop++;
      this.cells = grown(this.cells, 2 * this.entryTop);
    }
    this.cells[2 * e] = wordId;
    this.cells[2 * e + 1] = next;
    return e;
  }

  private release(e: number): void {
    this.cells[2 * e + 1] = this.freeEntry;
    this.freeEntry = e;
  }

  /**
   * Empties slot `i` and shifts later members of its probe run back, so every key stays
   * reachable from its home slot without tombstones.
   */
  private deleteSlot(i: number): void {
    const { slots, mask } = this;
    this.usedSlots--;
    let j = i;
    for (;;) {
      slots[2 * i + 1] = NIL;
      for (;;) {
        j = (j + 1) & mask;
        if (slots[2 * j + 1] === NIL) return;
        const home = slots[2 * j]! & mask;
        // j stays when its home lies cyclically in (i, j]: moving it to i would put it before its home.
        const stays = i <= j ? i < home && home <= j : i < home || home <= j;
        if (!stays) break;
      }
      slots[2 * i] = slots[2 * j]!;
      slots[2 * i + 1] = slots[2 * j + 1]!;
      i = j;
    }
  }

  private rehash(capacity: number): void {
    const old = this.slots;
    this.slots = new Uint32Array(2 * capacity).fill(NIL);
    this.mask = capacity - 1;
    const { slots, mask } = this;
    for (let o = 0; o < old.length; o += 2) {
      const v = old[o + 1]!;
      if (v === NIL) continue;
      const k = old[o]!;
      let s = k & mask;
      while (slots[2 * s + 1] !== NIL) s = (s + 1) & mask;
      slots[2 * s] = k;
      slots[2 * s + 1] = v;
    }
  }
}
