/**
 * A shard's typo dictionary: every word of its chunks with the number of chunks containing it,
 * kept current as chunks come and go, answering "which words lie within k edits of this one".
 *
 * Structure: a SymSpell deletion index (see delete-keys.ts). Each word is filed under the hashes
 * of all variants of its first {@link VocabularyOptions.prefixLength} code units with up to 2
 * units deleted; a lookup hashes the query prefix's variants with up to k deletes, gathers the
 * words filed under them and keeps those whose real Levenshtein distance is <= k. Measured
 * against a BK-tree (bench/typo.ts): BK-tree lookups at distance 2 visit a large share of the
 * tree (milliseconds on 100k words), this stays in tens of microseconds; the price is memory,
 * up to 29 (key, id) pairs per word at prefix length 7 (420-540 bytes per word in all, see the
 * bench); {@link VocabularyOptions.minIndexedCount} = 2 cuts that by about a third on SciFact.
 *
 * Distances are Levenshtein (a transposition costs 2), as in the reference, over UTF-16 units.
 */
import { boundedLevenshtein } from './levenshtein.js';
import { deleteKeys, hashUnits, maxDeleteKeys } from './delete-keys.js';
import { DeletionIndex, NIL } from './deletion-index.js';
import { MAX_WORD_UNITS, NO_WORD, WordTable } from './word-table.js';
import { decodeVocabulary, encodeVocabulary, VocabularySnapshotError } from './vocabulary-snapshot.js';
import { grown } from '../bm25/grow.js';

/** A vocabulary word near a looked-up word. */
export interface VocabularyMatch {
  word: string;
  /** Levenshtein distance to the looked-up word. */
  distance: number;
  /** Number of documents containing the word. */
  count: number;
}

/** One word to look up, as planned by the core (core/typo/correct.ts `TypoLookup`). */
export interface VocabularyLookup {
  word: string;
  /** 0 (exact count only), 1 or 2. */
  maxDistance: number;
}

/** This vocabulary's answer to one {@link VocabularyLookup} (core/typo/correct.ts `TypoAnswer`). */
export interface VocabularyAnswer {
  /** Documents containing exactly the word (0: absent). */
  exact: number;
  /** Words at distance 1..maxDistance, nearest first. */
  candidates: VocabularyMatch[];
}

/** Options of {@link Vocabulary}. */
export interface VocabularyOptions {
  /**
   * Code units of each word that the deletion index covers (SymSpell's prefix length). Longer
   * means fewer false candidates per lookup but more keys per word. @defaultValue 7
   */
  prefixLength: number;
  /**
   * Documents a word must occur in to be filed in the deletion index, i.e. to be returned by
   * {@link Vocabulary.lookup} at distance >= 1 (exact counts cover every word). 2 leaves out the
   * words seen once, which are about half the distinct words of real text and often typos
   * themselves (the reference's BK-tree drops them too). Counts are per vocabulary: with several
   * shards a word seen once in each of them is left out everywhere. @defaultValue 1
   */
  minIndexedCount: number;
}

/** Defaults for {@link VocabularyOptions}. */
export const DEFAULT_VOCABULARY_OPTIONS: Readonly<VocabularyOptions> = Object.freeze({ prefixLength: 7, minIndexedCount: 1 });

/** Largest distance {@link Vocabulary.lookup} supports (the index holds variants with <= 2 deletes). */
export const MAX_TYPO_DISTANCE = 2;

/** Longest word {@link Vocabulary.wordsOf} yields, in characters (as the reference). */
export const MAX_WORD_CHARS = 50;

const SEPARATORS = /[\s,.;:!?]+/;
const NOT_ALPHABETIC = /\P{Alphabetic}+/gu;

/** Word -> document count, with near-word lookups. */
export class Vocabulary {
  private readonly prefixLength: number;
  private readonly minIndexedCount: number;
  private readonly table = new WordTable();
  private readonly index = new DeletionIndex();
  /** Per word id: documents containing it (> 0 for every live id). */
  private counts = new Uint32Array(512);
  /** Per word id: the epoch of the last call that saw it (dedupes within add/remove/lookup). */
  private stamps = new Uint32Array(512);
  private epoch = 0;
  private units = new Uint16Array(MAX_WORD_UNITS + MAX_TYPO_DISTANCE + 1);
  private readonly keys: Uint32Array;

  /** An empty vocabulary. */
  constructor(options: Partial<VocabularyOptions> = {}) {
    const { prefixLength, minIndexedCount } = Object.assign({}, DEFAULT_VOCABULARY_OPTIONS, options);
    if (!Number.isInteger(prefixLength) || prefixLength < 1 || prefixLength > 32) {
      throw new RangeError(`prefixLength must be an integer in 1..32, got ${prefixLength}`);
    }
    if (!Number.isInteger(minIndexedCount) || minIndexedCount < 1 || minIndexedCount > 0xffff) {
      throw new RangeError(`minIndexedCount must be an integer in 1..65535, got ${minIndexedCount}`);
    }
    this.prefixLength = prefixLength;
    this.minIndexedCount = minIndexedCount;
    this.keys = new Uint32Array(maxDeleteKeys(prefixLength, MAX_TYPO_DISTANCE));
  }

  /**
   * The reference's dictionary tokenisation: split on whitespace and `, . ; : ! ?`, keep
   * alphabetic characters only, lowercase, cut to 50 characters, drop empty words.
   */
  static wordsOf(text: string): string[] {
    const out: string[] = [];
    for (const token of text.split(SEPARATORS)) {
      if (token === '') continue;
      // Fast path: ASCII letters only (nearly every token), no regex, no code-point split.
      let kind = 0; // 0: a-z only, 1: also A-Z, 2: anything else
      for (let i = 0; i < token.length && kind < 2; i++) {
        const c = token.charCodeAt(i);
        if (c >= 97 && c <= 122) continue;
        kind = c >= 65 && c <= 90 ? 1 : 2;
      }
      if (kind < 2) {
        const w = kind === 0 ? token : token.toLowerCase();
        out.push(w.length > MAX_WORD_CHARS ? w.slice(0, MAX_WORD_CHARS) : w);
        continue;
      }
      let w = token.replace(NOT_ALPHABETIC, '').toLowerCase();
      if (w === '') continue;
      if (w.length > MAX_WORD_CHARS) {
        const chars = Array.from(w);
        if (chars.length > MAX_WORD_CHARS) w = chars.slice(0, MAX_WORD_CHARS).join('');
      }
      out.push(w);
    }
    return out;
  }

  /** Number of distinct words. */
  get size(): number {
    return this.table.size;
  }

  /**
   * Counts one document: every distinct word of `words` gains 1 (repeats within the call count
   * once, so counts are document frequencies). Empty words and words longer than 255 UTF-16
   * units are ignored (never produced by {@link wordsOf}).
   */
  add(words: Iterable<string>): void {
    this.addDocument(words);
  }

  /**
   * Uncounts one document: every distinct word of `words` loses 1 and disappears at 0. Pass the
   * words that were added for that document; absent words are ignored.
   */
  remove(words: Iterable<string>): void {
    const epoch = this.nextEpoch();
    for (const w of words) {
      const len = this.load(w);
      if (len === 0) continue;
      const id = this.table.find(this.units, len, hashUnits(this.units, 0, len));
      if (id === NO_WORD || this.stamps[id] === epoch) continue;
      this.stamps[id] = epoch;
      const c = --this.counts[id]!;
      if (c === this.minIndexedCount - 1) this.fileKeys(id, false);
      if (c === 0) this.table.delete(id);
    }
  }

  /**
   * Like {@link add}, returning the document's distinct word ids. An id stays valid (the same
   * word) while the document is counted, since its count cannot reach 0 before: keep them to
   * uncount the document with {@link removeIds} when its text is no longer at hand.
   */
  addDocument(words: Iterable<string>): Uint32Array {
    const epoch = this.nextEpoch();
    const ids: number[] = [];
    for (const w of words) {
      const len = this.load(w);
      if (len > 0) this.countUnits(len, epoch, ids);
    }
    return Uint32Array.from(ids);
  }

  /**
   * `addDocument(Vocabulary.wordsOf(text))` without making a string per word: ASCII tokens are
   * lowercased straight into the scratch units (the indexing hot path; a third of a shard's
   * indexing time went into the string version); a token with any non-ASCII unit takes the
   * string path, so the words counted are exactly those of {@link wordsOf}.
   */
  addText(text: string): Uint32Array {
    const epoch = this.nextEpoch();
    const ids: number[] = [];
    const u = this.units;
    let start = -1;
    let len = 0;
    let ascii = true;
    const L = text.length;
    for (let i = 0; i <= L; i++) {
      const c = i < L ? text.charCodeAt(i) : 32;
      // ASCII separators of wordsOf: whitespace and , . ; : ! ? (non-ASCII whitespace: string path).
      const sep = c === 32 || (c >= 9 && c <= 13) || c === 44 || c === 46 || c === 59 || c === 58 || c === 33 || c === 63;
      if (!sep) {
        if (start < 0) {
          start = i;
          len = 0;
          ascii = true;
        }
        if (c >= 128) ascii = false;
        else if (len < MAX_WORD_CHARS && ((c >= 97 && c <= 122) || (c >= 65 && c <= 90))) u[len++] = c | 32;
        continue;
      }
      if (start < 0) continue;
      if (!ascii) {
        for (const w of Vocabulary.wordsOf(text.slice(start, i))) {
          const n = this.load(w);
          if (n > 0) this.countUnits(n, epoch, ids);
        }
      } else if (len > 0) {
        this.countUnits(len, epoch, ids);
      }
      start = -1;
    }
    return Uint32Array.from(ids);
  }

  /** Counts the word in the scratch units once per epoch (one document), collecting its id. */
  private countUnits(len: number, epoch: number, ids: number[]): void {
    const h = hashUnits(this.units, 0, len);
    let id = this.table.find(this.units, len, h);
    if (id === NO_WORD) id = this.insert(len, h, 0);
    if (this.stamps[id] === epoch) return;
    this.stamps[id] = epoch;
    ids.push(id);
    if (++this.counts[id]! === this.minIndexedCount) this.fileKeys(id, true);
  }

  /** Uncounts a document by the distinct ids {@link addDocument} returned for it. */
  removeIds(ids: ArrayLike<number>): void {
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      if (!this.table.has(id)) continue;
      const c = --this.counts[id]!;
      if (c === this.minIndexedCount - 1) this.fileKeys(id, false);
      if (c === 0) this.table.delete(id);
    }
  }

  /** The word of a live id. */
  wordOf(id: number): string {
    return this.table.wordOf(id);
  }

  /** Documents containing `word` (0 when absent). */
  count(word: string): number {
    const len = this.load(word);
    if (len === 0) return 0;
    const id = this.table.find(this.units, len, hashUnits(this.units, 0, len));
    return id === NO_WORD ? 0 : this.counts[id]!;
  }

  /**
   * Every word within Levenshtein distance `maxDistance` of `word` (the word itself included at
   * distance 0 when present; others only when in >= minIndexedCount documents), nearest first,
   * ties in code-unit order. Case-sensitive: vocabulary words are lowercase, so look up lowercase.
   */
  lookup(word: string, maxDistance: 0 | 1 | 2): VocabularyMatch[] {
    if (!(maxDistance === 0 || maxDistance === 1 || maxDistance === 2)) throw new RangeError(`maxDistance must be 0, 1 or 2, got ${maxDistance}`);
    const out: VocabularyMatch[] = [];
    const len = word.length;
    // No stored word is longer than MAX_WORD_UNITS, so longer queries cannot be within reach.
    if (len > MAX_WORD_UNITS + maxDistance) return out;
    const q = this.units;
    for (let i = 0; i < len; i++) q[i] = word.charCodeAt(i);
    // The word itself comes from the table: it may be too rare to be in the deletion index.
    const self = len === 0 || len > MAX_WORD_UNITS ? NO_WORD : this.table.find(q, len, hashUnits(q, 0, len));
    if (self !== NO_WORD) out.push({ word, distance: 0, count: this.counts[self]! });
    if (maxDistance === 0) return out;
    const n = deleteKeys(q, 0, len, this.prefixLength, maxDistance, this.keys);
    const epoch = this.nextEpoch();
    const { index, stamps, table } = this;
    const { chars, starts, lens } = table;
    for (let k = 0; k < n; k++) {
      for (let e = index.first(this.keys[k]!); e !== NIL; e = index.next(e)) {
        const id = index.word(e);
        if (stamps[id] === epoch || id === self) continue;
        stamps[id] = epoch;
        const wl = lens[id]!;
        if (wl - len > maxDistance || len - wl > maxDistance) continue;
        const d = boundedLevenshtein(q, 0, len, chars, starts[id]!, wl, maxDistance);
        if (d <= maxDistance) out.push({ word: table.wordOf(id), distance: d, count: this.counts[id]! });
      }
    }
    return out.sort((a, b) => a.distance - b.distance || (a.word < b.word ? -1 : a.word > b.word ? 1 : 0));
  }

  /**
   * Answers a batch of lookups (one shard round trip per query): the exact count of each word
   * and, for maxDistance > 0, its other words within reach. A word this vocabulary holds gets no
   * candidates: the merged answer then has exact > 0 and the core never corrects such a word, so
   * the neighbour search would be wasted (this keeps correctly spelled queries cheap).
   */
  answer(lookups: readonly VocabularyLookup[]): VocabularyAnswer[] {
    return lookups.map(({ word, maxDistance }) => {
      const exact = this.count(word);
      if (exact > 0 || maxDistance <= 0) return { exact, candidates: [] };
      return { exact, candidates: this.lookup(word, maxDistance >= MAX_TYPO_DISTANCE ? MAX_TYPO_DISTANCE : 1) };
    });
  }

  /** Every word with its document count, in no particular order. */
  *entries(): IterableIterator<[word: string, count: number]> {
    for (let id = 0; id < this.table.idLimit; id++) if (this.table.has(id)) yield [this.table.wordOf(id), this.counts[id]!];
  }

  /** Bytes held by the structure's arrays (capacity; excludes the fixed object overhead). */
  memoryBytes(): number {
    return this.table.bytes + this.index.bytes + this.counts.byteLength + this.stamps.byteLength + this.units.byteLength + this.keys.byteLength;
  }

  /** Versioned binary snapshot (words and counts; the index is rebuilt by {@link fromBytes}). */
  toBytes(): Uint8Array {
    const { table } = this;
    const counts = new Uint32Array(table.size);
    const lengths = new Uint8Array(table.size);
    let total = 0;
    for (let id = 0; id < table.idLimit; id++) total += table.lens[id]!;
    const units = new Uint16Array(total);
    let w = 0;
    let o = 0;
    for (let id = 0; id < table.idLimit; id++) {
      const len = table.lens[id]!;
      if (len === 0) continue;
      counts[w] = this.counts[id]!;
      lengths[w++] = len;
      units.set(table.chars.subarray(table.starts[id], table.starts[id]! + len), o);
      o += len;
    }
    return encodeVocabulary({ prefixLength: this.prefixLength, minIndexedCount: this.minIndexedCount, counts, lengths, units });
  }

  /** Loads a {@link toBytes} snapshot; throws {@link VocabularySnapshotError} when it is not one. */
  static fromBytes(b: Uint8Array): Vocabulary {
    const s = decodeVocabulary(b);
    if (s.prefixLength < 1 || s.prefixLength > 32 || s.minIndexedCount < 1 || s.minIndexedCount > 0xffff) {
      throw new VocabularySnapshotError(`vocabulary snapshot options (prefix length ${s.prefixLength}, min indexed count ${s.minIndexedCount}) are invalid`);
    }
    const v = new Vocabulary({ prefixLength: s.prefixLength, minIndexedCount: s.minIndexedCount });
    v.table.reserve(s.counts.length);
    let indexed = 0;
    for (const c of s.counts) if (c >= s.minIndexedCount) indexed++;
    // ~10-18 distinct keys per word at prefix length 7 (bench/typo.ts): reserve the low end.
    v.index.reserve(indexed * Math.min(10, maxDeleteKeys(s.prefixLength, MAX_TYPO_DISTANCE)));
    let o = 0;
    for (let i = 0; i < s.counts.length; i++) {
      const len = s.lengths[i]!;
      v.units.set(s.units.subarray(o, o + len));
      o += len;
      const h = hashUnits(v.units, 0, len);
      if (v.table.find(v.units, len, h) !== NO_WORD) throw new VocabularySnapshotError('vocabulary snapshot holds a word twice');
      v.insert(len, h, s.counts[i]!);
    }
    return v;
  }

  /** Copies `w` into the scratch units; returns its length, or 0 when it cannot be stored. */
  private load(w: string): number {
    const len = w.length;
    if (len === 0 || len > MAX_WORD_UNITS) return 0;
    const u = this.units;
    for (let i = 0; i < len; i++) u[i] = w.charCodeAt(i);
    return len;
  }

  /** Stores the scratch word (absent) with `count`, filed in the deletion index if the count is enough. */
  private insert(len: number, h: number, count: number): number {
    const id = this.table.insert(this.units, len, h);
    if (id >= this.counts.length) {
      this.counts = grown(this.counts, id + 1);
      this.stamps = grown(this.stamps, id + 1);
    }
    this.counts[id] = count;
    this.stamps[id] = 0;
    if (count >= this.minIndexedCount) this.fileKeys(id, true);
    return id;
  }

  /** Files word `id` under its deletion keys, or takes it out of them. */
  private fileKeys(id: number, file: boolean): void {
    const { chars, starts, lens } = this.table;
    const n = deleteKeys(chars, starts[id]!, lens[id]!, this.prefixLength, MAX_TYPO_DISTANCE, this.keys);
    for (let k = 0; k < n; k++) {
      if (file) this.index.add(this.keys[k]!, id);
      else this.index.remove(this.keys[k]!, id);
    }
  }

  private nextEpoch(): number {
    if (this.epoch === 0xffffffff) {
      this.stamps.fill(0);
      this.epoch = 0;
    }
    return ++this.epoch;
  }
}
