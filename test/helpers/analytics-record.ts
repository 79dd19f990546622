/** The search and RAG answer record builders of the analytics store tests. */
import type { RecommendationRecord, SearchRecord } from '../../core/domain/analytics.js';
import type { RagRecord } from '../../core/domain/rag.js';

/** A search to store: a hybrid search of 'q' with one result and no user, unless given. */
export function searchRecord(s: Partial<SearchRecord> & { id: string; datasetId: string; createdAt: number }): SearchRecord {
  return {
    kind: 'search',
    searchMethod: 'hybrid',
    query: 'q',
    requestParams: null,
    latencyMs: 1,
    topScore: 0.5,
    results: [],
    resultCount: 1,
    userId: null,
    metadata: null,
    ...s,
  };
}

/** A RAG answer to store: a chosen_chunks answer to 'm' outside any topic, unless given. */
export function ragRecord(a: Partial<RagRecord> & { id: string; datasetId: string; createdAt: number }): RagRecord {
  return {
    ragType: 'chosen_chunks',
    userMessage: 'm',
    searchId: null,
    topicId: null,
    results: [],
    llmResponse: 'a',
    topScore: 0.5,
    userId: null,
    metadata: null,
    promptTokens: 1,
    completionTokens: 1,
    latencyMs: 3,
    ...a,
  };
}

/** A recommendation to store: a Chunk recommendation with no ids, results or user, unless given. */
export function recommendationRecord(r: Partial<RecommendationRecord> & { id: string; datasetId: string; createdAt: number }): RecommendationRecord {
  return {
    recommendationType: 'Chunk',
    positiveIds: [],
    negativeIds: [],
    positiveTrackingIds: [],
    negativeTrackingIds: [],
    requestParams: null,
    results: [],
    topScore: 0,
    userId: null,
    metadata: null,
    ...r,
  };
}
