/**
 * Whole-word phrase occurrences in folded text. A phrase is a list of folded words; a space
 * between two words matches any whitespace run (so a phrase matches across a source line break)
 * that holds no block-level boundary (a phrase never runs from a heading into a paragraph), and
 * the phrase must not start or end inside a text word ("cat" is not found in "concatenate"). The reference matched raw substrings with single words padded by spaces; word
 * boundaries give the same results without its misses at punctuation and text edges.
 */
import { isSpace, wordCharAt, wordCharBefore, type Range } from './chars.js';

/**
 * Finds the non-overlapping occurrences of a phrase, left to right.
 * @param folded text, folded with {@link foldCase}
 * @param words the phrase's words, folded, none empty
 * @param startsOf whole-word occurrences of a word in `folded` ({@link wordStarts}, shared by phrases)
 * @param isBreak whether text position i is a block-level boundary
 */
export function findPhrase(
  folded: string,
  words: readonly string[],
  startsOf: (word: string) => readonly number[],
  isBreak: (i: number) => boolean,
): Range[] {
  const first = words[0]!;
  const last = words[words.length - 1]!;
  // Starts are whole-word occurrences of the first word; the end needs a boundary only where the
  // phrase itself ends with a word character.
  const rightBound = wordCharBefore(last, last.length);
  const found: Range[] = [];
  let after = 0;
  for (const at of startsOf(first)) {
    if (at < after) continue;
    let pos = at + first.length;
    let ok = true;
    for (let w = 1; ok && w < words.length; w++) {
      // At least one whitespace character, none a block boundary (a break stops the skip, and then
      // the next word cannot start there), then the next word.
      const gap = pos;
      while (pos < folded.length && isSpace(folded.charCodeAt(pos)) && !isBreak(pos)) pos++;
      const word = words[w]!;
      ok = pos > gap && folded.startsWith(word, pos);
      pos += word.length;
    }
    if (!ok || (rightBound && wordCharAt(folded, pos))) continue;
    found.push({ start: at, end: pos });
    after = pos;
  }
  return found;
}

/**
 * A memoised `startsOf` for one text: the positions where a word occurs as a whole word (no word
 * character glued to a side where the word itself has one). Filtering here, once per word, keeps
 * short words such as "a" from costing every phrase that starts with them a scan of every "a".
 */
export function wordStarts(folded: string): (word: string) => readonly number[] {
  const cache = new Map<string, number[]>();
  return (word) => {
    let hits = cache.get(word);
    if (hits === undefined) {
      hits = [];
      const left = wordCharAt(word, 0);
      const right = wordCharBefore(word, word.length);
      for (let i = folded.indexOf(word); i >= 0; i = folded.indexOf(word, i + 1)) {
        if ((left && wordCharBefore(folded, i)) || (right && wordCharAt(folded, i + word.length))) continue;
        hits.push(i);
      }
      cache.set(word, hits);
    }
    return hits;
  };
}
