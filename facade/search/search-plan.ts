/**
 * A validated search body turned into the ranked-chunk pipeline's input, the way
 * POST /api/chunk/search does it: sort, scoring, typo and highlight options, query syntax, the
 * page window within the dataset's MAX_LIMIT. The group searches share it, plus filters of their own.
 */
import { DATASET_CONFIG_DEFAULTS } from '../../core/domain/dataset-config.js';
import { withConditions, type Condition } from '../../core/domain/filter.js';
import { resolveTypoOptions } from '../../core/typo/options.js';
import { resolveHighlightOptions, type HighlightOptions } from '../highlight/index.js';
import { resolveScoringOptions, resolveSortOptions } from '../schemas/search-options.js';
import type { SearchRequest } from '../schemas/search.js';
import type { ChunkSearch } from './chunk-search.js';
import { processQuery, withTermConditions } from './query-syntax.js';

/** A dataset's MAX_LIMIT: the most results any search may page through. */
export function maxLimitOf(config: Record<string, unknown>): number {
  const v = config.MAX_LIMIT;
  return typeof v === 'number' && v > 0 ? v : DATASET_CONFIG_DEFAULTS.MAX_LIMIT;
}

/** The condition "member of this group". */
export const inGroup = (groupId: string): Condition => ({ field: { field: 'group_ids', match_any: [{ text: groupId }] } });

/** A planned search: the pipeline input, the text highlights mark, and the highlight options (null: none). */
export interface SearchPlan {
  readonly search: ChunkSearch;
  readonly text: string;
  readonly highlight: HighlightOptions | null;
}

/** The text highlights mark: the typo-corrected query when correction changed it (its quotes are syntax). */
export function highlightText(plan: SearchPlan, correctedQuery: string | null): string {
  return correctedQuery?.replace(/"/g, '') ?? plan.text;
}

/** Plans the search of a validated body (`raw` is the body itself, for the option resolvers). */
export function planSearch(req: SearchRequest, raw: Record<string, unknown>, maxLimit: number, must: readonly Condition[] = []): SearchPlan {
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
      filter: withConditions(withTermConditions(req.filter, processed.required, processed.excluded), must),
      offset,
      limit: Math.max(0, Math.min(req.pageSize, maxLimit - offset)),
      countTotal: req.getTotalPages,
      scoreThreshold: req.scoreThreshold,
      sort: resolveSortOptions(raw),
      scoring: resolveScoringOptions(raw),
      // Multi-query searches are not typo-corrected (as in the chunk search).
      typo: multi ? null : resolveTypoOptions(raw.typo_options),
      maxLimit,
    },
    text: processed.text,
    highlight,
  };
}
