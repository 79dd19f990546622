// Original file: proto/search/v1/core.proto


/**
 * Prefetch by the search type, then re-score the candidates.
 */
export interface Rerank {
  /**
   * "semantic", "fulltext", "bm25" or "cross_encoder" (the dataset's RERANKER_BASE_URL).
   */
  'rerank_type'?: (string);
  /**
   * Candidates fetched (0: 1,000), capped by the dataset's MAX_LIMIT.
   */
  'prefetch'?: (number);
  /**
   * Text to re-score with (empty: the query, after typo correction).
   */
  'query'?: (string);
}

/**
 * Prefetch by the search type, then re-score the candidates.
 */
export interface Rerank__Output {
  /**
   * "semantic", "fulltext", "bm25" or "cross_encoder" (the dataset's RERANKER_BASE_URL).
   */
  'rerank_type': (string);
  /**
   * Candidates fetched (0: 1,000), capped by the dataset's MAX_LIMIT.
   */
  'prefetch': (number);
  /**
   * Text to re-score with (empty: the query, after typo correction).
   */
  'query': (string);
}
