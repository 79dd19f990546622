/**
 * The `v1` strategy: fuzzy-match the query against short text windows, as the reference's
 * `get_highlights` does with the `simsearch` crate.
 *
 * Windows: the text is cut after every delimiter character (the delimiter stays with its piece)
 * and at block-level boundaries (ours: a window never spans two paragraphs), then each piece into
 * runs of at most `maxLength` words (0 = no limit).
 *
 * Score (ours; simsearch's is an unbounded sum): only the query's non-stop words count (a query
 * of stop words alone highlights nothing, rather than every "the"). For each query word q, best(q)
 * is its highest Jaro-Winkler similarity to a word of the window, lowercased and stripped of
 * surrounding punctuation. A window qualifies when some best(q) >= threshold (simsearch's
 * per-word gate), and scores mean over q of best(q), counting only those >= threshold: a number
 * in 0..1 that rewards covering more of the query. The `maxNum` best windows are kept (ties:
 * earlier first) and returned in text order.
 */
import { isStopWord } from '../../core/domain/stop-words.js';
import { foldCase, isSpace, isWordCodePoint, type Range } from './chars.js';
import { JaroWinklerAtLeast } from './jaro-winkler.js';

/** The subset of the options v1 reads. */
export interface V1Options {
  readonly delimiters: ReadonlySet<number>;
  readonly maxLength: number;
  readonly maxNum: number;
  readonly threshold: number;
  /** Whether text position i is a block-level boundary. */
  readonly isBreak: (i: number) => boolean;
}

interface Window {
  readonly start: number;
  readonly end: number;
  readonly tokens: string[];
  score: number;
}

/** The word of s[from, to) without leading and trailing non-word characters ('' if none). */
function core(s: string, from: number, to: number): string {
  let a = from;
  let b = to;
  while (a < b && !isWordCodePoint(s.codePointAt(a)!)) a += s.codePointAt(a)! > 0xffff ? 2 : 1;
  while (b > a) {
    const c = s.charCodeAt(b - 1);
    const back = c >= 0xdc00 && c <= 0xdfff && b - 2 >= a ? 2 : 1;
    if (isWordCodePoint(s.codePointAt(b - back)!)) break;
    b -= back;
  }
  return s.slice(a, b);
}

/** Cuts folded text into windows (see the module comment); each window carries its word tokens. */
function cutWindows(folded: string, { delimiters, maxLength, isBreak }: V1Options): Window[] {
  const windows: Window[] = [];
  let start = -1;
  let end = -1;
  let words = 0;
  let tokens: string[] = [];
  const flush = (): void => {
    if (start >= 0) windows.push({ start, end, tokens, score: 0 });
    start = -1;
    words = 0;
    tokens = [];
  };
  // ASCII delimiters from a table: a Set lookup per character dominated the cut.
  const ascii = new Uint8Array(128);
  for (const d of delimiters) if (d < 128) ascii[d] = 1;
  let i = 0;
  while (i < folded.length) {
    if (isSpace(folded.charCodeAt(i))) {
      if (isBreak(i)) flush();
      i++;
      continue;
    }
    // One word, or the part of it up to and including a delimiter.
    let j = i;
    let endsPiece = false;
    while (j < folded.length && !isSpace(folded.charCodeAt(j))) {
      const cp = folded.codePointAt(j)!;
      j += cp > 0xffff ? 2 : 1;
      if (cp < 128 ? ascii[cp] === 1 : delimiters.has(cp)) {
        endsPiece = true;
        break;
      }
    }
    if (start < 0) start = i;
    end = j;
    words++;
    const token = core(folded, i, j);
    if (token !== '') tokens.push(token);
    if (endsPiece || words === maxLength) flush();
    i = j;
  }
  flush();
  return windows;
}

/** The query's distinct non-stop words, folded and stripped of surrounding punctuation. */
function queryWords(query: string): string[] {
  const out = new Set<string>();
  for (const w of query.split(/\s+/)) {
    if (w === '' || isStopWord(w)) continue;
    const token = core(foldCase(w), 0, w.length);
    if (token !== '' && !isStopWord(token)) out.add(token);
  }
  return [...out];
}

/** The windows v1 highlights, in text order (at most `maxNum`). */
export function v1Windows(folded: string, query: string, options: V1Options): Range[] {
  const q = queryWords(query);
  if (q.length === 0 || options.maxNum === 0) return [];
  const windows = cutWindows(folded, options);
  // Similarities per distinct text word (chunks repeat their words a lot), kept sparse: most text
  // words match no query word, and those then cost one map lookup per occurrence.
  const similarity = new JaroWinklerAtLeast(q, options.threshold);
  const scratch = new Float64Array(q.length);
  const NONE: readonly number[] = [];
  const matchesOf = new Map<string, readonly number[]>();
  const best = new Float64Array(q.length);
  const kept: Window[] = [];
  for (const w of windows) {
    if (w.tokens.length === 0 || w.end - w.start <= 1) continue;
    best.fill(0);
    for (const t of w.tokens) {
      let m = matchesOf.get(t);
      if (m === undefined) {
        similarity.scores(t, scratch);
        const pairs: number[] = [];
        for (let k = 0; k < q.length; k++) if (scratch[k]! > 0) pairs.push(k, scratch[k]!);
        m = pairs.length === 0 ? NONE : pairs;
        matchesOf.set(t, m);
      }
      // m holds (query word index, similarity) pairs.
      for (let i = 0; i < m.length; i += 2) if (m[i + 1]! > best[m[i]!]!) best[m[i]!] = m[i + 1]!;
    }
    let sum = 0;
    let hit = false;
    for (let k = 0; k < q.length; k++) {
      if (best[k]! >= options.threshold) {
        sum += best[k]!;
        hit = true;
      }
    }
    if (!hit) continue;
    w.score = sum / q.length;
    kept.push(w);
  }
  kept.sort((a, b) => b.score - a.score || a.start - b.start);
  return kept
    .slice(0, options.maxNum)
    .sort((a, b) => a.start - b.start)
    .map(({ start, end }) => ({ start, end }));
}
