/**
 * Term dictionary and per-term postings (doc ids ascending, term frequencies), with the per-term
 * bounds MaxScore needs. Entries of deleted docs stay until purged.
 *
 * Memory layout: most terms are rare (SciFact: 26k terms, half in one document), and a typed array
 * costs ~190 bytes of V8 objects (JSTypedArray + JSArrayBuffer + backing-store record) before its
 * first element, more than a rare term's postings. So lists of up to {@link ARENA_MAX} entries live
 * in one shared arena (a Uint32Array of doc ids and a Uint8Array of tfs indexed alike, tfs of 255
 * or more in a per-term overflow map: tf-code.ts), in slots of
 * a few size classes (~1.5x apart, so slack stays under a third); a list that outgrows its slot
 * moves to the next class and its old slot goes on that class's free list (linked through the
 * slot's first doc-id word), so freed space is reused without compaction. Longer lists own their
 * arrays, where the object overhead is a few percent of the data, with their doc ids as a u32
 * base per group and a u16 offset per entry where they fit (doc-blocks.ts), else plain u32.
 */
import { ownString } from './analyzer.js';
import { grown, grownTight } from './grow.js';
import { appendNarrow, decodeNarrow, encodeNarrow, NARROW_MIN_ENTRIES, narrowShift, zeroLows, type BlockDocs } from './doc-blocks.js';
import { arrayBytes, mapBytes, stringBytes, TYPED_ARRAY_OVERHEAD, type MemoryParts } from './memory-report.js';
import { overflowTf, TF_OVERFLOW, type TfOverflow } from './tf-code.js';

/** Largest stored term frequency; a chunk repeating one term more often is clamped (saturated anyway). */
export const MAX_TF = 0xffff;

/** log2 of the postings per block of the block-max bounds (128: Lucene's and PISA's choice). */
export const BLOCK_SHIFT = 7;

/** Slot capacities of the arena size classes; class 0 is "no slot" (an empty list). */
const CLASS_CAP = [0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512];
const TOP_CLASS = CLASS_CAP.length - 1;
/** Longest list kept in the arena; longer ones own their arrays. */
export const ARENA_MAX = CLASS_CAP[TOP_CLASS]!;
/** Class of a list that owns its arrays, doc ids plain u32. */
const OWN = 255;
/** Class of a list that owns its arrays, doc ids as bases and u16 offsets (doc-blocks.ts). */
const NARROW = 254;
/** End of a free list. */
const NIL = 0xffffffff;

const NO_BLOCKS_U32 = new Uint32Array(0);
const NO_BLOCKS_F64 = new Float64Array(0);
const NO_DOCS = new Uint32Array(0);
const NO_TFS = new Uint8Array(0);
const NO_LOWS = new Uint16Array(0);

/** Smallest arena class holding `n` entries (n <= ARENA_MAX). */
function classFor(n: number): number {
  let c = 0;
  while (CLASS_CAP[c]! < n) c++;
  return c;
}

/** Postings of one shard; the index owns document state, this owns everything per term. */
export class PostingsStore {
  /** Term string -> term id. */
  readonly termIds = new Map<string, number>();
  /** Term id -> term string. */
  readonly terms: string[] = [];
  /** Per term: valid entries (live and tombstoned). */
  len = new Uint32Array(64);
  /** Per term: live documents containing it (kept exact on delete through the forward index). */
  df = new Uint32Array(64);
  /** Per term: max tf over its entries (an upper bound between purges; kept in snapshots for diagnostics). */
  maxTf = new Uint16Array(64);
  /** Per term: min length of a doc in its entries (a lower bound between purges). */
  minDl = new Uint32Array(64);
  /** Per term: arena size class, or {@link OWN} / {@link NARROW} when the list has its own arrays. */
  private cls = new Uint8Array(64);
  /** Per term: offset of its arena slot (meaningless for class 0 and OWN). */
  private off = new Uint32Array(64);
  /** Arena of doc ids; a free slot's first word links to the next free slot of its class. */
  private arenaDocs = new Uint32Array(1024);
  /** Arena of term frequencies, indexed like {@link arenaDocs}. */
  private arenaTfs = new Uint8Array(1024);
  /** Arena words handed out so far (free slots included). */
  private arenaUsed = 0;
  /** Head of each class's free-slot list. */
  private readonly freeHead = new Uint32Array(CLASS_CAP.length).fill(NIL);
  /** Own doc ids of OWN terms, group bases of NARROW ones (NO_DOCS for arena terms): a holey array would cost as much. */
  private ownDocs: Uint32Array[] = [];
  /** Doc-id offsets from their group's base of NARROW terms (NO_LOWS for the others). */
  private ownLows: Uint16Array[] = [];
  /** Per NARROW term: log2 of its group size (0 for the others: their doc ids read as bases). */
  private shift = new Uint8Array(64);
  /** Own term frequencies of OWN terms, aligned with {@link ownDocs}. */
  private ownTfs: Uint8Array[] = [];
  /** Per term with a tf of 255 or more: doc id -> exact tf of those postings (see tf-code.ts). */
  private readonly big = new Map<number, Map<number, number>>();
  /** 1 when a recycled (smaller) doc id was appended after larger ones and the list needs sorting. */
  private unsorted = new Uint8Array(64);
  /**
   * Per term: the average doc length A at which `satMax` was computed, 0 when unknown. The
   * saturation tf / (tf + k1 (1 - b + b dl / A)) only grows with A, so a bound computed at
   * A >= the query's avgdl stays valid; 10% headroom keeps a growing corpus from recomputing.
   */
  private satAvgdl = new Float64Array(64);
  /** Per term: max saturation over its entries at `satAvgdl` (valid once `covered[t] === len[t]`). */
  private satMax = new Float64Array(64);
  /**
   * Block-max bounds, computed lazily at query time and only for queried terms: block j holds
   * entries `j * 128 .. j * 128 + 127`; `blockLast[t][j]` is its last doc id and `blockMax[t][j]`
   * its max saturation at `satAvgdl[t]`. Entries before `covered[t]` have valid blocks; appends
   * only extend the tail, so a search recomputes at most the last partial block plus new ones.
   */
  blockLast: Uint32Array[] = [];
  /** See {@link blockLast}. */
  blockMax: Float64Array[] = [];
  private covered = new Uint32Array(64);
  private live = 0;

  /** A store for BM25 parameters k1 and b (needed for the cached per-term bounds). */
  constructor(
    private readonly k1: number,
    private readonly b: number,
  ) {}

  /** Number of terms in the dictionary (terms whose documents were all deleted stay, with df 0). */
  get size(): number {
    return this.terms.length;
  }

  /** Number of terms with df > 0 (in at least one live document). */
  get liveTerms(): number {
    return this.live;
  }

  /** Id of `term`, creating an empty entry when new. */
  intern(term: string): number {
    const known = this.termIds.get(term);
    if (known !== undefined) return known;
    const t = this.terms.length;
    // The dictionary keeps the string for good: copy it so it cannot pin a document's text.
    const own = ownString(term);
    this.terms.push(own);
    this.termIds.set(own, t);
    this.ownDocs.push(NO_DOCS);
    this.ownLows.push(NO_LOWS);
    this.ownTfs.push(NO_TFS);
    this.blockLast.push(NO_BLOCKS_U32);
    this.blockMax.push(NO_BLOCKS_F64);
    const need = t + 1;
    if (need > this.len.length) {
      this.len = grown(this.len, need);
      this.df = grown(this.df, need);
      this.maxTf = grown(this.maxTf, need);
      this.cls = grown(this.cls, need);
      this.shift = grown(this.shift, need);
      this.off = grown(this.off, need);
      this.unsorted = grown(this.unsorted, need);
      this.covered = grown(this.covered, need);
      this.satAvgdl = grown(this.satAvgdl, need);
      this.satMax = grown(this.satMax, need);
      const old = this.minDl.length;
      this.minDl = grown(this.minDl, need);
      this.minDl.fill(0xffffffff, old);
    }
    return t;
  }

  /**
   * Term t's doc ids (`len[t]` entries): a view into the arena or its own array (do not keep
   * across writes), or for a NARROW list a decoded copy (so not for the query path: read
   * {@link basesOf}, {@link shiftOf} and {@link lowsOf} there).
   */
  docsOf(t: number): Uint32Array {
    const c = this.cls[t]!;
    if (c === NARROW) return decodeNarrow(this.ownDocs[t]!, this.shift[t]!, this.ownLows[t]!, this.len[t]!, new Uint32Array(this.len[t]!));
    if (c === OWN) return this.ownDocs[t]!.subarray(0, this.len[t]);
    return this.basesOf(t);
  }

  /** Term t's doc-id bases as doc-blocks.ts reads them: the group bases of a NARROW list, else its doc ids (same lifetime rule as {@link docsOf}). */
  basesOf(t: number): Uint32Array {
    const c = this.cls[t]!;
    if (c === OWN || c === NARROW) return this.ownDocs[t]!;
    return c === 0 ? NO_DOCS : this.arenaDocs.subarray(this.off[t], this.off[t]! + this.len[t]!);
  }

  /** Term t's doc-id offsets (shared zeros unless NARROW), aligned with {@link tfsOf}. */
  lowsOf(t: number): Uint16Array {
    return this.cls[t] === NARROW ? this.ownLows[t]! : zeroLows(this.len[t]!);
  }

  /** Term t's doc ids for reading in place (same lifetime rule as {@link docsOf}). */
  blockDocs(t: number): BlockDocs {
    return { bases: this.basesOf(t), shift: this.shift[t]!, lows: this.lowsOf(t), n: this.len[t]! };
  }

  /** log2 of term t's doc-id group size (0: {@link basesOf} holds the doc ids themselves). */
  shiftOf(t: number): number {
    return this.shift[t]!;
  }

  /** Term t's stored term frequencies, aligned with {@link docsOf} (same lifetime rule; see {@link overflowOf}). */
  tfsOf(t: number): Uint8Array {
    const c = this.cls[t]!;
    if (c === OWN || c === NARROW) return this.ownTfs[t]!.subarray(0, this.len[t]);
    return c === 0 ? NO_TFS : this.arenaTfs.subarray(this.off[t], this.off[t]! + this.len[t]!);
  }

  /** Term t's overflow map (doc -> exact tf where {@link tfsOf} holds TF_OVERFLOW), or null when it has none. */
  overflowOf(t: number): TfOverflow | null {
    return this.big.get(t) ?? null;
  }

  /** Term t's exact term frequencies, aligned with {@link docsOf} (a copy: snapshots and tests). */
  exactTfsOf(t: number): Uint16Array {
    const docs = this.docsOf(t);
    const tfs = this.tfsOf(t);
    const out = Uint16Array.from(tfs);
    const big = this.overflowOf(t);
    for (let i = 0; i < out.length; i++) if (out[i] === TF_OVERFLOW) out[i] = overflowTf(big, docs[i]!);
    return out;
  }

  /** Notes a tf of 255 or more of `doc` in term t's overflow map; returns the byte to store. */
  private overflow(t: number, doc: number, tf: number): number {
    let big = this.big.get(t);
    if (big === undefined) this.big.set(t, (big = new Map()));
    big.set(doc, tf);
    return TF_OVERFLOW;
  }

  /** Appends (doc, tf) to term t for a new live doc of length `dl`. */
  append(t: number, doc: number, tf: number, dl: number): void {
    const n = this.len[t]!;
    let c = this.cls[t]!;
    let relayout = false;
    if (c === OWN || c === NARROW ? n === this.ownTfs[t]!.length : n === CLASS_CAP[c]) c = this.resize(t, n + 1);
    if (c === NARROW && !this.appendNarrow(t, n, doc, tf)) {
      // Out of its group's range: appended as plain u32, then coded again at a shift that fits.
      this.widen(t);
      c = OWN;
      relayout = true;
    }
    if (c === OWN) {
      const docs = this.ownDocs[t]!;
      if (n > 0 && docs[n - 1]! > doc) this.unsorted[t] = 1;
      docs[n] = doc;
      this.ownTfs[t]![n] = tf < TF_OVERFLOW ? tf : this.overflow(t, doc, tf);
    } else if (c !== NARROW) {
      const at = this.off[t]! + n;
      if (n > 0 && this.arenaDocs[at - 1]! > doc) this.unsorted[t] = 1;
      this.arenaDocs[at] = doc;
      this.arenaTfs[at] = tf < TF_OVERFLOW ? tf : this.overflow(t, doc, tf);
    }
    this.len[t] = n + 1;
    // At most one re-coding per shift given up (7 to 2), then plain until the list grows 1.25x.
    if (relayout) this.narrowIfFits(t);
    if (this.df[t]!++ === 0) this.live++;
    // Bounds only ever loosen between purges, so they stay valid bounds after deletes.
    if (tf > this.maxTf[t]!) this.maxTf[t] = tf;
    if (dl < this.minDl[t]!) this.minDl[t] = dl;
  }

  /** Appends (doc, tf) as entry n of NARROW term t; false (nothing written) when doc is out of its group's range. */
  private appendNarrow(t: number, n: number, doc: number, tf: number): boolean {
    const bases = this.ownDocs[t]!;
    const sh = this.shift[t]!;
    const lows = this.ownLows[t]!;
    const prev = n > 0 ? bases[(n - 1) >>> sh]! + lows[n - 1]! : 0;
    if (!appendNarrow(bases, sh, lows, n, doc)) return false;
    if (doc < prev) this.unsorted[t] = 1;
    this.ownTfs[t]![n] = tf < TF_OVERFLOW ? tf : this.overflow(t, doc, tf);
    return true;
  }

  /** One live document containing term t was deleted (its entry stays until purged). */
  release(t: number): void {
    if (--this.df[t]! === 0) this.live--;
  }

  /** Arena words in use and arena capacity (diagnostics and tests). */
  arenaStats(): { used: number; capacity: number; ownLists: number; narrowLists: number } {
    let ownLists = 0;
    let narrowLists = 0;
    for (let t = 0; t < this.terms.length; t++) {
      if (this.cls[t] === OWN) ownLists++;
      if (this.cls[t] === NARROW) narrowLists++;
    }
    return { used: this.arenaUsed, capacity: this.arenaDocs.length, ownLists: ownLists + narrowLists, narrowLists };
  }

  /**
   * Bytes of the postings (doc ids and tfs of valid entries), their slack (arena free slots, unused
   * slot tails and the arena's unused end; own arrays' growth room), the own arrays' object
   * headers, the lazily built block-max bounds and the term dictionary (strings, map, per-term
   * arrays). Estimates as {@link MemoryParts} says.
   */
  memoryParts(): MemoryParts {
    const T = this.terms.length;
    let entries = 0;
    let ownEntries = 0;
    let ownCap = 0;
    let ownLists = 0;
    let narrowLists = 0;
    let narrowEntries = 0;
    let narrowCap = 0;
    let narrowBases = 0;
    let narrowBaseCap = 0;
    let blocks = 0;
    let blockArrays = 0;
    let strings = 0;
    for (let t = 0; t < T; t++) {
      entries += this.len[t]!;
      if (this.cls[t] === OWN) {
        ownEntries += this.len[t]!;
        ownCap += this.ownDocs[t]!.length;
        ownLists++;
      } else if (this.cls[t] === NARROW) {
        narrowLists++;
        narrowEntries += this.len[t]!;
        narrowCap += this.ownLows[t]!.length;
        narrowBases += (this.len[t]! + (1 << this.shift[t]!) - 1) >>> this.shift[t]!;
        narrowBaseCap += this.ownDocs[t]!.length;
      }
      if (this.blockLast[t]!.length > 0) {
        blocks += this.blockLast[t]!.byteLength + this.blockMax[t]!.byteLength;
        blockArrays += 2;
      }
      strings += stringBytes(this.terms[t]!);
    }
    const perTerm = [this.len, this.df, this.maxTf, this.minDl, this.cls, this.shift, this.off, this.unsorted, this.satAvgdl, this.satMax, this.covered];
    let perTermBytes = 0;
    for (const a of perTerm) perTermBytes += a.byteLength;
    const arenaEntries = this.arenaDocs.length;
    let overflow = mapBytes(this.big.size);
    for (const m of this.big.values()) overflow += mapBytes(m.size);
    return {
      'postings doc ids': (entries - narrowEntries) * 4 + narrowEntries * 2 + narrowBases * 4,
      'postings tfs': entries,
      'postings tf overflow': overflow,
      // Arena: free slots, unused slot tails and the unused end; own arrays: growth room.
      'postings slack (arena)': (arenaEntries - (entries - ownEntries - narrowEntries)) * 5,
      'postings slack (own arrays)': (ownCap - ownEntries) * 5 + (narrowCap - narrowEntries) * 3 + (narrowBaseCap - narrowBases) * 4,
      'postings own-array headers': (ownLists * 2 + narrowLists * 3) * TYPED_ARRAY_OVERHEAD,
      'block-max bounds': blocks + blockArrays * TYPED_ARRAY_OVERHEAD,
      // Strings, the string -> id map, per-term typed arrays and the four per-term JS arrays.
      'term dictionary': strings + mapBytes(this.termIds.size) + arrayBytes(T) * 5 + perTermBytes,
    };
  }

  /**
   * Moves term t's `len[t]` entries to storage for at least `need` entries: the smallest arena
   * class that fits, else own arrays with 1.25x room (past the arena a list is long; 1.5x left a
   * fifth of the own arrays' bytes unused at 1M chunks, and copies stay amortised O(1)), narrow
   * when its doc ids allow. Own lists that shrank to arena size move back. Returns the new class.
   */
  private resize(t: number, need: number): number {
    const n = this.len[t]!;
    const from = this.cls[t]!;
    const to = need <= ARENA_MAX ? classFor(need) : OWN;
    if (to === OWN) {
      const cap = Math.max(need, n + (n >>> 2));
      const tfs = new Uint8Array(cap);
      tfs.set(this.tfsOf(t));
      const src = this.off[t]!;
      this.ownTfs[t] = tfs;
      if (from === NARROW) {
        // Its entries fit its shift: copied as they are (a new look at the layout, decoding
        // and scanning the list, cost 4% more indexing CPU at 1M chunks).
        this.growNarrow(t, cap);
        return NARROW;
      }
      this.setOwnDocs(t, this.docsOf(t), n, cap);
      // Freeing writes the slot's first word: only once its doc ids are copied.
      if (from !== OWN && from !== NARROW && from !== 0) this.freeSlot(from, src);
      return this.cls[t]!;
    }
    const o = to === 0 ? 0 : this.allocSlot(to); // may reallocate the arena: read it after
    if (from === OWN || from === NARROW) {
      this.arenaDocs.set(this.docsOf(t), o);
      this.arenaTfs.set(this.ownTfs[t]!.subarray(0, n), o);
      this.ownDocs[t] = NO_DOCS;
      this.ownLows[t] = NO_LOWS;
      this.ownTfs[t] = NO_TFS;
      this.shift[t] = 0;
    } else if (from !== 0) {
      const src = this.off[t]!;
      this.arenaDocs.copyWithin(o, src, src + n);
      this.arenaTfs.copyWithin(o, src, src + n);
      this.freeSlot(from, src);
    }
    this.off[t] = o;
    this.cls[t] = to;
    return to;
  }

  /**
   * Gives term t own doc-id arrays for `cap` entries holding `docs[0 .. n)` (which must not be
   * a view of them): NARROW at the largest shift that fits when the list is sorted, else plain
   * u32 (OWN). Returns the class.
   */
  private setOwnDocs(t: number, docs: Uint32Array, n: number, cap: number): number {
    const sh = this.unsorted[t] === 1 || cap < NARROW_MIN_ENTRIES ? -1 : narrowShift(docs, n);
    if (sh < 0) {
      const own = new Uint32Array(cap);
      own.set(docs.subarray(0, n));
      this.ownDocs[t] = own;
      this.ownLows[t] = NO_LOWS;
      this.shift[t] = 0;
      this.cls[t] = OWN;
      return OWN;
    }
    const bases = new Uint32Array((cap + (1 << sh) - 1) >>> sh);
    const lows = new Uint16Array(cap);
    encodeNarrow(docs, n, sh, bases, lows);
    this.ownDocs[t] = bases;
    this.ownLows[t] = lows;
    this.shift[t] = sh;
    this.cls[t] = NARROW;
    return NARROW;
  }

  /** Moves NARROW term t's bases and offsets to arrays for `cap` entries, same shift. */
  private growNarrow(t: number, cap: number): void {
    const sh = this.shift[t]!;
    const bases = new Uint32Array((cap + (1 << sh) - 1) >>> sh);
    bases.set(this.ownDocs[t]!.subarray(0, Math.min(bases.length, this.ownDocs[t]!.length)));
    const lows = new Uint16Array(cap);
    lows.set(this.ownLows[t]!.subarray(0, this.len[t]));
    this.ownDocs[t] = bases;
    this.ownLows[t] = lows;
  }

  /** Turns a NARROW list into plain u32 doc ids of the same capacity. */
  private widen(t: number): void {
    const cap = this.ownLows[t]!.length;
    this.ownDocs[t] = decodeNarrow(this.ownDocs[t]!, this.shift[t]!, this.ownLows[t]!, this.len[t]!, new Uint32Array(cap));
    this.ownLows[t] = NO_LOWS;
    this.shift[t] = 0;
    this.cls[t] = OWN;
  }

  /** Codes an OWN list NARROW when its (sorted) doc ids fit, keeping its capacity. */
  private narrowIfFits(t: number): void {
    if (this.cls[t] !== OWN) return;
    const docs = this.ownDocs[t]!;
    this.setOwnDocs(t, docs, this.len[t]!, docs.length);
  }

  /** A slot of class c: the head of its free list, else fresh space at the arena's end. */
  private allocSlot(c: number): number {
    const head = this.freeHead[c]!;
    if (head !== NIL) {
      this.freeHead[c] = this.arenaDocs[head]!;
      return head;
    }
    const o = this.arenaUsed;
    const end = o + CLASS_CAP[c]!;
    if (end > this.arenaDocs.length) {
      this.arenaDocs = grownTight(this.arenaDocs, end);
      this.arenaTfs = grownTight(this.arenaTfs, end);
    }
    this.arenaUsed = end;
    return o;
  }

  /** Returns a slot of class c to its free list. */
  private freeSlot(c: number, o: number): void {
    this.arenaDocs[o] = this.freeHead[c]!;
    this.freeHead[c] = o;
  }

  /**
   * Gives back growth room, as a snapshot load lays lists out: the arena rewritten without free
   * slots or unused end (each list keeps its slot class), own arrays cut to their entries. Costs a
   * copy of every list; the next appends grow storage again as usual (bench/README.md: ~30 MiB at
   * 1M chunks). Views from {@link docsOf} and the like are stale after it.
   */
  compactStorage(): void {
    const T = this.terms.length;
    let words = 0;
    for (let t = 0; t < T; t++) {
      const c = this.cls[t]!;
      if (c !== OWN && c !== NARROW) words += CLASS_CAP[c]!;
    }
    const docs = new Uint32Array(words);
    const tfs = new Uint8Array(words);
    let o = 0;
    for (let t = 0; t < T; t++) {
      const c = this.cls[t]!;
      const n = this.len[t]!;
      if (c === OWN || c === NARROW) {
        if (this.ownTfs[t]!.length > n) this.ownTfs[t] = this.ownTfs[t]!.slice(0, n);
        if (c === OWN) {
          if (this.ownDocs[t]!.length > n) this.ownDocs[t] = this.ownDocs[t]!.slice(0, n);
        } else {
          const sh = this.shift[t]!;
          const groups = (n + (1 << sh) - 1) >>> sh;
          if (this.ownDocs[t]!.length > groups) this.ownDocs[t] = this.ownDocs[t]!.slice(0, groups);
          if (this.ownLows[t]!.length > n) this.ownLows[t] = this.ownLows[t]!.slice(0, n);
        }
        continue;
      }
      if (c === 0) continue;
      const from = this.off[t]!;
      docs.set(this.arenaDocs.subarray(from, from + n), o);
      tfs.set(this.arenaTfs.subarray(from, from + n), o);
      this.off[t] = o;
      o += CLASS_CAP[c]!;
    }
    this.arenaDocs = docs;
    this.arenaTfs = tfs;
    this.arenaUsed = words;
    this.freeHead.fill(NIL);
  }

  /** Reserves arena room for `words` more entries (bulk loads: one allocation instead of many). */
  reserveArena(words: number): void {
    this.arenaDocs = grown(this.arenaDocs, this.arenaUsed + words);
    this.arenaTfs = grown(this.arenaTfs, this.arenaUsed + words);
  }

  /**
   * Brings term t's block-max bounds up to date for a query with average length `avgdl` and
   * returns the list-wide bound of tf / (tf + k1 (1 - b + b dl / avgdl)). The saturation only
   * grows with the average length, so bounds computed at A >= avgdl stay valid; A is set 10%
   * above avgdl so that a growing corpus does not rescan lists on every query. Only entries
   * appended since the last call are scanned (plus the rest of their first block).
   */
  ensureBounds(t: number, avgdl: number, docLen: Uint32Array): number {
    if (this.satAvgdl[t]! < avgdl) {
      this.satAvgdl[t] = avgdl * 1.1;
      this.satMax[t] = 0;
      this.covered[t] = 0;
    }
    const n = this.len[t]!;
    const from = this.covered[t]!;
    if (from === n) return this.satMax[t]!;
    const blocks = (n + (1 << BLOCK_SHIFT) - 1) >>> BLOCK_SHIFT;
    let last = this.blockLast[t]!;
    let max = this.blockMax[t]!;
    if (last.length < blocks) {
      last = this.blockLast[t] = grown(last, blocks);
      max = this.blockMax[t] = grown(max, blocks);
    }
    const base = this.k1 * (1 - this.b);
    const scale = (this.k1 * this.b) / this.satAvgdl[t]!;
    let all = this.satMax[t]!;
    const big = this.overflowOf(t);
    const bases = this.basesOf(t);
    const sh = this.shift[t]!;
    const lows = this.lowsOf(t);
    const tfs = this.tfsOf(t);
    for (let j = from >>> BLOCK_SHIFT; j < blocks; j++) {
      const end = Math.min(n, (j + 1) << BLOCK_SHIFT);
      let m = 0;
      for (let i = j << BLOCK_SHIFT; i < end; i++) {
        const doc = bases[i >>> sh]! + lows[i]!;
        let tf = tfs[i]!;
        if (tf === TF_OVERFLOW) tf = overflowTf(big, doc);
        const sat = tf / (tf + base + scale * docLen[doc]!);
        if (sat > m) m = sat;
      }
      last[j] = bases[(end - 1) >>> sh]! + lows[end - 1]!;
      max[j] = m;
      if (m > all) all = m;
    }
    this.satMax[t] = all;
    this.covered[t] = n;
    return all;
  }

  /** Drops entries of docs that are not alive and recomputes term t's bounds from what remains. */
  purge(t: number, alive: Uint8Array, docLen: Uint32Array): void {
    // A NARROW list is purged as plain u32 ids and coded again once it is (sorted) as before.
    if (this.cls[t] === NARROW) this.widen(t);
    const docs = this.docsOf(t);
    const tfs = this.tfsOf(t);
    const n = this.len[t]!;
    const big = this.big.get(t) ?? null;
    let w = 0;
    let maxTf = 0;
    let minDl = 0xffffffff;
    for (let r = 0; r < n; r++) {
      const d = docs[r]!;
      const code = tfs[r]!;
      if (alive[d] !== 1) {
        // The id may be recycled for another document: its overflow entry goes with its posting.
        if (code === TF_OVERFLOW) big!.delete(d);
        continue;
      }
      const tf = code === TF_OVERFLOW ? overflowTf(big, d) : code;
      docs[w] = d;
      tfs[w] = code;
      w++;
      if (tf > maxTf) maxTf = tf;
      const dl = docLen[d]!;
      if (dl < minDl) minDl = dl;
    }
    this.len[t] = w;
    if (big !== null && big.size === 0) this.big.delete(t);
    this.maxTf[t] = maxTf;
    this.minDl[t] = minDl;
    this.satAvgdl[t] = 0;
    if (w === 0) {
      this.blockLast[t] = NO_BLOCKS_U32;
      this.blockMax[t] = NO_BLOCKS_F64;
    }
    // Give memory back when a list shrank a lot (a term that mostly lived in deleted docs): a
    // smaller arena class, back into the arena, or a trimmed own array.
    const c = this.cls[t]!;
    if (c === OWN) {
      const cap = this.ownDocs[t]!.length;
      if (w <= ARENA_MAX || w * 4 < cap) this.shrinkOwn(t, w);
      else this.narrowIfFits(t);
    } else if (c !== 0 && classFor(w) < c) {
      this.resize(t, w);
    }
  }

  /** Moves an own list of `w` entries into the arena, or into own arrays of 2w entries. */
  private shrinkOwn(t: number, w: number): void {
    if (w <= ARENA_MAX) {
      this.resize(t, w);
      return;
    }
    this.ownTfs[t] = this.ownTfs[t]!.slice(0, w * 2);
    this.setOwnDocs(t, this.ownDocs[t]!, w, w * 2);
  }

  /** Restores ascending doc order of term t if recycled ids were appended out of order. */
  ensureSorted(t: number): void {
    if (this.unsorted[t] !== 1) return;
    if (this.cls[t] === NARROW) this.widen(t);
    const n = this.len[t]!;
    const docs = this.docsOf(t);
    const tfs = this.tfsOf(t);
    // Pack (doc, stored tf) into one float so a native numeric sort moves both: doc < 2^32, tf < 2^16.
    const keys = new Float64Array(n);
    for (let i = 0; i < n; i++) keys[i] = docs[i]! * 65536 + tfs[i]!;
    keys.sort();
    for (let i = 0; i < n; i++) {
      const k = keys[i]!;
      const d = Math.floor(k / 65536);
      docs[i] = d;
      tfs[i] = k - d * 65536;
    }
    this.unsorted[t] = 0;
    this.satAvgdl[t] = 0; // blocks hold other entries now
    this.narrowIfFits(t);
  }

  /** Installs term t's postings from a snapshot (sorted, purged, exact tfs) with its df and bounds; t must be empty. */
  load(t: number, docs: Uint32Array, tfs: Uint16Array, df: number, maxTf: number, minDl: number): void {
    const n = docs.length;
    this.len[t] = 0;
    this.unsorted[t] = 0;
    let codes: Uint8Array;
    let at = 0;
    if (n > ARENA_MAX) {
      // Exact-size own arrays: a loaded list grows only if written to.
      this.ownTfs[t] = codes = new Uint8Array(n);
      this.setOwnDocs(t, docs, n, n);
    } else {
      this.resize(t, n);
      if (n > 0) this.arenaDocs.set(docs, this.off[t]);
      codes = this.arenaTfs;
      at = this.off[t]!;
    }
    for (let i = 0; i < n; i++) {
      const tf = tfs[i]!;
      codes[at + i] = tf < TF_OVERFLOW ? tf : this.overflow(t, docs[i]!, tf);
    }
    this.len[t] = n;
    if (this.df[t]! === 0 && df > 0) this.live++;
    this.df[t] = df;
    this.maxTf[t] = maxTf;
    this.minDl[t] = minDl;
    this.unsorted[t] = 0;
    this.satAvgdl[t] = 0;
  }

  /** Arena words a list of `n` entries takes when loaded (0 for own arrays), for {@link reserveArena}. */
  static arenaWords(n: number): number {
    return n > ARENA_MAX ? 0 : CLASS_CAP[classFor(n)]!;
  }
}
