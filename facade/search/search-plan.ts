/**
 * A validated search body turned into what the core's search pipeline takes, the way
 * POST /api/chunk/search does it: sort, scoring, typo and highlight options, query syntax, the
 * page window within the dataset's MAX_LIMIT. The group searches and autocomplete share it.
 */
import type { Filter } from '../../core/domain/filter.js';
import type { ScoringOptions, SortOptions } from '../../core/domain/search-options.js';
import { resolveTypoOptions, type TypoOptions } from '../../core/typo/options.js';
import { resolveHighlightOptions, type HighlightOptions } from '../highlight/index.js';
import { resolveScoringOptions, resolveSortOptions } from '../schemas/search-options.js';
import type { SearchRequest } from '../schemas/search.js';
import { processQuery, withTermConditions } from './query-syntax.js';

export { maxLimitOf } from '../../core/domain/dataset-config.js';

/** A parsed search, in the domain's terms (core-request.ts puts it on the wire). */
export interface PlannedSearch {
  readonly searchType: string;
  /** The processed query text. */
  readonly text: string;
  /** Semantic multi-query (empty otherwise). */
  readonly queries: readonly { query: string; weight: number }[];
  readonly filter: Filter | null;
  /** Results to skip and to return. */
  readonly offset: number;
  readonly limit: number;
  readonly countTotal: boolean;
  readonly scoreThreshold: number | null;
  readonly sort: SortOptions | null;
  readonly scoring: ScoringOptions | null;
  /** Typo correction (null: none). */
  readonly typo: TypoOptions | null;
}

/** A planned search: what the core runs, the text highlights mark, and the highlight options (null: none). */
export interface SearchPlan {
  readonly search: PlannedSearch;
  readonly text: string;
  readonly highlight: HighlightOptions | null;
}

/** The text highlights mark: the typo-corrected query when correction changed it (its quotes are syntax). */
export function highlightText(plan: SearchPlan, correctedQuery: string | null): string {
  return correctedQuery?.replace(/"/g, '') ?? plan.text;
}

/** Plans the search of a validated body (`raw` is the body itself, for the option resolvers). */
export function planSearch(req: SearchRequest, raw: Record<string, unknown>, maxLimit: number): SearchPlan {
  const multi = req.queries.length > 0;
  // Multi-query searches are not highlighted (there is no single query to mark up).
  const highlight = multi ? null : resolveHighlightOptions(raw);
  const processed = multi ? { text: req.query, required: [], excluded: [] } : processQuery(req.query, req);
  const offset = (req.page - 1) * req.pageSize;
  return {
    search: {
      searchType: req.searchType,
      text: processed.text,
      queries: req.queries,
      filter: withTermConditions(req.filter, processed.required, processed.excluded),
      offset,
      limit: Math.max(0, Math.min(req.pageSize, maxLimit - offset)),
      countTotal: req.getTotalPages,
      scoreThreshold: req.scoreThreshold,
      sort: resolveSortOptions(raw),
      scoring: resolveScoringOptions(raw),
      // Multi-query searches are not typo-corrected (as in the chunk search).
      typo: multi ? null : resolveTypoOptions(raw.typo_options),
    },
    text: processed.text,
    highlight,
  };
}
