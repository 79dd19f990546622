/**
 * Each document's id sequence (term ids in text order for the BM25 index, vocabulary word ids for
 * the typo vocabulary) in one byte arena (a typed array per document would cost ~190 bytes of V8
 * objects each). A document is coded as its distinct ids, ascending, delta + LEB128-coded
 * (varint.ts), then one local index per position into them, 1 byte wide while it has at most 256
 * distinct ids (2 up to 65,536, else 4). Ids marked in `skip` (stop words) are in the distinct
 * ids but hold no position: a removal finds every term of the document, proximity reads content
 * positions only. Against LEB128 term ids of every token (tried first) this is 23% smaller on
 * SciFact (27% larger on the 1M synthetic corpus), and a proximity read, which decodes the
 * distinct ids only up to the pair's larger id and then compares position bytes, is ~2.5x
 * faster (still ~2x a scan of u32 content terms: bench/README.md). Ids must be dense small
 * integers (they index scratch arrays). Ranges of removed documents are garbage until a
 * compaction rewrites the arena.
 *
 * The arena is paged: {@link PAGE_BYTES} pages that are never copied once full (one array grown
 * by 1.25x left ~20% of it unused after a growth, 30 MiB of sequences and 15 of typo word ids at
 * 1M chunks). A document never straddles a page, so a reader finds its codes in one array;
 * addresses stay one u32 (page slot << {@link PAGE_SHIFT} | offset), and a document larger than
 * a page gets an array of its own spanning as many slots (each slot a view from that slot's
 * offset, so the same arithmetic reads it).
 */
import { grown } from './grow.js';
import { encodeVarints, MAX_VARINT_BYTES } from './varint.js';

/**
 * log2 of the page size: 256 KiB, small beside 100 MiB of sequences and what a small shard may
 * leave unused in its last page (1 MiB pages took SciFact's index from 14.0 to 14.5 MiB), large
 * beside a document.
 */
const PAGE_SHIFT = 18;
/** Bytes of a full page. */
const PAGE_BYTES = 1 << PAGE_SHIFT;
const PAGE_MASK = PAGE_BYTES - 1;
/** Page slots an u32 address reaches (4 GiB). */
const MAX_SLOTS = 2 ** (32 - PAGE_SHIFT);
/** The first page's first size: a small shard's arena grows from here to a page by 1.25x. */
const FIRST_PAGE_BYTES = 4096;

/** Placeholder of a slot not yet filled. */
const EMPTY_PAGE = new Uint8Array(0);

/** Bytes of a local index for a document with `distinct` ids. */
export const localWidth = (distinct: number): number => (distinct <= 0x100 ? 1 : distinct <= 0x10000 ? 2 : 4);

/** One document opened by {@link SequenceStore.open}: its distinct ids and where its positions are coded. */
export class SequenceView {
  /** Distinct ids ascending (a view into scratch). */
  terms = new Uint32Array(0);
  /** The arena; positions are `codes[from .. to)`, `width` bytes each, little-endian local indexes into {@link terms}. */
  codes: Uint8Array = new Uint8Array(0);
  from = 0;
  to = 0;
  width = 1;
}

/**
 * Where two ids sit in one document, filled by {@link SequenceStore.locate}: their local indexes
 * and the document's coded positions (the fields of a {@link SequenceView} a pair count reads).
 */
export class PairSite {
  /** The arena; positions are `codes[from .. to)`, `width` bytes each. */
  codes: Uint8Array = new Uint8Array(0);
  from = 0;
  to = 0;
  width = 1;
  /** Local indexes of the first and the second id (equal when the ids are). */
  la = 0;
  lb = 0;
}

/** Per-document id sequences in one byte arena. */
export class SequenceStore {
  /** Per document: address of its codes (page slot << PAGE_SHIFT | offset in the page). */
  private start = new Uint32Array(64);
  /** Per document: byte length of its codes (0: no sequence). */
  private bytes = new Uint32Array(64);
  /** Page slot -> its bytes (a slot of a document larger than a page: a view from the slot's offset). */
  private pages: Uint8Array[] = [new Uint8Array(FIRST_PAGE_BYTES)];
  /** Slot of the page being filled, and bytes used in it. */
  private cur = 0;
  private curUsed = 0;
  /** Bytes of every document written (live and garbage), and of the garbage among them. */
  private used = 0;
  private garbage = 0;
  /** Scratch: the distinct ids of the document being written or read. */
  private dict = new Uint32Array(256);
  /** Scratch by id: the set() call that last saw it, and its local index in that document. */
  private stamp = new Uint32Array(1024);
  private localOf = new Uint32Array(1024);
  private epoch = 0;
  /** Scratch: a document's header (distinct ids, bytes of their codes). */
  private readonly header = new Uint32Array(2);
  /** Decoded positions of the last {@link get}. */
  private out = new Uint32Array(256);
  private readonly view = new SequenceView();

  /**
   * Stores document `doc`: the distinct ids of `ids[0 .. n)`, and the positions of those whose
   * `skip[id]` is not 1 (all when `skip` is null; none without `positions`: a set of ids, such as
   * a chunk's typo-vocabulary words, whose removal needs only which ids it holds).
   */
  set(doc: number, ids: ArrayLike<number>, n: number, skip: Uint8Array | null, positions = true): void {
    this.write(doc, ids, n, this.distinct(ids, n), skip, positions);
  }

  /**
   * Like {@link set} (positions kept) when the caller already holds the distinct ids of
   * `ids[0 .. n)`, in any order, as `terms[0 .. d)`: the index counts term frequencies with the
   * same pass, and a second dedup of every token here was ~4% of indexing.
   */
  setDistinct(doc: number, ids: ArrayLike<number>, n: number, terms: Uint32Array, d: number, skip: Uint8Array | null): void {
    if (d > this.dict.length) this.dict = grown(this.dict, d);
    const sorted = this.dict.subarray(0, d);
    sorted.set(terms.subarray(0, d));
    sorted.sort();
    const top = d > 0 ? sorted[d - 1]! : 0;
    if (top >= this.localOf.length) this.localOf = grown(this.localOf, top + 1);
    this.write(doc, ids, n, d, skip, true);
  }

  /** Writes document `doc` whose distinct ids, ascending, are `dict[0 .. d)`. */
  private write(doc: number, ids: ArrayLike<number>, n: number, d: number, skip: Uint8Array | null, positions: boolean): void {
    this.clear(doc);
    if (doc >= this.start.length) {
      this.start = grown(this.start, doc + 1);
      this.bytes = grown(this.bytes, doc + 1);
    }
    const dict = this.dict;
    const width = localWidth(d);
    // Header (2 varints), the distinct ids, then a position per id at most.
    const worst = (2 + d) * MAX_VARINT_BYTES + (positions ? n * width : 0);
    const at = this.room(worst);
    const pool = this.pages[at >>> PAGE_SHIFT]!;
    const base = at & PAGE_MASK;
    for (let k = 0; k < d; k++) this.localOf[dict[k]!] = k;
    // Delta-code in place; the dictionary's byte length goes in the header so that a reader can
    // stop decoding it early and still find the positions.
    for (let k = d - 1; k > 0; k--) dict[k] = dict[k]! - dict[k - 1]!;
    const dictEnd = encodeVarints(dict, d, pool, base + 2 * MAX_VARINT_BYTES);
    const dictBytes = dictEnd - base - 2 * MAX_VARINT_BYTES;
    this.header[0] = d;
    this.header[1] = dictBytes;
    let w = encodeVarints(this.header, 2, pool, base);
    pool.copyWithin(w, dictEnd - dictBytes, dictEnd);
    w += dictBytes;
    const localOf = this.localOf;
    for (let i = 0, last = positions ? n : 0; i < last; i++) {
      const t = ids[i]!;
      if (skip !== null && skip[t] === 1) continue;
      const l = localOf[t]!;
      pool[w++] = l;
      if (width > 1) {
        pool[w++] = l >>> 8;
        if (width > 2) {
          pool[w++] = l >>> 16;
          pool[w++] = l >>> 24;
        }
      }
    }
    this.start[doc] = at;
    this.bytes[doc] = w - base;
    this.used += w - base;
    if (at >>> PAGE_SHIFT === this.cur) this.curUsed = w;
  }

  /** Writes the distinct ids of `ids[0 .. n)` ascending to {@link dict}; returns their number. */
  private distinct(ids: ArrayLike<number>, n: number): number {
    if (++this.epoch === 0xffffffff) {
      this.stamp.fill(0);
      this.epoch = 1;
    }
    const epoch = this.epoch;
    let d = 0;
    for (let i = 0; i < n; i++) {
      const t = ids[i]!;
      if (t >= this.stamp.length) {
        this.stamp = grown(this.stamp, t + 1);
        this.localOf = grown(this.localOf, t + 1);
      }
      if (this.stamp[t] === epoch) continue;
      this.stamp[t] = epoch;
      if (d === this.dict.length) this.dict = grown(this.dict, d + 1);
      this.dict[d++] = t;
    }
    this.dict.subarray(0, d).sort();
    return d;
  }

  /** Forgets document `doc`'s sequence (its range becomes garbage). */
  clear(doc: number): void {
    if (doc >= this.bytes.length) return;
    this.garbage += this.bytes[doc]!;
    this.bytes[doc] = 0;
  }

  /**
   * Document `doc`'s distinct ids and where its positions are: the view is reused by the next
   * call. An unknown or cleared document has no ids and no positions.
   */
  open(doc: number): SequenceView {
    const v = this.view;
    const len = doc < this.bytes.length ? this.bytes[doc]! : 0;
    if (len === 0) {
      v.terms = this.dict.subarray(0, 0);
      v.from = v.to = 0;
      return v;
    }
    const at = this.start[doc]!;
    const pool = (v.codes = this.pages[at >>> PAGE_SHIFT]!);
    let r = at & PAGE_MASK;
    const end = r + len;
    let d = 0;
    let dictBytes = 0;
    for (let shift = 0, b = 0x80; b >= 0x80; shift += 7) d |= ((b = pool[r++]!) & 0x7f) << shift;
    for (let shift = 0, b = 0x80; b >= 0x80; shift += 7) dictBytes |= ((b = pool[r++]!) & 0x7f) << shift;
    const positions = r + dictBytes;
    if (d > this.dict.length) this.dict = grown(this.dict, d);
    const dict = this.dict;
    let k = 0;
    let t = 0;
    while (k < d) {
      let b = pool[r++]!;
      let v7 = b & 0x7f;
      for (let shift = 7; b >= 0x80; shift += 7) v7 = (v7 | (((b = pool[r++]!) & 0x7f) << shift)) >>> 0;
      t += v7;
      dict[k++] = t;
    }
    v.terms = dict.subarray(0, k);
    v.from = positions;
    v.to = end;
    v.width = localWidth(d);
    return v;
  }

  /**
   * Whether document `doc` holds both ids `a` and `b`; fills `site` with their local indexes and
   * its positions (`from`/`to` even when not: the caller counts them as work). A proximity pair
   * asks this of every common document of two postings lists, so it writes no dictionary and
   * stops decoding at the larger id, or as soon as the smaller one is passed without a match.
   */
  locate(doc: number, a: number, b: number, site: PairSite): boolean {
    const len = doc < this.bytes.length ? this.bytes[doc]! : 0;
    if (len === 0) {
      site.from = site.to = 0;
      return false;
    }
    const at = this.start[doc]!;
    const pool = (site.codes = this.pages[at >>> PAGE_SHIFT]!);
    let r = at & PAGE_MASK;
    let d = 0;
    let dictBytes = 0;
    // The two header varints, inline: this runs once per candidate of a proximity pair.
    for (let shift = 0, b7 = 0x80; b7 >= 0x80; shift += 7) d |= ((b7 = pool[r++]!) & 0x7f) << shift;
    for (let shift = 0, b7 = 0x80; b7 >= 0x80; shift += 7) dictBytes |= ((b7 = pool[r++]!) & 0x7f) << shift;
    site.from = r + dictBytes;
    site.to = (at & PAGE_MASK) + len;
    site.width = localWidth(d);
    const lo = a < b ? a : b;
    const hi = a < b ? b : a;
    let lLo = -1;
    let t = 0;
    for (let k = 0; k < d; k++) {
      let b7 = pool[r++]!;
      let v7 = b7 & 0x7f;
      for (let shift = 7; b7 >= 0x80; shift += 7) v7 = (v7 | (((b7 = pool[r++]!) & 0x7f) << shift)) >>> 0;
      t += v7;
      if (t < lo) continue;
      if (lLo < 0) {
        if (t !== lo) return false;
        lLo = k;
      }
      if (t < hi) continue;
      if (t !== hi) return false;
      site.la = a === lo ? lLo : k;
      site.lb = a === lo ? k : lLo;
      return true;
    }
    return false;
  }

  /** Document `doc`'s distinct ids, ascending (a view valid until the next read). */
  terms(doc: number): Uint32Array {
    return this.open(doc).terms;
  }

  /** Document `doc`'s kept ids in order (a view valid until the next read). */
  get(doc: number): Uint32Array {
    const v = this.open(doc);
    const n = (v.to - v.from) / v.width;
    if (n > this.out.length) this.out = grown(this.out, n);
    const out = this.out;
    const { codes, terms, width } = v;
    for (let i = 0, q = v.from; i < n; i++, q += width) {
      let l = codes[q]!;
      if (width > 1) l |= codes[q + 1]! << 8;
      if (width > 2) l = (l | (codes[q + 2]! << 16) | (codes[q + 3]! << 24)) >>> 0;
      out[i] = terms[l]!;
    }
    return out.subarray(0, n);
  }

  /** Bytes of the live codes, of the arena's garbage and unused page room, and of the per-document tables and scratch (memory reports). */
  memoryParts(): { data: number; slack: number; tables: number } {
    const data = this.used - this.garbage;
    let arena = 0;
    // A large document's array is counted once, at its first slot (the others are views into it).
    for (const page of this.pages) if (page.byteOffset === 0) arena += page.byteLength;
    const scratch = this.dict.byteLength + this.stamp.byteLength + this.localOf.byteLength + this.out.byteLength;
    return { data, slack: arena - data, tables: this.start.byteLength + this.bytes.byteLength + scratch + this.pages.length * 8 };
  }

  /**
   * The address of `n` free bytes in one page: the current page's end, grown while it is smaller
   * than a page, else a new page (after compacting when at least half of what was written is
   * garbage), or an array of its own for a document larger than a page.
   */
  private room(n: number): number {
    if (this.curUsed + n <= this.pages[this.cur]!.length) return (this.cur << PAGE_SHIFT) | this.curUsed;
    if (this.garbage >= this.used / 2 && this.garbage > 0) {
      this.compact();
      if (this.curUsed + n <= this.pages[this.cur]!.length) return (this.cur << PAGE_SHIFT) | this.curUsed;
    }
    const page = this.pages[this.cur]!;
    if (this.curUsed + n <= PAGE_BYTES && page.byteOffset === 0 && page.length < PAGE_BYTES) {
      // 1.25x as grownTight, but never past a page: offsets in a page must stay below PAGE_BYTES.
      const next = new Uint8Array(Math.min(PAGE_BYTES, Math.max(this.curUsed + n, page.length + (page.length >>> 2))));
      next.set(page);
      this.pages[this.cur] = next;
      return (this.cur << PAGE_SHIFT) | this.curUsed;
    }
    if (n > PAGE_BYTES) return this.ownPages(n);
    this.cur = this.newSlots(1);
    this.pages[this.cur] = new Uint8Array(PAGE_BYTES);
    this.curUsed = 0;
    return this.cur << PAGE_SHIFT;
  }

  /** An array of `n` bytes (more than a page) spanning slots of its own; returns its address. */
  private ownPages(n: number): number {
    const slots = Math.ceil(n / PAGE_BYTES);
    const first = this.newSlots(slots);
    const big = new Uint8Array(n);
    for (let i = 0; i < slots; i++) this.pages[first + i] = big.subarray(i * PAGE_BYTES);
    return first << PAGE_SHIFT;
  }

  /** Appends `n` empty page slots; returns the first one's index. */
  private newSlots(n: number): number {
    const first = this.pages.length;
    if (first + n > MAX_SLOTS) throw new RangeError('sequence arena past 4 GiB: split the dataset over more shards');
    for (let i = 0; i < n; i++) this.pages.push(EMPTY_PAGE);
    return first;
  }

  /** Rewrites the live documents into fresh pages, in document order. */
  private compact(): void {
    const old = this.pages;
    const start = this.start;
    this.pages = [new Uint8Array(Math.min(PAGE_BYTES, Math.max(FIRST_PAGE_BYTES, this.used - this.garbage)))];
    this.cur = 0;
    this.curUsed = 0;
    this.used = 0;
    this.garbage = 0;
    for (let d = 0; d < this.bytes.length; d++) {
      const n = this.bytes[d]!;
      if (n === 0) continue;
      const s = start[d]!;
      const from = s & PAGE_MASK;
      start[d] = this.copyIn(old[s >>> PAGE_SHIFT]!.subarray(from, from + n));
    }
  }

  /** Stores a document's codes as they are; returns their address. */
  private copyIn(codes: Uint8Array): number {
    const at = this.room(codes.length);
    this.pages[at >>> PAGE_SHIFT]!.set(codes, at & PAGE_MASK);
    if (at >>> PAGE_SHIFT === this.cur) this.curUsed += codes.length;
    this.used += codes.length;
    return at;
  }

  /** Byte offsets (`capacity + 1` entries) and concatenated codes of documents `0 .. capacity`. */
  export(capacity: number): { offsets: Uint32Array; codes: Uint8Array } {
    const offsets = new Uint32Array(capacity + 1);
    for (let d = 0; d < capacity; d++) offsets[d + 1] = offsets[d]! + (d < this.bytes.length ? this.bytes[d]! : 0);
    const codes = new Uint8Array(offsets[capacity]!);
    for (let d = 0; d < capacity && d < this.bytes.length; d++) {
      const n = this.bytes[d]!;
      if (n === 0) continue;
      const s = this.start[d]!;
      const from = s & PAGE_MASK;
      codes.set(this.pages[s >>> PAGE_SHIFT]!.subarray(from, from + n), offsets[d]);
    }
    return { offsets, codes };
  }

  /** A store holding {@link export}'s output. */
  static restore(offsets: Uint32Array, codes: Uint8Array): SequenceStore {
    const s = new SequenceStore();
    const cap = offsets.length - 1;
    s.start = grown(s.start, Math.max(cap, 1));
    s.bytes = grown(s.bytes, Math.max(cap, 1));
    // One page's worth at a time, so that the restored arena is as tight as a built one.
    s.pages = [new Uint8Array(Math.min(PAGE_BYTES, Math.max(FIRST_PAGE_BYTES, codes.length)))];
    for (let d = 0; d < cap; d++) {
      const n = offsets[d + 1]! - offsets[d]!;
      s.bytes[d] = n;
      if (n > 0) s.start[d] = s.copyIn(codes.subarray(offsets[d], offsets[d + 1]));
    }
    return s;
  }
}
