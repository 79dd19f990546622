/**
 * Document text -> term ids for indexing, equal to `analyzer.analyze(text)` mapped through the
 * dictionary but cheaper: the text is split in one charCodeAt pass (after NFKC + lowercasing only
 * when it is not all ASCII) and tokens are looked up by code units in a {@link TokenTable}, so no
 * token string is allocated except for tokens the table has not seen.
 */
import { ENGLISH_STOP_WORDS, type Analyzer } from './analyzer.js';
import { grown } from './grow.js';
import { FNV_SEED, fnvStep } from '../../../core/domain/fnv1a.js';
import { ABSENT, TokenTable } from './token-table.js';

/** Entries of the token table before it is cleared (a few MiB at most). */
const TOKEN_TABLE_SIZE = 1 << 18;

/** Maps a document's tokens to term ids (one per index: it caches against that index's dictionary). */
export class TermScanner {
  /** Term ids of the last scanned text, in text order (duplicates kept); valid up to the count returned. */
  ids = new Uint32Array(1024);
  private readonly table = new TokenTable(TOKEN_TABLE_SIZE);

  /** A scanner for `analyzer`; `intern` gives the term id of a stem, creating it when new. */
  constructor(
    private readonly analyzer: Analyzer,
    private readonly intern: (stem: string) => number,
  ) {}

  /** Scans `text` into {@link ids}; returns the number of tokens (its BM25 length). */
  scan(text: string): number {
    const n = this.scanChars(text, false);
    return n >= 0 ? n : this.scanChars(text.normalize('NFKC').toLowerCase(), true);
  }

  /** Term ids of already analyzed (stemmed) tokens into {@link ids}; returns their number. */
  internAll(tokens: readonly string[]): number {
    if (tokens.length > this.ids.length) this.ids = grown(this.ids, tokens.length);
    for (let i = 0; i < tokens.length; i++) this.ids[i] = this.intern(tokens[i]!);
    return tokens.length;
  }

  /** Term id of an unstemmed token missing from the table; -1 when the analyzer drops it. */
  private resolve(token: string): number {
    if (this.analyzer.options.removeStopWords && ENGLISH_STOP_WORDS.has(token)) return -1;
    return this.intern(this.analyzer.stemUncached(token));
  }

  private push(n: number, id: number): number {
    if (n === this.ids.length) this.ids = grown(this.ids, n + 1);
    this.ids[n] = id;
    return n + 1;
  }

  /**
   * Splits `s` like the analyzer's word regex (maximal runs of \p{L}\p{N}\p{M} code points) and
   * looks tokens up by code units. With `unicode` false, `s` is the raw text and the scan gives up
   * (-1) at the first non-ASCII code unit: for ASCII, NFKC is the identity and lowercasing only
   * maps A-Z, which the table does itself, so no normalised copy of the text is made. With
   * `unicode` true, `s` is already normalised and lowercased, and non-ASCII code points are
   * classified by {@link isWordCodePoint}.
   */
  private scanChars(s: string, unicode: boolean): number {
    const maxLen = this.analyzer.options.maxTokenLength;
    const table = this.table;
    const L = s.length;
    let n = 0;
    let start = -1;
    let points = 0;
    let h = FNV_SEED;
    for (let i = 0; i <= L; i++) {
      // A virtual separator after the last code unit ends the last token.
      let c = i < L ? s.charCodeAt(i) : 32;
      let units = 1;
      let word: boolean;
      if (c < 128) {
        if (c >= 65 && c <= 90) c |= 0x20;
        word = (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
      } else {
        if (!unicode) return -1;
        const cp = s.codePointAt(i)!;
        if (cp > 0xffff) units = 2;
        word = isWordCodePoint(cp);
      }
      if (word) {
        if (start < 0) {
          start = i;
          points = 0;
          h = FNV_SEED;
        }
        h = fnvStep(h, c);
        if (units === 2) h = fnvStep(h, s.charCodeAt(++i));
        points++;
        continue;
      }
      i += units - 1;
      if (start < 0) continue;
      const from = start;
      const end = i - units + 1;
      start = -1;
      if (points > maxLen) continue;
      let id = table.get(s, from, end, h);
      if (id === ABSENT) {
        // The unicode path's text is lowercased already (and lowercasing twice is not always a no-op).
        id = this.resolve(unicode ? s.slice(from, end) : s.slice(from, end).toLowerCase());
        table.set(s, from, end, h, id);
      }
      if (id >= 0) n = this.push(n, id);
    }
    return n;
  }
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
