/**
 * Autocomplete's completions of the word being typed: the word is found by the HTTP API and the
 * shards, its completions listed per shard, merged by the core, and searched as extra query words.
 */

/** Completions of a word being typed that an autocomplete query also searches for. */
export const MAX_COMPLETIONS = 64;

/** One code point that is a letter, number or mark (anchored: a single character, no backtracking). */
const WORD_CODE_POINT = /^[\p{L}\p{N}\p{M}]$/u;

/**
 * The run of letters, numbers and marks that ends at `end` in `text`, or null when the code point
 * before `end` is none. Scans backwards once: `/([\p{L}\p{N}\p{M}]+)$/u` retried the run from
 * each of its characters when the text did not end there (quadratic on a long word).
 */
export function wordEndingAt(text: string, end: number): string | null {
  let start = end;
  while (start > 0) {
    let cpStart = start - 1;
    const c = text.charCodeAt(cpStart);
    // A low surrogate after a high one is the second half of one code point.
    if (c >= 0xdc00 && c <= 0xdfff && cpStart > 0) {
      const h = text.charCodeAt(cpStart - 1);
      if (h >= 0xd800 && h <= 0xdbff) cpStart--;
    }
    if (!WORD_CODE_POINT.test(text.slice(cpStart, start))) break;
    start = cpStart;
  }
  return start === end ? null : text.slice(start, end);
}

/** The lowercased last word of a query still being typed (no whitespace after it), else null. */
export function lastWordBeingTyped(text: string): string | null {
  const normalized = text.normalize('NFKC').toLowerCase();
  return wordEndingAt(normalized, normalized.length);
}

/** Query statistics as a shard reports them, with the completions it found. */
interface StatsWithCompletions {
  readonly terms: string[];
  readonly docFreqs: number[];
  readonly completions?: string[];
  readonly completionDocFreqs?: number[];
}

/** Stats whose terms include the completions (each completion is one more query word). */
export function withCompletions<S extends StatsWithCompletions>(s: S): S {
  if (!s.completions || s.completions.length === 0) return s;
  const extra = s.completions.filter((c) => !s.terms.includes(c));
  const dfs = extra.map((c) => s.completionDocFreqs![s.completions!.indexOf(c)]!);
  // Not a spread: see with-fields.ts (the same fields, of the same types, replaced).
  return Object.assign({}, s, { terms: [...s.terms, ...extra], docFreqs: [...s.docFreqs, ...dfs] });
}
