/**
 * Each chunk's typo-vocabulary word ids (what uncounting the chunk needs when it changes), kept
 * as the difference from what its BM25 terms predict instead of in full.
 *
 * A chunk's words are nearly the surface forms of its BM25 terms (a stem comes from mostly one
 * word), so each term gets a "usual word" the first time a chunk holding it is counted, and a
 * chunk stores only its exceptions: its words that are not the usual word of one of its terms
 * (extra), and usual words of its terms it does not hold (missing). Uncounting rebuilds the words
 * as (usual words of its terms - missing) + extra: exact as long as the usual word of every term
 * of a counted chunk stays what it was when the chunk was counted. It is therefore changed only
 * for a term no other live chunk holds (document frequency 1 while the new chunk is counted: a
 * chunk is uncounted before it leaves the BM25 index, so every counted chunk is still in it).
 * Ids are arithmetic only: a usual word whose vocabulary id was freed and reused by another word
 * still rebuilds the same ids (a chunk holding neither lists it as missing).
 *
 * On the 1M synthetic corpus nearly every chunk has no exception, so the store costs its
 * per-chunk tables (8 bytes) instead of ~80 bytes of coded ids (bench/README.md).
 */
import { SequenceStore } from '../bm25/sequence-store.js';
import { grown } from '../bm25/grow.js';

/** What {@link ChunkWords} reads of the BM25 index (`Bm25Index` implements it). */
export interface ChunkTerms {
  /** Distinct term ids of a live chunk (a view valid until the index's next sequence read). */
  docTermIds(id: number): Uint32Array;
  /** Live chunks holding term `t`. */
  termDocFreq(t: number): number;
  /** Term id of a word as the index analyzes it when it makes exactly one term it holds, else -1. */
  termIdOfWord(word: string): number;
}

/** What {@link ChunkWords} reads of the typo vocabulary (`Vocabulary` implements it). */
export interface WordNames {
  /** The word of a live vocabulary id. */
  wordOf(w: number): string;
}

/** `usual[t]`: no word chosen yet. */
const UNSET = 0;
/** `usual[t]`: chosen, and no word of the chunk that chose it makes term t (a number, a cut word). */
const NONE = 0xffffffff;

/** Per chunk: its vocabulary word ids, as exceptions to its terms' usual words. */
export class ChunkWords {
  /** Per term id: its usual word's vocabulary id + 1, {@link UNSET} or {@link NONE}. */
  private usual = new Uint32Array(1024);
  /** Per chunk: sorted codes, word id << 1 for an extra word, | 1 for a missing usual word. */
  private readonly exceptions = new SequenceStore();
  /** Per chunk: 1 when its words are counted (a chunk may have no exception, or no word). */
  private counted = new Uint8Array(64);
  /** Scratch by word id: epoch when in the chunk's words, and when among its terms' usual words. */
  private inWords = new Uint32Array(1024);
  private inUsual = new Uint32Array(1024);
  /** Scratch by term id: epoch when the term's usual word is to be chosen by this chunk. */
  private choosing = new Uint32Array(1024);
  private epoch = 0;
  private codes = new Uint32Array(64);
  private out = new Uint32Array(256);
  private readonly open: number[] = [];

  /** Whether chunk `id`'s words are counted. */
  has(id: number): boolean {
    return id < this.counted.length && this.counted[id] === 1;
  }

  /**
   * Records chunk `id`'s distinct word ids `words` (just counted); the BM25 index must hold the
   * chunk already. `vocabulary` names a word id (to find the term of a word when a term's usual
   * word is chosen).
   */
  set(id: number, words: ArrayLike<number>, terms: ChunkTerms, vocabulary: WordNames): void {
    const epoch = this.nextEpoch();
    const n = words.length;
    let maxWord = 0;
    for (let i = 0; i < n; i++) if (words[i]! > maxWord) maxWord = words[i]!;
    this.reserveWords(maxWord + 1);
    const { inWords } = this;
    for (let i = 0; i < n; i++) inWords[words[i]!] = epoch;
    const ts = terms.docTermIds(id);
    const open = this.open;
    open.length = 0;
    for (let j = 0; j < ts.length; j++) {
      const t = ts[j]!;
      if (t >= this.usual.length) this.reserveTerms(t + 1);
      let u = this.usual[t]!;
      // Only this chunk holds t: nothing counted depends on its usual word, which may be chosen again.
      if (u !== UNSET && (u === NONE || inWords[u - 1] !== epoch) && terms.termDocFreq(t) === 1) u = this.usual[t] = UNSET;
      if (u === UNSET) {
        open.push(t);
        this.choosing[t] = epoch;
      } else if (u !== NONE) {
        this.markUsual(u - 1, epoch);
      }
    }
    if (open.length > 0) {
      for (let i = 0; i < n; i++) {
        const w = words[i]!;
        if (this.inUsual[w] === epoch) continue;
        const t = terms.termIdOfWord(vocabulary.wordOf(w));
        if (t < 0 || t >= this.usual.length || this.choosing[t] !== epoch || this.usual[t] !== UNSET) continue;
        this.usual[t] = w + 1;
        this.inUsual[w] = epoch;
      }
      for (const t of open) if (this.usual[t] === UNSET) this.usual[t] = NONE;
    }
    let c = 0;
    for (let i = 0; i < n; i++) {
      const w = words[i]!;
      if (this.inUsual[w] !== epoch) c = this.push(c, w << 1);
    }
    // The terms again (the index's view is still valid: nothing read it since).
    for (let j = 0; j < ts.length; j++) {
      const u = this.usual[ts[j]!]!;
      if (u === UNSET || u === NONE) continue;
      const w = u - 1;
      if (inWords[w] === epoch || this.inUsual[w] !== epoch) continue;
      this.inUsual[w] = epoch - 1; // listed once
      c = this.push(c, ((w << 1) | 1) >>> 0);
    }
    if (c === 0) this.exceptions.clear(id);
    else this.exceptions.set(id, this.codes, c, null, false);
    if (id >= this.counted.length) this.counted = grown(this.counted, id + 1);
    this.counted[id] = 1;
  }

  /**
   * Chunk `id`'s distinct word ids as recorded by {@link set}, ascending (empty when not counted):
   * a view valid until the next call. The BM25 index must still hold the chunk. Ascending as the
   * ids were stored in full before: uncounting frees vocabulary ids in the same order (so later
   * words get the same ids), and snapshots stay byte for byte the same.
   */
  wordIds(id: number, terms: ChunkTerms): Uint32Array {
    if (!this.has(id)) return this.out.subarray(0, 0);
    const epoch = this.nextEpoch();
    const ex = this.exceptions.terms(id);
    let max = 0;
    for (let k = 0; k < ex.length; k++) if (ex[k]! >>> 1 > max) max = ex[k]! >>> 1;
    this.reserveWords(max + 1);
    // inWords marks a word that is missing or already written.
    for (let k = 0; k < ex.length; k++) if ((ex[k]! & 1) === 1) this.inWords[ex[k]! >>> 1] = epoch;
    const ts = terms.docTermIds(id);
    let o = 0;
    for (let j = 0; j < ts.length; j++) {
      const t = ts[j]!;
      const u = t < this.usual.length ? this.usual[t]! : UNSET;
      if (u === UNSET || u === NONE) continue;
      const w = u - 1;
      if (w >= this.inWords.length) this.reserveWords(w + 1);
      if (this.inWords[w] === epoch) continue;
      this.inWords[w] = epoch;
      o = this.emit(o, w);
    }
    for (let k = 0; k < ex.length; k++) if ((ex[k]! & 1) === 0) o = this.emit(o, ex[k]! >>> 1);
    return this.out.subarray(0, o).sort();
  }

  /** Forgets chunk `id` (after its words were uncounted). */
  clear(id: number): void {
    if (!this.has(id)) return;
    this.counted[id] = 0;
    this.exceptions.clear(id);
  }

  /** Bytes of the exceptions (codes, slack, tables) and of the per-term and per-chunk arrays and scratch. */
  memoryParts(): { data: number; slack: number; tables: number } {
    const ex = this.exceptions.memoryParts();
    const own = this.usual.byteLength + this.counted.byteLength + this.inWords.byteLength + this.inUsual.byteLength + this.choosing.byteLength + this.codes.byteLength + this.out.byteLength;
    return { data: ex.data, slack: ex.slack, tables: ex.tables + own };
  }

  /** Marks word `w` as the usual word of one of the chunk's terms. */
  private markUsual(w: number, epoch: number): void {
    if (w >= this.inUsual.length) this.reserveWords(w + 1);
    this.inUsual[w] = epoch;
  }

  /** Appends an exception code at `c`; returns the next index. */
  private push(c: number, code: number): number {
    if (c === this.codes.length) this.codes = grown(this.codes, c + 1);
    this.codes[c] = code;
    return c + 1;
  }

  /** Appends a rebuilt word id at `o`; returns the next index. */
  private emit(o: number, w: number): number {
    if (o === this.out.length) this.out = grown(this.out, o + 1);
    this.out[o] = w;
    return o + 1;
  }

  private reserveWords(n: number): void {
    if (n <= this.inWords.length) return;
    this.inWords = grown(this.inWords, n);
    this.inUsual = grown(this.inUsual, n);
  }

  private reserveTerms(n: number): void {
    this.usual = grown(this.usual, n);
    this.choosing = grown(this.choosing, n);
  }

  private nextEpoch(): number {
    // Epochs stay above 1: `epoch - 1` marks a word listed once, and 0 is every array's start.
    if (this.epoch >= 0xfffffffe) {
      this.inWords.fill(0);
      this.inUsual.fill(0);
      this.choosing.fill(0);
      this.epoch = 1;
    }
    return ++this.epoch;
  }
}
