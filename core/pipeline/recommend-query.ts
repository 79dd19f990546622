/**
 * The query text of a `bm25` or `fulltext` recommendation. The reference asks Qdrant to
 * recommend over the examples' sparse vectors; the core searches by text, so the examples
 * become a query of the words that best describe the positives.
 *
 * Choice of words: the corpus's document frequencies are not at hand here, so distinctiveness
 * is judged among the examples themselves, and BM25 then weighs the chosen words by the corpus's
 * idf when it scores. A word counts when it has two or more letters or digits and is not a stop
 * word (the reference's list). Words are ranked by how many positives contain them, then by how
 * often they occur in the positives, then by where they first occur; a word is dropped when at
 * least as large a share of the negatives as of the positives contains it (it describes what the
 * caller does not want at least as well as what they want). The top {@link RECOMMEND_QUERY_WORDS} form
 * the query, best first (the order matters to fulltext's adjacent-pair bonus).
 */
import { isStopWord } from '../domain/stop-words.js';

/** Most words in a recommendation query. */
export const RECOMMEND_QUERY_WORDS = 20;

const WORD = /[\p{L}\p{N}]+/gu;

/** Lower-cased words of a text that may describe it (no stop words, no single characters). */
function contentWords(text: string): string[] {
  return (text.toLowerCase().match(WORD) ?? []).filter((w) => w.length > 1 && !isStopWord(w));
}

/** Number of texts containing each word. */
function documentFrequency(texts: readonly string[]): Map<string, number> {
  const df = new Map<string, number>();
  for (const t of texts) for (const w of new Set(contentWords(t))) df.set(w, (df.get(w) ?? 0) + 1);
  return df;
}

/** The query text built from the positives' and negatives' texts ('' when the positives have no content words). */
export function recommendQueryText(positives: readonly string[], negatives: readonly string[] = []): string {
  const stats = new Map<string, { docs: number; count: number; first: number }>();
  let position = 0;
  for (const text of positives) {
    const seen = new Set<string>();
    for (const w of contentWords(text)) {
      let s = stats.get(w);
      if (!s) stats.set(w, (s = { docs: 0, count: 0, first: position }));
      s.count++;
      if (!seen.has(w)) {
        seen.add(w);
        s.docs++;
      }
      position++;
    }
  }
  const negativeDf = documentFrequency(negatives);
  return [...stats.entries()]
    .filter(([w, s]) => negatives.length === 0 || (negativeDf.get(w) ?? 0) / negatives.length < s.docs / positives.length)
    .sort(([, a], [, b]) => b.docs - a.docs || b.count - a.count || a.first - b.first)
    .slice(0, RECOMMEND_QUERY_WORDS)
    .map(([w]) => w)
    .join(' ');
}
