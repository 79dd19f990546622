/**
 * Document text -> term ids for indexing, equal to `analyzer.analyze(text)` mapped through the
 * dictionary but cheaper: the text is encoded to UTF-8 into a reused byte buffer (after NFKC +
 * lowercasing only when it is not all ASCII), split in one pass over the bytes, and tokens are
 * looked up by their bytes in a {@link TokenTable}, so no token string is allocated except for
 * tokens the table has not seen. Bytes rather than `charCodeAt`: a typed array read is cheaper than
 * a string read, whose representation (one- or two-byte, flat or not) V8 checks on every call.
 */
import { ENGLISH_STOP_WORDS, type Analyzer } from './analyzer.js';
import { grown } from './grow.js';
import { FNV_SEED, fnvStep } from '../../../core/domain/fnv1a.js';
import { ABSENT, TokenTable } from './token-table.js';

/** Entries of the token table before it is cleared (a few MiB at most). */
const TOKEN_TABLE_SIZE = 1 << 18;

/**
 * Buffer sizes kept between texts (1 MiB each; a long text grows them, and they are given back
 * after it so that one huge chunk does not pin megabytes per index).
 */
const BYTES_KEPT = 1 << 20;
const IDS_KEPT = 1 << 18;
const MISSES_KEPT = 1 << 18;

/** Words per token the table missed: its place in {@link TermScanner.ids}, byte range and hash. */
const MISS_STRIDE = 4;

/** Placeholder in `ids` of a missed token that the analyzer drops (term ids never reach it). */
const DROPPED = 0xffffffff;

/** Maps a document's tokens to term ids (one per index: it caches against that index's dictionary). */
export class TermScanner {
  /** Term ids of the last scanned text, in text order (duplicates kept); valid up to the count returned. */
  ids = new Uint32Array(1024);
  private readonly table = new TokenTable(TOKEN_TABLE_SIZE);
  /** UTF-8 of the text being scanned; ASCII A-Z are lowercased in place as the scan passes them. */
  private bytes = new Uint8Array(4096);
  /** Tokens the table missed in the last scan, {@link MISS_STRIDE} words each (see {@link scanBytes}). */
  private misses = new Uint32Array(256 * MISS_STRIDE);
  private missCount = 0;
  private readonly encoder = new TextEncoder();
  private readonly decoder = new TextDecoder();

  /** A scanner for `analyzer`; `intern` gives the term id of a stem, creating it when new. */
  constructor(
    private readonly analyzer: Analyzer,
    private readonly intern: (stem: string) => number,
  ) {
    // V8 compiles a field stored only once as a constant; its first growth then aborts the
    // optimizing compile of the scan loop under way (`--trace-opt`, SciFact's first documents: a
    // compile of 15-90 ms thrown away, the loop meanwhile unoptimised). A second store marks the
    // growable fields mutable from the start.
    this.ids = new Uint32Array(1024);
    this.bytes = new Uint8Array(4096);
    this.misses = new Uint32Array(256 * MISS_STRIDE);
  }

  /** Scans `text` into {@link ids}; returns the number of tokens (its BM25 length). */
  scan(text: string): number {
    // An all-ASCII text is one byte per code unit. For ASCII, NFKC is the identity and lowercasing
    // only maps A-Z, which the byte pass does itself, so no normalised copy of the text is made.
    let n = this.encode(text);
    const unicode = n !== text.length;
    if (unicode) n = this.encode(text.normalize('NFKC').toLowerCase());
    // A token takes a byte and a separator, so n bytes hold at most n / 2 + 1 tokens: making room
    // here keeps every growth, and its branch, out of the scan loop.
    const most = (n >>> 1) + 1;
    if (this.ids.length < most) this.ids = grown(this.ids, most);
    // The last text's ids were read by now; a long one's buffer is given back.
    else if (this.ids.length > IDS_KEPT && most <= IDS_KEPT) this.ids = new Uint32Array(IDS_KEPT);
    if (this.misses.length < most * MISS_STRIDE) this.misses = grown(this.misses, most * MISS_STRIDE);
    let count = this.scanBytes(n, unicode);
    if (this.missCount > 0) count = this.resolveMisses(count);
    if (this.bytes.length > BYTES_KEPT) this.bytes = new Uint8Array(BYTES_KEPT);
    if (this.misses.length > MISSES_KEPT) this.misses = new Uint32Array(MISSES_KEPT);
    return count;
  }

  /** Term ids of already analyzed (stemmed) tokens into {@link ids}; returns their number. */
  internAll(tokens: readonly string[]): number {
    if (tokens.length > this.ids.length) this.ids = grown(this.ids, tokens.length);
    for (let i = 0; i < tokens.length; i++) this.ids[i] = this.intern(tokens[i]!);
    return tokens.length;
  }

  /** UTF-8 of `s` into {@link bytes}; returns its length in bytes. */
  private encode(s: string): number {
    // At most 3 bytes per UTF-16 code unit (an astral pair is 2 units for 4 bytes).
    if (this.bytes.length < s.length * 3) this.bytes = new Uint8Array(s.length * 3);
    return this.encoder.encodeInto(s, this.bytes).written;
  }

  /**
   * Splits `bytes[0 .. n)` like the analyzer's word regex (maximal runs of \p{L}\p{N}\p{M} code
   * points) and looks tokens up by their bytes; returns the number of tokens put in {@link ids}.
   * With `unicode` false the bytes are the raw ASCII text; with `unicode` true they are the
   * normalised, lowercased text, whose multi-byte sequences are decoded and classified by
   * {@link isWordCodePoint} (a lone surrogate was encoded as U+FFFD, a separator, as the regex
   * treats it). A token the table misses only takes its place in `ids` and is noted in
   * {@link misses}: resolving it (a string, stemming, the dictionary) would inline a call tree
   * into this loop whose first runs change its type feedback and deoptimise it.
   */
  private scanBytes(n: number, unicode: boolean): number {
    const maxLen = this.analyzer.options.maxTokenLength;
    const table = this.table;
    const b = this.bytes;
    const ids = this.ids;
    const misses = this.misses;
    let missed = 0;
    let count = 0;
    let start = -1;
    let points = 0;
    let h = FNV_SEED;
    for (let i = 0; i <= n; i++) {
      // A virtual separator after the last byte ends the last token.
      let c = i < n ? b[i]! : 32;
      // Most bytes are lowercase ASCII letters inside a word: hashed here without the general
      // case's branches (upper case, digits, multi-byte sequences and separators go on below).
      if (start >= 0 && c >= 97 && c <= 122) {
        h = fnvStep(h, c);
        points++;
        continue;
      }
      let units = 1;
      let word: boolean;
      if (c < 128) {
        if (c >= 65 && c <= 90) b[i] = c |= 0x20;
        word = (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
      } else {
        units = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
        word = unicode && isWordCodePoint(decodeAt(b, i, c, units));
      }
      if (word) {
        if (start < 0) {
          start = i;
          points = 0;
          h = FNV_SEED;
        }
        h = fnvStep(h, c);
        for (let u = 1; u < units; u++) h = fnvStep(h, b[i + u]!);
        i += units - 1;
        points++;
        continue;
      }
      const end = i;
      i += units - 1;
      if (start < 0) continue;
      const from = start;
      start = -1;
      if (points > maxLen) continue;
      const id = table.get(b, from, end, h);
      if (id === ABSENT) {
        const at = missed++ * MISS_STRIDE;
        misses[at] = count;
        misses[at + 1] = from;
        misses[at + 2] = end;
        misses[at + 3] = h;
        ids[count++] = DROPPED;
      } else if (id >= 0) {
        ids[count++] = id;
      }
    }
    this.missCount = missed;
    return count;
  }

  /**
   * Gives the tokens {@link scanBytes} missed their term ids (and the table its new entries), in
   * text order, then closes the gaps of those the analyzer drops; returns the token count.
   */
  private resolveMisses(count: number): number {
    const { table, bytes, ids, misses } = this;
    let dropped = false;
    for (let k = 0; k < this.missCount; k++) {
      const at = k * MISS_STRIDE;
      const from = misses[at + 1]!;
      const end = misses[at + 2]!;
      const h = misses[at + 3]! | 0;
      // The same new token may occur twice in one text: the first resolution serves the second.
      let id = table.get(bytes, from, end, h);
      if (id === ABSENT) {
        id = this.resolve(this.decoder.decode(bytes.subarray(from, end)));
        table.set(bytes, from, end, h, id);
      }
      if (id >= 0) ids[misses[at]!] = id;
      else dropped = true;
    }
    this.missCount = 0;
    if (!dropped) return count;
    let w = 0;
    for (let r = 0; r < count; r++) if (ids[r] !== DROPPED) ids[w++] = ids[r]!;
    return w;
  }

  /** Term id of an unstemmed token missing from the table; -1 when the analyzer drops it. */
  private resolve(token: string): number {
    if (this.analyzer.options.removeStopWords && ENGLISH_STOP_WORDS.has(token)) return -1;
    return this.intern(this.analyzer.stemUncached(token));
  }
}

/** The code point of the `units`-byte UTF-8 sequence at `b[i]`, whose lead byte is `c`. */
function decodeAt(b: Uint8Array, i: number, c: number, units: number): number {
  if (units === 2) return ((c & 0x1f) << 6) | (b[i + 1]! & 0x3f);
  if (units === 3) return ((c & 0x0f) << 12) | ((b[i + 1]! & 0x3f) << 6) | (b[i + 2]! & 0x3f);
  return ((c & 0x07) << 18) | ((b[i + 1]! & 0x3f) << 12) | ((b[i + 2]! & 0x3f) << 6) | (b[i + 3]! & 0x3f);
}

/** Per BMP code unit: 0 unknown, 1 in \p{L}\p{N}\p{M}, 2 not (filled lazily: texts use few scripts). */
const BMP_CLASS = new Uint8Array(0x10000);
const WORD_CHAR = /^[\p{L}\p{N}\p{M}]$/u;

/** Whether a code point is a word character for the analyzer (its WORD regex class). */
function isWordCodePoint(cp: number): boolean {
  if (cp > 0xffff) return WORD_CHAR.test(String.fromCodePoint(cp));
  let k = BMP_CLASS[cp]!;
  if (k === 0) BMP_CLASS[cp] = k = WORD_CHAR.test(String.fromCharCode(cp)) ? 1 : 2;
  return k === 1;
}
