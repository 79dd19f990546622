/** RAG answers as the analytics reports show them (`RagQueryEvent`). */
import type { RatedRag } from '../../store/reports/rag-events.js';
import { reportTimestamp } from '../../store/reports/report-sql.js';

/**
 * `RagQueryEvent` `{id, rag_type, user_message, search_id, topic_id, results, llm_response,
 * top_score, dataset_id, created_at, query_rating, hallucination_score, detected_hallucinations,
 * user_id, metadata}`; `query_rating` is `{rating, note, metadata}` or null when unrated, an absent
 * search or topic id is null, and `user_id` is "" when the answer had none (the reference's column
 * is a non-null string, as `SearchQueryEvent` shows it). Times as the reference prints analytics times.
 */
export function ragQueryEvent(a: RatedRag): Record<string, unknown> {
  const r = a.rag;
  return {
    id: r.id,
    rag_type: r.ragType,
    user_message: r.userMessage,
    search_id: r.searchId,
    topic_id: r.topicId,
    results: r.results,
    llm_response: r.llmResponse,
    top_score: r.topScore,
    dataset_id: r.datasetId,
    created_at: reportTimestamp(r.createdAt),
    query_rating: a.rating === null ? null : { rating: a.rating.rating, note: a.rating.note, metadata: a.rating.metadata },
    hallucination_score: a.hallucinationScore,
    detected_hallucinations: a.detectedHallucinations,
    user_id: r.userId ?? '',
    metadata: r.metadata,
  };
}
