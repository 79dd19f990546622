/**
 * Autocomplete's ranking (POST /api/chunk/autocomplete and group-oriented autocomplete): the
 * reference adds "content contains the query" to the filter; here every query word is required
 * and the word still being typed (the last one, when the query does not end in a space) matches
 * as a prefix. With `extend`, the plain search's other results follow those, up to the page.
 */
import { lastWordBeingTyped } from '../domain/completions.js';
import { containsWords, withConditions } from '../domain/filter.js';
import { runRankedSearch, type PipelineContext, type RankedResult, type RankedSearch } from './ranked-search.js';
import { withFields } from '../domain/with-fields.js';

/** Runs an autocomplete of the processed query `search.query`; `extend` appends non-prefix matches. */
export async function runAutocomplete(ctx: PipelineContext, search: RankedSearch, extend: boolean): Promise<RankedResult> {
  const typing = lastWordBeingTyped(search.query) !== null;
  const prefixed = withFields(search, { filter: withConditions(search.filter, [containsWords(search.query, typing)]), prefixLastWord: typing });
  const found = await runRankedSearch(ctx, prefixed);
  if (!extend || found.results.length >= search.limit) return found;
  const more = await runRankedSearch(ctx, withFields(search, { offset: 0, limit: search.limit + found.results.length, countTotal: false }));
  const seen = new Set(found.results.map((r) => r.id));
  const extra = more.results.filter((r) => !seen.has(r.id)).slice(0, search.limit - found.results.length);
  return withFields(found, { results: [...found.results, ...extra] });
}
