/**
 * The dataset's `server_configuration` switches of search types: BM25_ENABLED, FULLTEXT_ENABLED
 * and SEMANTIC_ENABLED (each true unless set to false). A request that needs a disabled type is
 * a 400 naming the flag, before any work is done. Hybrid needs both of its legs: semantic and
 * fulltext (the lexical leg is fulltext, SPLADE or the embedded BM25 with proximity pairs).
 */
import { badRequest } from '../domain/errors.js';
import type { SortOptions } from '../domain/search-options.js';

/** The flags each search type needs. */
const FLAGS_OF: Readonly<Record<string, readonly string[]>> = {
  bm25: ['BM25_ENABLED'],
  fulltext: ['FULLTEXT_ENABLED'],
  semantic: ['SEMANTIC_ENABLED'],
  hybrid: ['SEMANTIC_ENABLED', 'FULLTEXT_ENABLED'],
};

/**
 * 400 when `searchType` needs a flag the configuration sets to false; `member` names the body
 * member that asked for it (search_type, recommend_type, sort_by.rerank_type).
 */
export function requireSearchType(config: Record<string, unknown>, searchType: string, member = 'search_type'): void {
  for (const flag of FLAGS_OF[searchType] ?? []) {
    if (config[flag] === false) {
      throw badRequest(`${member} "${searchType}" is disabled for this dataset: its server_configuration sets ${flag} to false`);
    }
  }
}

/** {@link requireSearchType} for a ranked search and, when it re-scores by another type, that type too. */
export function requireSearchTypes(config: Record<string, unknown>, search: { readonly searchType: string; readonly sort: SortOptions | null }): void {
  requireSearchType(config, search.searchType);
  const by = search.sort?.sortBy;
  if (by?.kind === 'rerank') requireSearchType(config, by.rerankType, 'sort_by.rerank_type');
}
