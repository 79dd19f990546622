/**
 * Query pre-processing shared by every search type: `remove_stop_words`, then
 * `use_quote_negated_terms` (quoted phrases become required, `-word` excluded), as the
 * reference does it: the phrases and words become `content` conditions of the filter (every
 * word of a phrase must occur; the excluded word must not), and the query text keeps them.
 */
import { badRequest } from '../../core/domain/errors.js';
import { removeStopWords } from '../../core/domain/stop-words.js';

export { withTermConditions } from '../../core/domain/filter.js';

/** A query after pre-processing. */
export interface ProcessedQuery {
  /** The text to search with. */
  readonly text: string;
  /** Phrases every result must contain (quoted phrases; exact dataset words kept by typo correction). */
  readonly required: readonly string[];
  /** Words no result may contain. */
  readonly excluded: readonly string[];
}

/** Double-quoted spans; an unmatched quote is left as text. */
const QUOTED = /"([^"]*)"/g;

/** Words of a string that carry letters or digits (a lone "-" or quote is not a word). */
const hasWord = (s: string): boolean => /[\p{L}\p{N}]/u.test(s);

/**
 * Applies the flags to a query; 400 "Query cannot be empty" when nothing searchable is left
 * (a query of only stop words is kept whole, so it never empties a query by itself).
 */
export function processQuery(query: string, opts: { removeStopWords: boolean; quoteNegatedTerms: boolean }): ProcessedQuery {
  let text = opts.removeStopWords ? removeStopWords(query) : query;
  const required: string[] = [];
  const excluded: string[] = [];
  if (opts.quoteNegatedTerms) {
    for (const m of text.matchAll(QUOTED)) if (hasWord(m[1]!)) required.push(m[1]!.trim());
    for (const token of text.replace(QUOTED, ' ').split(/\s+/)) {
      if (token.length > 1 && token.startsWith('-') && hasWord(token.slice(1))) excluded.push(token.slice(1));
    }
    // Quotes and the minus signs are syntax, not words to search for.
    text = text.replace(/"/g, ' ').replace(/(^|\s)-(?=\S)/g, '$1').replace(/\s+/g, ' ').trim();
  }
  if (!hasWord(text)) throw badRequest('Query cannot be empty');
  return { text, required, excluded };
}
