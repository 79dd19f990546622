/**
 * The search pipeline's options after parsing, shared by the HTTP layer (which parses them from
 * REST bodies) and the core (which receives them over gRPC and runs them).
 */

/** Search types a candidate set can be re-scored with, plus a cross-encoder. */
export const RERANK_TYPES = ['semantic', 'fulltext', 'bm25', 'cross_encoder'] as const;

/** Fields a search can be sorted by (after a prefetch by relevance), besides metadata.<key>. */
export const SORTABLE_FIELDS = ['num_value', 'time_stamp', 'weight', 'created_at', 'updated_at', 'link', 'tracking_id'] as const;

/** Whether `field` is a field a search can be sorted by. */
export function isSortableField(field: string): boolean {
  return (SORTABLE_FIELDS as readonly string[]).includes(field) || (field.startsWith('metadata.') && field.length > 9);
}

/** Field sort after a prefetch by relevance. */
export interface SortByField {
  readonly kind: 'field';
  readonly field: string;
  readonly descending: boolean;
  /** Candidates fetched (null: the default, 1,000). */
  readonly prefetch: number | null;
}

/** Re-scoring of a prefetched candidate set by another search type or a cross-encoder. */
export interface SortByRerank {
  readonly kind: 'rerank';
  readonly rerankType: (typeof RERANK_TYPES)[number];
  /** Candidates fetched (null: the default, 1,000). */
  readonly prefetch: number | null;
  /** Text to re-score with; the search query when null. */
  readonly query: string | null;
}

/** Resolved sort options (null members are off). */
export interface SortOptions {
  readonly sortBy: SortByField | SortByRerank | null;
  readonly locationBias: { readonly lat: number; readonly lon: number; readonly bias: number } | null;
  readonly recencyBias: number;
  readonly useWeights: boolean;
  readonly tagWeights: Readonly<Record<string, number>> | null;
  readonly mmrLambda: number | null;
}

/** Resolved scoring options. */
export interface ScoringOptions {
  readonly fulltextBoost: { readonly phrase: string; readonly factor: number } | null;
  readonly semanticBoost: { readonly phrase: string; readonly factor: number } | null;
}

/** Recommendation strategies (semantic; lexical recommendations have one way). */
export const RECOMMEND_STRATEGIES = ['average_vector', 'best_score'] as const;

/** A recommendation strategy. */
export type RecommendStrategy = (typeof RECOMMEND_STRATEGIES)[number];
