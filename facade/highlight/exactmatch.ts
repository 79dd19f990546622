/**
 * The `exactmatch` strategy: highlight the longest query phrases that occur verbatim (ignoring
 * case, on whole words) in the text, as the reference's `get_highlights_with_exact_match` does.
 *
 * Candidates are the query, the query without delimiter characters and `"`, and every contiguous
 * run of n words of the latter for n = words-1 down to 1, where runs of one or two words need a
 * non-stop word. (The reference also lists runs of consecutive non-stop words and spans between
 * non-stop words; both are contiguous runs containing a non-stop word, so they are already in
 * that set.) They are tried longest first, by word count then characters, earlier first on ties;
 * a candidate lying inside an accepted one is skipped, and at most `maxNum` are accepted.
 *
 * Runs are generated one length at a time and only when every word of the run occurs in the text,
 * so a long query costs little more than a short one.
 */
import { isStopWord } from '../../core/domain/stop-words.js';
import { foldCase, type Range } from './chars.js';
import { findPhrase, wordStarts } from './phrase-search.js';

/** A query phrase found in the text with all its occurrences, in text order. */
export interface AcceptedPhrase {
  /** The phrase as written in the query (words joined by one space). */
  readonly phrase: string;
  readonly occurrences: readonly Range[];
}

interface Candidate {
  readonly words: readonly string[];
  readonly folded: readonly string[];
  /** Folded words joined by one space: identity, containment and length. */
  readonly key: string;
}

const splitWords = (s: string): string[] => s.split(/\s+/).filter((w) => w !== '');

const candidate = (words: readonly string[], folded: readonly string[]): Candidate => ({ words, folded, key: folded.join(' ') });

/** Longer key first; Array.prototype.sort is stable, so ties keep generation (left-to-right) order. */
const byLength = (a: Candidate, b: Candidate): number => b.key.length - a.key.length;

/**
 * Candidate phrases in trial order, lazily, one word count at a time.
 * @param occurs whether a folded word occurs in the text as a whole word
 */
function* candidates(query: string, delimiters: ReadonlySet<number>, occurs: (word: string) => boolean): Generator<Candidate> {
  let cleaned = '';
  for (const ch of query) if (ch === ' ' || (ch !== '"' && !delimiters.has(ch.codePointAt(0)!))) cleaned += ch;
  const raw = splitWords(query);
  const words = splitWords(cleaned);
  const folded = words.map(foldCase);
  // Cleaning only deletes characters, so the query has at least as many words as the cleaned query.
  yield* [candidate(raw, raw.map(foldCase)), candidate(words, folded)].sort((a, b) => b.words.length - a.words.length || byLength(a, b));

  // missing[i] = how many of words[0..i) do not occur in the text: a run is viable iff it has none.
  const missing = [0];
  for (let i = 0; i < folded.length; i++) missing.push(missing[i]! + (occurs(folded[i]!) ? 0 : 1));
  const content = words.map((w) => !isStopWord(w));
  for (let n = words.length - 1; n >= 1; n--) {
    const group: Candidate[] = [];
    for (let s = 0; s + n <= words.length; s++) {
      if (missing[s + n] !== missing[s]) continue;
      if (n <= 2 && !content.slice(s, s + n).includes(true)) continue;
      group.push(candidate(words.slice(s, s + n), folded.slice(s, s + n)));
    }
    yield* group.sort(byLength);
  }
}

/**
 * Accepted phrases of the query in the text, at most `maxNum`, in acceptance order; empty when
 * nothing matched. One-character phrases are never highlighted (reference issue #2454).
 * @param folded the text folded with foldCase
 * @param isBreak whether text position i is a block-level boundary (phrases do not cross one)
 */
export function exactMatch(
  folded: string,
  query: string,
  delimiters: ReadonlySet<number>,
  maxNum: number,
  isBreak: (i: number) => boolean,
): AcceptedPhrase[] {
  const accepted: AcceptedPhrase[] = [];
  if (maxNum <= 0) return accepted;
  const acceptedKeys: string[] = [];
  const seen = new Set<string>();
  const startsOf = wordStarts(folded);
  for (const c of candidates(query, delimiters, (w) => startsOf(w).length > 0)) {
    if (c.key.length <= 1 || seen.has(c.key)) continue;
    seen.add(c.key);
    // Word-wise containment: "cure" is inside "malaria cure", not inside "cured".
    const padded = ` ${c.key} `;
    if (acceptedKeys.some((k) => k.includes(padded))) continue;
    const occurrences = findPhrase(folded, c.folded, startsOf, isBreak);
    if (occurrences.length === 0) continue;
    accepted.push({ phrase: c.words.join(' '), occurrences });
    acceptedKeys.push(` ${c.key} `);
    if (accepted.length >= maxNum) break;
  }
  return accepted;
}
