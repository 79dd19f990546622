/**
 * The English stop-word list of the reference implementation (Trieve
 * `server/src/resources/stop-words.txt`: the NLTK English list of 127 words plus `aren't`, `it's`,
 * `don't` and `get`, 131 in all). It drives `remove_stop_words` on search queries and the
 * candidate phrases of highlighting, so both must keep using this exact list to stay compatible.
 */

/** The 131 stop words, lowercase, in the reference's order. */
const WORDS = [
  'i', 'me', 'my', 'myself', 'we', 'our', 'ours', 'ourselves', 'you', 'your', 'yours', 'yourself',
  'yourselves', 'he', 'him', 'his', 'himself', 'she', 'her', 'hers', 'herself', 'it', 'its', 'itself',
  'they', 'them', 'their', 'theirs', 'themselves', 'what', 'which', 'who', 'whom', 'this', 'that',
  'these', 'those', 'am', 'is', 'are', 'was', 'were', 'be', 'been', 'being', 'have', 'has', 'had',
  'having', 'do', 'does', 'did', 'doing', 'a', 'an', 'the', 'and', 'but', 'if', 'or', 'because', 'as',
  'until', 'while', 'of', 'at', 'by', 'for', 'with', 'about', 'against', 'between', 'into', 'through',
  'during', 'before', 'after', 'above', 'below', 'to', 'from', 'up', 'down', 'in', 'out', 'on', 'off',
  'over', 'under', 'again', 'further', 'then', 'once', 'here', 'there', 'when', 'where', 'why', 'how',
  'all', 'any', 'both', 'each', 'few', 'more', 'most', 'other', 'some', 'such', 'no', 'nor', 'not',
  'only', 'own', 'same', 'so', 'than', 'too', 'very', 's', 't', 'can', 'will', 'just', 'don', 'should',
  'now', "aren't", "it's", "don't", 'get',
] as const;

/** The stop-word set (lowercase entries). */
export const STOP_WORDS: ReadonlySet<string> = new Set(WORDS);

/** Whether `word` is a stop word, compared in lowercase (`The` is one). */
export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word.toLowerCase());
}

/**
 * The query without its stop words, as `remove_stop_words` defines it: split on single spaces,
 * drop the words that are stop words; a query made only of stop words is returned unchanged, so
 * that it still searches for something.
 */
export function removeStopWords(query: string): string {
  const kept = query.split(' ').filter((w) => !isStopWord(w));
  // Empty pieces (from double spaces) are not stop words and survive; only real words count.
  if (!kept.some((w) => w !== '')) return query;
  return kept.join(' ');
}
