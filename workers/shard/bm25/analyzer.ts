/**
 * The one text analyzer shared by indexing and querying: NFKC, lowercase, Unicode word split,
 * long-token drop, optional stop-word removal, Porter stemming (stems cached).
 */
import { stemmer } from 'stemmer';

/** Lucene's English stop set (`EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`), the 33 words BEIR baselines use. */
export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set([
  'a', 'an', 'and', 'are', 'as', 'at', 'be', 'but', 'by', 'for', 'if', 'in', 'into', 'is', 'it',
  'no', 'not', 'of', 'on', 'or', 'such', 'that', 'the', 'their', 'then', 'there', 'these', 'they',
  'this', 'to', 'was', 'will', 'with',
]);

/** Analyzer options; every field has a default in {@link DEFAULT_ANALYZER_OPTIONS}. */
export interface AnalyzerOptions {
  /**
   * Drop tokens in {@link ENGLISH_STOP_WORDS} (checked before stemming, as Lucene does).
   * @defaultValue false. SciFact nDCG@10 test 0.6759 with / 0.6799 without, train 0.6957 / 0.6932: a tie
   * within noise, so we keep stop words indexed: a query made only of stop words ("to be or not to
   * be") still finds its documents, and quoted phrases keep every word (bench/scifact-bm25.ts).
   */
  readonly removeStopWords: boolean;
  /**
   * Apply the Porter stemmer to tokens made only of ASCII letters a-z.
   * @defaultValue true (SciFact nDCG@10 test 0.6759 with, 0.6635 without; train 0.6957 / 0.6654)
   */
  readonly stem: boolean;
  /**
   * Tokens longer than this many code points are dropped: they are hashes, base64 or URLs
   * that nobody types, and they bloat the term dictionary.
   * @defaultValue 40
   */
  readonly maxTokenLength: number;
  /**
   * Upper bound on the number of cached stems; the oldest entry is evicted first.
   * @defaultValue 65536 (a few MiB; vocabularies follow Zipf, so hit rates stay high)
   */
  readonly stemCacheSize: number;
}

/** Defaults for {@link AnalyzerOptions}, chosen by the SciFact measurement in bench/scifact-bm25.ts. */
export const DEFAULT_ANALYZER_OPTIONS: Readonly<AnalyzerOptions> = Object.freeze({
  removeStopWords: false,
  stem: true,
  maxTokenLength: 40,
  stemCacheSize: 65_536,
});

/** A configured analyzer; `analyze` returns tokens in text order so positions can be derived later. */
export interface Analyzer {
  /** The resolved options this analyzer runs with. */
  readonly options: Readonly<AnalyzerOptions>;
  /** Tokens of `text` in order (duplicates kept). */
  analyze(text: string): string[];
  /** Like {@link analyze} but not stemmed yet: `analyze(t)` is `unstemmed(t).map(stem)`. */
  unstemmed(text: string): string[];
  /** The stem of one unstemmed token (identity when stemming is off). */
  stem(token: string): string;
  /** Like {@link stem} without reading or filling the stem cache (for callers that cache stems themselves). */
  stemUncached(token: string): string;
}

/** Shortest substring V8 represents as a slice of its parent instead of a copy (`SlicedString::kMinLength`). */
const MIN_SLICED_LENGTH = 13;

/**
 * `s`, or a copy of it that shares no memory with a larger string. V8 represents a substring of
 * 13+ characters (a regex match, a `slice`) as a view that keeps its whole parent alive: a token
 * kept as a dictionary or cache key would pin the whole normalised document it came from (on
 * SciFact, megabytes of text). A JSON round trip builds a fresh flat string; callers use this only
 * when they store a string for good (a new term, a cache miss), so its cost does not matter.
 */
export function ownString(s: string): string {
  return s.length < MIN_SLICED_LENGTH ? s : (JSON.parse(JSON.stringify(s)) as string);
}

// Marks (\p{M}) are kept inside words because Indic and other abugida scripts write vowels as
// combining marks; splitting on them would cut every word into consonant fragments.
const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const ASCII_WORD = /^[a-z]+$/;

/** Number of code points of `s` (differs from `s.length` only for astral characters). */
function codePointLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // A high surrogate followed by its low surrogate is one code point.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) i++;
    n++;
  }
  return n;
}

/** Creates an analyzer with its own bounded stem cache (no module-level state). */
export function createAnalyzer(options: Partial<AnalyzerOptions> = {}): Analyzer {
  const opts: Readonly<AnalyzerOptions> = Object.freeze(Object.assign({}, DEFAULT_ANALYZER_OPTIONS, options));
  const cache = new Map<string, string>();
  const cacheSize = Math.max(0, opts.stemCacheSize);

  // Only plain English words go through Porter: it would mangle digits and other scripts.
  const stemUncached = (token: string): string => (ASCII_WORD.test(token) ? stemmer(token) : token);

  const stem = (token: string): string => {
    const hit = cache.get(token);
    if (hit !== undefined) return hit;
    const out = stemUncached(token);
    if (cacheSize > 0) {
      if (cache.size >= cacheSize) {
        const oldest = cache.keys().next();
        if (oldest.done !== true) cache.delete(oldest.value);
      }
      // Copies: the token may be a slice of a whole query or document (see ownString).
      cache.set(ownString(token), ownString(out));
    }
    return out;
  };

  const unstemmed = (text: string): string[] => {
    const out: string[] = [];
    const normalized = text.normalize('NFKC').toLowerCase();
    WORD.lastIndex = 0;
    for (let m = WORD.exec(normalized); m !== null; m = WORD.exec(normalized)) {
      const token = m[0];
      // Cheap length test first; code points only matter near the limit.
      if (token.length > opts.maxTokenLength && codePointLength(token) > opts.maxTokenLength) continue;
      if (opts.removeStopWords && ENGLISH_STOP_WORDS.has(token)) continue;
      out.push(token);
    }
    return out;
  };

  const analyze = (text: string): string[] => {
    const out = unstemmed(text);
    if (opts.stem) for (let i = 0; i < out.length; i++) out[i] = stem(out[i]!);
    return out;
  };

  const identity = (token: string): string => token;
  return {
    options: opts,
    analyze,
    unstemmed,
    stem: opts.stem ? stem : identity,
    stemUncached: opts.stem ? stemUncached : identity,
  };
}
