/**
 * Suggested queries without a model: the distinctive phrases of some texts. Words are the
 * analyzer's (lowercase, unstemmed so that a suggestion reads as written), stop words and numbers
 * left out; a word weighs its count times an inverse document frequency over the texts, a pair
 * of adjacent words (no stop word between) the mean of its words' weights times its own count.
 * Pairs seen more than once come first, then single words; words of the query are not suggested.
 */
import { isStopWord } from '../domain/stop-words.js';
import { createAnalyzer } from '../../workers/shard/bm25/analyzer.js';
import { SUGGESTION_LIMIT } from './short-tasks.js';

/** Texts read at most, and characters of each: the work stays bounded whatever the caller sends. */
const MAX_TEXTS = 100;
const MAX_TEXT_CHARS = 20_000;

/** Pairs among the suggestions at most (the rest are single words). */
const MAX_PAIRS = 6;

/** Shortest word suggested on its own, in characters. */
const MIN_WORD_CHARS = 4;

/** The tokenizer: quarry's analyzer without stemming (suggestions are shown as written). */
const words = createAnalyzer({ stem: false, stemCacheSize: 0 });

/** Whether `w` can be part of a suggestion: not a stop word, not only digits. */
function contentWord(w: string): boolean {
  if (isStopWord(w)) return false;
  for (let i = 0; i < w.length; i++) {
    const c = w.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return true;
  }
  return false;
}

/** Up to {@link SUGGESTION_LIMIT} keyword queries from `texts`, best first. */
export function suggestPhrases(texts: readonly string[], query: string | null): string[] {
  const exclude = new Set(query === null ? [] : words.unstemmed(query));
  const tf = new Map<string, number>();
  const df = new Map<string, number>();
  const pairs = new Map<string, number>();
  const used = texts.slice(0, MAX_TEXTS);
  for (const text of used) {
    const tokens = words.unstemmed(text.slice(0, MAX_TEXT_CHARS));
    const seen = new Set<string>();
    let prev: string | null = null;
    for (const t of tokens) {
      if (!contentWord(t) || exclude.has(t)) {
        prev = null;
        continue;
      }
      tf.set(t, (tf.get(t) ?? 0) + 1);
      if (!seen.has(t)) {
        seen.add(t);
        df.set(t, (df.get(t) ?? 0) + 1);
      }
      if (prev !== null && prev !== t) {
        const p = `${prev} ${t}`;
        pairs.set(p, (pairs.get(p) ?? 0) + 1);
      }
      prev = t;
    }
  }
  const n = used.length;
  const weight = (w: string): number => (tf.get(w) ?? 0) * Math.log(1 + (n + 1) / (df.get(w) ?? 1));
  // Ties by the phrase itself, so that the same texts always give the same suggestions.
  const byScore = (a: [string, number], b: [string, number]): number => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

  const rankedPairs = [...pairs]
    .filter(([, count]) => count > 1)
    .map(([p, count]): [string, number] => {
      const [a, b] = p.split(' ') as [string, string];
      return [p, (count * (weight(a) + weight(b))) / 2];
    })
    .sort(byScore)
    .slice(0, MAX_PAIRS);
  const inPairs = new Set(rankedPairs.flatMap(([p]) => p.split(' ')));
  const rankedWords = [...tf.keys()]
    .filter((w) => w.length >= MIN_WORD_CHARS && !inPairs.has(w))
    .map((w): [string, number] => [w, weight(w)])
    .sort(byScore);
  return [...rankedPairs, ...rankedWords].slice(0, SUGGESTION_LIMIT).map(([p]) => p);
}
