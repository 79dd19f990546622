/** SQLite analytics repository: `search_queries` and `recommendation_queries` (migration 3), `rag_queries` (migration 6). */
import type { RecommendationRecord, SearchKind, SearchRecord } from '../../core/domain/analytics.js';
import type { RagRecord } from '../../core/domain/rag.js';
import type { QueryRating } from '../../core/domain/user-events.js';
import type { AnalyticsRepository } from '../repository.js';
import type { Db } from './database.js';
import { tokenCount } from '../rag-records.js';
import { fromJson, ragFromRow, toJson } from '../rows.js';
import type { UnratedSearch } from '../search-rollup-batch.js';
import { sqliteSearchRollup } from './search-rollup.js';
import { sqliteFilterRollup } from './filter-rollup.js';
import type { FilteredSearch } from '../filter-rollup-batch.js';
import { RAG_RECORDS, RECOMMENDATION_RECORDS, type RecordSource, type RolledRecord } from '../record-rollup-batch.js';
import { sqliteRecordRollup } from './record-rollup.js';
import { noRecordChanges } from '../record-rollup-batch.js';
import { recordUsers, searchUsers } from '../user-rollup-batch.js';
import { sqliteUserRollup } from './user-rollup.js';
import { deletedFollowups, noFollowupChanges, touchedTopics, type DeletedAnswer } from '../followup-batch.js';
import { sqliteFollowups } from './followups.js';

type Row = Record<string, any>;

/**
 * A number the NOT NULL REAL columns accept. Records arrive as JSON, where NaN and Infinity
 * become null; one such value must not fail (and, retried, lose) the whole batch it came with.
 */
const finite = (n: unknown): number => (typeof n === 'number' && Number.isFinite(n) ? n : 0);

/** JSON text of a value, `null` (the JSON text) for absent ones: for NOT NULL JSON columns. */
const jsonOf = (value: unknown): string => JSON.stringify(value ?? null);

function searchFromRow(r: Row): SearchRecord {
  return {
    id: r.id,
    datasetId: r.dataset_id,
    kind: r.search_type as SearchKind,
    searchMethod: r.search_method,
    query: r.query,
    requestParams: JSON.parse(r.request_params),
    latencyMs: r.latency,
    topScore: r.top_score,
    results: JSON.parse(r.results),
    resultCount: r.result_count,
    userId: r.user_id,
    metadata: fromJson(r.metadata, null),
    createdAt: r.created_at,
  };
}

/** Builds the analytics repository. */
export function sqliteAnalytics(db: Db): AnalyticsRepository {
  // OR IGNORE on the primary key: a batch stored twice (retried job, last-resort write) keeps one copy.
  const insertSearch = db.prepare(
    `INSERT OR IGNORE INTO search_queries (id, dataset_id, search_type, search_method, query, request_params, latency, top_score, results, result_count, user_id, metadata, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertRecommendation = db.prepare(
    `INSERT OR IGNORE INTO recommendation_queries (id, dataset_id, recommendation_type, positive_ids, negative_ids, positive_tracking_ids, negative_tracking_ids, request_params, results, top_score, user_id, metadata, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertRag = db.prepare(
    `INSERT OR IGNORE INTO rag_queries (id, dataset_id, rag_type, user_message, search_id, topic_id, results, llm_response, top_score, user_id, metadata, prompt_tokens, completion_tokens, latency, created_at, hallucination_score, detected_hallucinations)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const getSearch = db.prepare('SELECT * FROM search_queries WHERE dataset_id = ? AND id = ?');
  const getRag = db.prepare('SELECT * FROM rag_queries WHERE dataset_id = ? AND id = ?');
  const listRags = db.prepare('SELECT * FROM rag_queries WHERE dataset_id = ? ORDER BY created_at DESC, id LIMIT ? OFFSET ?');
  const listSearches = db.prepare('SELECT * FROM search_queries WHERE dataset_id = ? ORDER BY created_at DESC, id LIMIT ? OFFSET ?');

  // By rowid through the created_at indexes: each statement is one short transaction. The
  // searches' deletes return what the rollups must subtract, in the same transaction.
  const purgeSearchRows = db.prepare(
    `DELETE FROM search_queries WHERE rowid IN (SELECT rowid FROM search_queries WHERE created_at < ? LIMIT ?)
     RETURNING id, dataset_id AS datasetId, created_at AS createdAt, search_type AS searchType, search_method AS searchMethod, latency, query, user_id AS userId,
       request_params AS requestParams`,
  );
  const rollup = sqliteSearchRollup(db);
  const users = sqliteUserRollup(db);
  const filterRollup = sqliteFilterRollup(db);
  const purgeSearches = {
    run: db.transaction((cutoffMs: number, batch: number): { changes: number } => {
      const gone = purgeSearchRows.all(cutoffMs, batch) as (UnratedSearch & FilteredSearch)[];
      rollup.searches(gone, -1);
      users.removed(searchUsers(gone));
      filterRollup(gone, -1);
      return { changes: gone.length };
    }).immediate,
  };
  // Answers and recommendations alike: the deletes return what the record rollups must subtract.
  const records = sqliteRecordRollup(db);
  const followups = sqliteFollowups(db);
  const purgeRecords = (source: RecordSource) => {
    const purgeRows = db.prepare(
      `DELETE FROM ${source.table} WHERE rowid IN (SELECT rowid FROM ${source.table} WHERE created_at < ? LIMIT ?)
       RETURNING id, dataset_id AS datasetId, created_at AS createdAt, ${source.subtypeColumn} AS subtype, user_id AS userId${source.kind === 'rag' ? ', user_message AS message, topic_id AS topicId, followup' : ''}`,
    );
    return {
      run: db.transaction((cutoffMs: number, batch: number): { changes: number } => {
        const gone = (purgeRows.all(cutoffMs, batch) as (Omit<RolledRecord, 'kind'> & DeletedAnswer)[]).map((r) => ({ ...r, kind: source.kind }));
        records.records(source, gone, -1);
        users.removed(recordUsers(source.kind, gone));
        if (source.kind === 'rag') {
          // A topic whose first answer went has a new first, no longer a follow-up.
          const { topics, changes } = deletedFollowups(gone);
          followups(topics, changes);
        }
        return { changes: gone.length };
      }).immediate,
    };
  };
  const purgeRecommendations = purgeRecords(RECOMMENDATION_RECORDS);
  const purgeRags = purgeRecords(RAG_RECORDS);
  // The latest rating wins: ratings are fire-and-forget and may be sent again.
  const upsertRating = db.prepare(
    `INSERT INTO query_ratings (query_id, kind, dataset_id, rating, note, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (query_id) DO UPDATE SET kind = excluded.kind, dataset_id = excluded.dataset_id, rating = excluded.rating,
       note = excluded.note, metadata = excluded.metadata, created_at = excluded.created_at`,
  );
  // A rating of a stored search (or answer) changes its rollup row's rating counts, in the same transaction.
  const rate = db.transaction((ratings: readonly QueryRating[]) => {
    const changes = [];
    const answers = noRecordChanges();
    for (const r of ratings) {
      const change = rollup.ratingChange(r);
      if (change) changes.push(change);
      records.ratingChange(r, answers);
      upsertRating.run(r.queryId, r.kind, r.datasetId, r.rating, r.note, toJson(r.metadata), r.createdAt);
    }
    rollup.ratings(changes);
    records.apply(answers);
  });

  // The rollups count only the rows this batch added: a redelivered record is ignored by its id.
  const searches = db.transaction((records: readonly SearchRecord[]): number => {
    const added: UnratedSearch[] = [];
    const filtered: FilteredSearch[] = [];
    for (const r of records) {
      const latency = finite(r.latencyMs);
      const requestParams = jsonOf(r.requestParams);
      const changes = insertSearch.run(
        r.id,
        r.datasetId,
        r.kind,
        r.searchMethod,
        r.query,
        requestParams,
        latency,
        finite(r.topScore),
        jsonOf(r.results),
        r.resultCount,
        r.userId ?? null,
        toJson(r.metadata),
        r.createdAt,
      ).changes;
      if (changes === 1) {
        added.push({ id: r.id, datasetId: r.datasetId, createdAt: r.createdAt, searchType: r.kind, searchMethod: r.searchMethod, latency, query: r.query, userId: r.userId ?? null });
        filtered.push({ datasetId: r.datasetId, createdAt: r.createdAt, searchType: r.kind, searchMethod: r.searchMethod, requestParams });
      }
    }
    rollup.searches(added, 1);
    users.added(searchUsers(added));
    filterRollup(filtered, 1);
    return added.length;
  });
  // The record rollups count only the rows this batch added, as the search rollups do.
  const recommendations = db.transaction((batch: readonly RecommendationRecord[]): number => {
    const added: RolledRecord[] = [];
    for (const r of batch) {
      const changes = insertRecommendation.run(
        r.id,
        r.datasetId,
        r.recommendationType,
        jsonOf(r.positiveIds),
        jsonOf(r.negativeIds),
        jsonOf(r.positiveTrackingIds),
        jsonOf(r.negativeTrackingIds),
        jsonOf(r.requestParams),
        jsonOf(r.results),
        finite(r.topScore),
        r.userId ?? null,
        toJson(r.metadata),
        r.createdAt,
      ).changes;
      if (changes === 1) added.push({ id: r.id, datasetId: r.datasetId, createdAt: r.createdAt, kind: 'recommendation', subtype: r.recommendationType, userId: r.userId ?? null });
    }
    records.records(RECOMMENDATION_RECORDS, added, 1);
    users.added(recordUsers('recommendation', added));
    return added.length;
  });

  const rags = db.transaction((batch: readonly RagRecord[]): number => {
    const added: RolledRecord[] = [];
    const topics: { datasetId: string; topicId?: string | null }[] = [];
    for (const r of batch) {
      const changes = insertRag.run(
        r.id,
        r.datasetId,
        r.ragType,
        r.userMessage,
        r.searchId ?? null,
        r.topicId ?? null,
        jsonOf(r.results),
        r.llmResponse,
        finite(r.topScore),
        r.userId ?? null,
        toJson(r.metadata),
        tokenCount(r.promptTokens),
        tokenCount(r.completionTokens),
        finite(r.latencyMs),
        r.createdAt,
        finite(r.hallucinationScore),
        jsonOf(r.detectedHallucinations ?? []),
      ).changes;
      if (changes === 1) {
        added.push({ id: r.id, datasetId: r.datasetId, createdAt: r.createdAt, kind: 'rag', subtype: r.ragType, message: r.userMessage, userId: r.userId ?? null });
        topics.push(r);
      }
    }
    records.records(RAG_RECORDS, added, 1);
    users.added(recordUsers('rag', added));
    // Inserted with the flag 0: each topic's answers settled once, whatever order they came in.
    followups(touchedTopics(topics), noFollowupChanges());
    return added.length;
  });

  return {
    async insertSearches(records) {
      return records.length === 0 ? 0 : searches.immediate(records);
    },
    async insertRecommendations(records) {
      return records.length === 0 ? 0 : recommendations.immediate(records);
    },
    async getSearch(datasetId, id) {
      const row = getSearch.get(datasetId, id) as Row | undefined;
      return row ? searchFromRow(row) : undefined;
    },
    async listSearches(datasetId, page) {
      return (listSearches.all(datasetId, page.limit, page.offset) as Row[]).map(searchFromRow);
    },
    async insertRags(records) {
      return records.length === 0 ? 0 : rags.immediate(records);
    },
    async getRag(datasetId, id) {
      const row = getRag.get(datasetId, id) as Row | undefined;
      return row ? ragFromRow(row) : undefined;
    },
    async listRags(datasetId, page) {
      return (listRags.all(datasetId, page.limit, page.offset) as Row[]).map(ragFromRow);
    },
    async rate(ratings) {
      // IMMEDIATE: it reads (the previous rating, the search) before it writes, and a DEFERRED
      // transaction's first write fails at once, with no busy wait, when another connection (the
      // job workers' analytics batches) committed since its read (test/store/sqlite-write-upgrade.test.ts).
      rate.immediate(ratings);
    },
    async purgeBefore(cutoffMs, batch = 5000) {
      let deleted = 0;
      for (const statement of [purgeSearches, purgeRecommendations, purgeRags]) {
        for (;;) {
          const n = statement.run(cutoffMs, batch).changes;
          deleted += n;
          if (n < batch) break;
          // Let the rest of this process (and the lock) breathe between batches.
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
      return deleted;
    },
  };
}
