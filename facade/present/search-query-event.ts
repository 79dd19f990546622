/** A recorded search on the wire of the search analytics reports (the reference's `SearchQueryEvent`). */
import type { RatedSearch } from '../../store/reports/search-events.js';
import { reportTimestamp } from '../../store/reports/report-sql.js';

/**
 * `SearchQueryEvent {id, search_type, query, request_params, latency, top_score, results,
 * dataset_id, created_at, query_rating, user_id, metadata}`. `created_at` is printed as the
 * reference prints analytics times; `user_id` is "" when the search had none (the reference's
 * column is a non-null string); `query_rating` is null when the search is unrated.
 */
export function searchQueryEvent({ search: s, rating }: RatedSearch): Record<string, unknown> {
  return {
    id: s.id,
    search_type: s.kind,
    query: s.query,
    request_params: s.requestParams,
    latency: s.latencyMs,
    top_score: s.topScore,
    results: s.results,
    dataset_id: s.datasetId,
    created_at: reportTimestamp(s.createdAt),
    query_rating: rating === null ? null : { rating: rating.rating, note: rating.note, metadata: rating.metadata },
    user_id: s.userId ?? '',
    metadata: s.metadata,
  };
}
