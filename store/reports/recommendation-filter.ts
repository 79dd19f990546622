/**
 * The filter every recommendation report shares (`RecommendationAnalyticsFilter`), as one
 * FROM + WHERE over `recommendation_queries q`. Every statement starts `WHERE q.dataset_id = ?`
 * with the date bounds on `q.created_at` next, so both engines walk the (dataset_id, created_at)
 * index.
 */
import type { RecommendationKind } from '../../core/domain/analytics.js';
import { jsonText, Where, type Dialect, type RangeBounds } from './report-sql.js';

/** The values of `recommendation_type` (the reference's capitalised `RecommendationType`). */
export const RECOMMENDATION_TYPES = ['Chunk', 'Group'] as const satisfies readonly RecommendationKind[];

/** `RecommendationAnalyticsFilter`, canonical: every absent member matches everything. */
export interface RecommendationAnalyticsFilter {
  /** Epoch-ms bounds on the recommendation's `created_at`. */
  readonly dateRange?: RangeBounds;
  readonly recommendationType?: RecommendationKind;
  readonly topScore?: RangeBounds;
  /** `metadata.component_name` of the recommendation. */
  readonly componentName?: string;
}

/** The dataset's recommendations matching `filter`: the WHERE on `recommendation_queries q`. */
export function recommendationWhere(dialect: Dialect, datasetId: string, filter: RecommendationAnalyticsFilter): Where {
  const where = new Where().add('q.dataset_id = ?', datasetId).range('q.created_at', filter.dateRange);
  if (filter.recommendationType !== undefined) where.add('q.recommendation_type = ?', filter.recommendationType);
  where.range('q.top_score', filter.topScore);
  if (filter.componentName !== undefined) where.add(`${jsonText(dialect, 'q.metadata', 'component_name')} = ?`, filter.componentName);
  return where;
}
