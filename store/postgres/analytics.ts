/** PostgreSQL analytics repository: `search_queries`, `recommendation_queries` and `rag_queries`. */
import { isCompleteRecord, type SearchKind, type SearchRecord } from '../../core/domain/analytics.js';
import type { AnalyticsRepository } from '../repository.js';
import { tokenCount } from '../rag-records.js';
import { fromJson, ragFromRow, toJson } from '../rows.js';
import type { PgDb, Row } from './database.js';
import type { UnratedSearch } from '../search-rollup-batch.js';
import { applySearchRollup, rateWithRollup, ROLLUP_RETURNING } from './search-rollup.js';
import { RAG_RECORDS, RECOMMENDATION_RECORDS, type RecordSource, type RolledRecord } from '../record-rollup-batch.js';
import { applyRecordRollup, recordReturning } from './record-rollup.js';
import { recordUsers, searchUsers } from '../user-rollup-batch.js';
import { addUserRollup, removeUserRollup } from './user-rollup.js';
import { deletedFollowups, noFollowupChanges, touchedTopics, type DeletedAnswer } from '../followup-batch.js';
import { applyFollowups } from './followups.js';
import { lockRollups } from './rollup-reads.js';
import { applyFilterRollup, FILTER_RETURNING } from './filter-rollup.js';
import type { FilteredSearch } from '../filter-rollup-batch.js';

/**
 * A number the NOT NULL REAL columns accept. Records arrive as JSON, where NaN and Infinity
 * become null; one such value must not fail (and, retried, lose) the whole batch it came with.
 */
const finite = (n: unknown): number => (typeof n === 'number' && Number.isFinite(n) ? n : 0);

/** JSON text of a value, `null` (the JSON text) for absent ones: for NOT NULL JSON columns. */
const jsonOf = (value: unknown): string => JSON.stringify(value ?? null);

/**
 * Text PostgreSQL can hold. SQLite stores the NUL character, PostgreSQL refuses it, and a query
 * text holding one would fail its whole batch on every retry: it becomes U+FFFD, the character
 * for one that cannot be represented. (JSON columns need nothing: JSON text escapes it.)
 */
const text = (s: string | null): string | null => (s !== null && s.includes('\0') ? s.replaceAll('\0', '\uFFFD') : s);

/**
 * An integer the INTEGER and BIGINT columns accept, where SQLite would keep a fraction as it came
 * (no caller sends one: counts and epoch milliseconds); null stays null (a record lacking a NOT
 * NULL value is left out before the insert, as SQLite's INSERT OR IGNORE skips it:
 * `isCompleteRecord`).
 */
const integer = (n: number): number => (Number.isInteger(n) || typeof n !== 'number' ? n : Math.round(n));

/** LIMIT and OFFSET as SQLite reads them: a negative limit is none, a negative offset is 0 (PostgreSQL refuses both). */
const limitOf = (n: number): number | null => (n < 0 ? null : n);
const offsetOf = (n: number): number => Math.max(0, n);

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

/** What an answer's insert or delete also returns for the follow-up flags (../followup-batch.ts). */
const FOLLOWUP_RETURNING = ', topic_id AS "topicId", followup';

/** Builds the analytics repository. */
export function pgAnalytics(db: PgDb): AnalyticsRepository {
  // One statement per batch, so one transaction: a column per array parameter, whatever the batch size (clear of the
  // 65535-parameter limit). ON CONFLICT on the primary key: a batch stored twice (retried job,
  // last-resort write) keeps one copy; an id repeated within the batch keeps its first record,
  // as SQLite's INSERT OR IGNORE row by row does.
  const insertSearchesSql = `INSERT INTO search_queries (id, dataset_id, search_type, search_method, query, request_params, latency, top_score, results, result_count, user_id, metadata, created_at)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::float8[], $8::float8[], $9::text[], $10::int[], $11::text[], $12::text[], $13::bigint[])
     ON CONFLICT (id) DO NOTHING ${ROLLUP_RETURNING}${FILTER_RETURNING}`;
  const insertRecommendationsSql = `INSERT INTO recommendation_queries (id, dataset_id, recommendation_type, positive_ids, negative_ids, positive_tracking_ids, negative_tracking_ids, request_params, results, top_score, user_id, metadata, created_at)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::float8[], $11::text[], $12::text[], $13::bigint[])
     ON CONFLICT (id) DO NOTHING ${recordReturning(RECOMMENDATION_RECORDS)}`;
  const insertRagsSql = `INSERT INTO rag_queries (id, dataset_id, rag_type, user_message, search_id, topic_id, results, llm_response, top_score, user_id, metadata, prompt_tokens, completion_tokens, latency, created_at, hallucination_score, detected_hallucinations)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::float8[], $10::text[], $11::text[], $12::int[], $13::int[], $14::float8[], $15::bigint[], $16::float8[], $17::text[])
     ON CONFLICT (id) DO NOTHING ${recordReturning(RAG_RECORDS)}${FOLLOWUP_RETURNING}`;
  // By primary key through the created_at indexes: each statement is one short transaction (the
  // searches' with the rollups' subtraction of what it deleted).
  const purgeSearches = `DELETE FROM search_queries WHERE id IN (SELECT id FROM search_queries WHERE created_at < $1 LIMIT $2) ${ROLLUP_RETURNING}${FILTER_RETURNING}`;
  const purgeRecordsSql = (source: RecordSource): string =>
    `DELETE FROM ${source.table} WHERE id IN (SELECT id FROM ${source.table} WHERE created_at < $1 LIMIT $2) ${recordReturning(source)}${source.kind === 'rag' ? FOLLOWUP_RETURNING : ''}`;
  /**
   * Inserts (or deletes) records of `source` by `statement` and applies what it returned to the
   * record rollups and, for answers, the follow-up flags of their topics, in one transaction.
   */
  const withRecordRollup = (source: RecordSource, statement: string, params: unknown[], sign: 1 | -1): Promise<number> =>
    db.tx(async (tx) => {
      // A purge locks before it deletes: the follow-up writers update a topic's first answer under
      // the lock, and must not wait for a row a purge waiting for the lock has deleted.
      if (sign < 0) await lockRollups(tx);
      const rows = await tx.all<Omit<RolledRecord, 'kind'> & DeletedAnswer>(statement, params);
      await applyRecordRollup(tx, source, rows, sign);
      const users = recordUsers(source.kind, rows);
      await (sign > 0 ? addUserRollup(tx, users) : removeUserRollup(tx, users));
      if (source.kind === 'rag') {
        // Inserted rows carry the flag 0 until their topics are settled; deleted ones take theirs away.
        const { topics, changes } = sign < 0 ? deletedFollowups(rows) : { topics: touchedTopics(rows), changes: noFollowupChanges() };
        await applyFollowups(tx, topics, changes);
      }
      return rows.length;
    });

  /** The records as one array per column, in `columns` order. */
  const columns = <R>(records: readonly R[], of: readonly ((r: R) => unknown)[]): unknown[][] => of.map((f) => records.map(f));

  return {
    async insertSearches(records) {
      const rows = records.filter((r) => isCompleteRecord('searches', r));
      if (rows.length === 0) return 0;
      // RETURNING gives only the rows inserted: a redelivered record is not counted twice by the rollups.
      return db.tx(async (tx) => {
        const added = await tx.all<UnratedSearch & FilteredSearch>(
          insertSearchesSql,
          columns(rows, [
            (r) => r.id,
            (r) => r.datasetId,
            (r) => r.kind,
            (r) => r.searchMethod,
            (r) => text(r.query),
            (r) => jsonOf(r.requestParams),
            (r) => finite(r.latencyMs),
            (r) => finite(r.topScore),
            (r) => jsonOf(r.results),
            (r) => integer(r.resultCount),
            (r) => text(r.userId ?? null),
            (r) => toJson(r.metadata),
            (r) => integer(r.createdAt),
          ]),
        );
        await applySearchRollup(tx, added, 1);
        await addUserRollup(tx, searchUsers(added));
        await applyFilterRollup(tx, added, 1);
        return added.length;
      });
    },
    async insertRecommendations(records) {
      const rows = records.filter((r) => isCompleteRecord('recommendations', r));
      if (rows.length === 0) return 0;
      // RETURNING gives only the rows inserted, as for the searches.
      return withRecordRollup(
        RECOMMENDATION_RECORDS,
        insertRecommendationsSql,
        columns(rows, [
          (r) => r.id,
          (r) => r.datasetId,
          (r) => r.recommendationType,
          (r) => jsonOf(r.positiveIds),
          (r) => jsonOf(r.negativeIds),
          (r) => jsonOf(r.positiveTrackingIds),
          (r) => jsonOf(r.negativeTrackingIds),
          (r) => jsonOf(r.requestParams),
          (r) => jsonOf(r.results),
          (r) => finite(r.topScore),
          (r) => text(r.userId ?? null),
          (r) => toJson(r.metadata),
          (r) => integer(r.createdAt),
        ]),
        1,
      );
    },
    async getSearch(datasetId, id) {
      const row = await db.get('SELECT * FROM search_queries WHERE dataset_id = $1 AND id = $2', [datasetId, id]);
      return row ? searchFromRow(row) : undefined;
    },
    async listSearches(datasetId, page) {
      const rows = await db.all('SELECT * FROM search_queries WHERE dataset_id = $1 ORDER BY created_at DESC, id LIMIT $2 OFFSET $3', [
        datasetId,
        limitOf(page.limit),
        offsetOf(page.offset),
      ]);
      return rows.map(searchFromRow);
    },
    async insertRags(records) {
      const rows = records.filter((r) => isCompleteRecord('rags', r));
      if (rows.length === 0) return 0;
      return withRecordRollup(
        RAG_RECORDS,
        insertRagsSql,
        columns(rows, [
          (r) => r.id,
          (r) => r.datasetId,
          (r) => r.ragType,
          (r) => text(r.userMessage),
          (r) => r.searchId ?? null,
          (r) => r.topicId ?? null,
          (r) => jsonOf(r.results),
          (r) => text(r.llmResponse),
          (r) => finite(r.topScore),
          (r) => text(r.userId ?? null),
          (r) => toJson(r.metadata),
          (r) => tokenCount(r.promptTokens),
          (r) => tokenCount(r.completionTokens),
          (r) => finite(r.latencyMs),
          (r) => integer(r.createdAt),
          (r) => finite(r.hallucinationScore),
          (r) => jsonOf(r.detectedHallucinations ?? []),
        ]),
        1,
      );
    },
    async getRag(datasetId, id) {
      const row = await db.get('SELECT * FROM rag_queries WHERE dataset_id = $1 AND id = $2', [datasetId, id]);
      return row ? ragFromRow(row) : undefined;
    },
    async listRags(datasetId, page) {
      const rows = await db.all('SELECT * FROM rag_queries WHERE dataset_id = $1 ORDER BY created_at DESC, id LIMIT $2 OFFSET $3', [
        datasetId,
        limitOf(page.limit),
        offsetOf(page.offset),
      ]);
      return rows.map(ragFromRow);
    },
    async rate(ratings) {
      if (ratings.length === 0) return;
      // One statement, the latest rating of a query winning (ratings are fire-and-forget and may be sent again);
      // within one call the last of a query's ratings is kept, as SQLite's row-by-row upsert keeps it.
      const last = [...new Map(ratings.map((r) => [r.queryId, r])).values()];
      // With the search rollups' rating counts, in one transaction.
      await db.tx((tx) =>
        rateWithRollup(tx, last, () =>
          tx.run(
            `INSERT INTO query_ratings (query_id, kind, dataset_id, rating, note, metadata, created_at)
             SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::integer[], $5::text[], $6::text[], $7::bigint[])
             ON CONFLICT (query_id) DO UPDATE SET kind = excluded.kind, dataset_id = excluded.dataset_id, rating = excluded.rating,
               note = excluded.note, metadata = excluded.metadata, created_at = excluded.created_at`,
            [
              last.map((r) => r.queryId),
              last.map((r) => r.kind),
              last.map((r) => r.datasetId),
              last.map((r) => Math.trunc(r.rating)),
              last.map((r) => text(r.note)),
              last.map((r) => toJson(r.metadata)),
              last.map((r) => integer(r.createdAt)),
            ],
          ),
        ),
      );
    },
    async purgeBefore(cutoffMs, batch = 5000) {
      let deleted = 0;
      const purgeSearchBatch = (): Promise<number> =>
        db.tx(async (tx) => {
          const gone = await tx.all<UnratedSearch & FilteredSearch>(purgeSearches, [cutoffMs, batch]);
          await applySearchRollup(tx, gone, -1);
          await removeUserRollup(tx, searchUsers(gone));
          await applyFilterRollup(tx, gone, -1);
          return gone.length;
        });
      const purges = [
        purgeSearchBatch,
        () => withRecordRollup(RECOMMENDATION_RECORDS, purgeRecordsSql(RECOMMENDATION_RECORDS), [cutoffMs, batch], -1),
        () => withRecordRollup(RAG_RECORDS, purgeRecordsSql(RAG_RECORDS), [cutoffMs, batch], -1),
      ];
      for (const purge of purges) {
        for (;;) {
          const n = await purge();
          deleted += n;
          if (n < batch) break;
          // Let the rest of this process breathe between batches.
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
      return deleted;
    },
  };
}
