/** Recommendations as the analytics reports show them (`RecommendationEvent`). */
import type { RecommendationRecord } from '../../core/domain/analytics.js';
import { reportTimestamp } from '../../store/reports/report-sql.js';

/**
 * `RecommendationEvent` `{id, recommendation_type, positive_ids, negative_ids,
 * positive_tracking_ids, negative_tracking_ids, request_params, results, top_score, dataset_id,
 * created_at, user_id, metadata}`; `user_id` is "" when the request had none (as `SearchQueryEvent`
 * shows it). Times as the reference prints analytics times.
 */
export function recommendationEvent(r: RecommendationRecord): Record<string, unknown> {
  return {
    id: r.id,
    recommendation_type: r.recommendationType,
    positive_ids: r.positiveIds,
    negative_ids: r.negativeIds,
    positive_tracking_ids: r.positiveTrackingIds,
    negative_tracking_ids: r.negativeTrackingIds,
    request_params: r.requestParams,
    results: r.results,
    top_score: r.topScore,
    dataset_id: r.datasetId,
    created_at: reportTimestamp(r.createdAt),
    user_id: r.userId ?? '',
    metadata: r.metadata,
  };
}
