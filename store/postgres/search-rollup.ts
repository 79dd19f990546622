/**
 * PostgreSQL's side of the search rollups (../search-rollup-batch.ts): searches inserted or
 * deleted, ratings replaced and user events linked to searches, applied to both rollup tables
 * inside the transaction that wrote them.
 *
 * Each key is read, merged and written back, and a search's rating is read by whichever of the
 * search's and the rating's writers comes second, so these writers must not interleave: each
 * transaction takes one advisory lock (its own class, not the change log's, so analytics never
 * waits on chunk writes) before it reads anything for the rollups. It is taken after the
 * transaction's own rows were inserted or deleted, except by ratings and the retention purge of
 * answers and recommendations (./analytics.ts: the follow-up flags), which take it first: a
 * transaction waiting for a row of another (a redelivered id) never holds the lock, and one holding
 * it waits for no row another holder of a lock-free row could hold, so the waits cannot form a
 * cycle. User events that may set a search's flags take it first too, like ratings (and only
 * those: a batch of views never waits for it). One lock, not one per dataset: a rating may move a
 * search's rating between datasets. A holder may also wait for user event rollup rows (the links
 * of a search or answer written, ./event-rollup.ts), which a batch naming no request holds without
 * the lock; every writer locks those rows in one order, so that wait cannot close a cycle either.
 */
import type { QueryRating } from '../../core/domain/user-events.js';
import {
  countedFlags,
  countedPositions,
  countedRating,
  eventLink,
  flagsAfter,
  linkDeltas,
  linksSearch,
  mergedValues,
  mergeRollup,
  QUERY_TOTALS,
  queryTotalDeltas,
  ratingDeltas,
  ROLLUP_TABLES,
  rollupDeltas,
  ROLLUP_VALUE_COLUMNS,
  type LinkChange,
  type LinkFlags,
  type LinkingEvent,
  type RatingChange,
  type RollupDelta,
  type RollupKey,
  type RollupTable,
  type MergedRollup,
  type StoredRollup,
  type UnratedSearch,
} from '../search-rollup-batch.js';
import { SEARCH_LINK } from '../event-rollup-batch.js';
import { QUERY_PERIOD_TABLES, queryPeriodDeltas } from '../search-query-periods.js';
import type { Tx } from './database.js';
import { addEventLinks } from './event-rollup.js';
import { applyRecordChanges, eventRecordChanges, eventRecordState, ratingRecordChanges, type NamedStoredEvent } from './record-rollup.js';
import { flagRowsOf, lockRollups, ratingsOf } from './rollup-reads.js';
import { pgTextKey } from '../text-keys.js';

/** The columns of `search_queries` a RETURNING clause gives {@link applySearchRollup}. */
export const ROLLUP_RETURNING =
  'RETURNING id, dataset_id AS "datasetId", created_at AS "createdAt", search_type AS "searchType", search_method AS "searchMethod", latency, query, user_id AS "userId"';

/** Applies searches just inserted (`sign` 1) or deleted (-1) in `tx`, with the ratings and linked events they have (also in the user event rollups). */
export async function applySearchRollup(tx: Tx, rows: readonly UnratedSearch[], sign: 1 | -1): Promise<void> {
  if (rows.length === 0) return;
  await lockRollups(tx);
  const ids = rows.map((r) => r.id);
  const ratings = await ratingsOf(tx, ids);
  const flags = await flagRowsOf(tx, ids);
  const rated = rows.map((r) => {
    const linked = flags.get(r.id) ?? [];
    return { ...r, rating: countedRating(ratings.get(r.id), r.datasetId), ...countedFlags(linked, r.datasetId), ...countedPositions(linked, r.datasetId) };
  });
  await applyDeltas(tx, (t) => rollupDeltas(rated, t, sign));
  const totals = queryTotalDeltas(rows, sign);
  const keys = [totals.map((d) => d.datasetId), totals.map((d) => d.query)];
  await tx.run(
    `INSERT INTO ${QUERY_TOTALS} AS t (dataset_id, query, searches) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
     ON CONFLICT (dataset_id, ${pgTextKey('query')}) DO UPDATE SET searches = t.searches + excluded.searches`,
    [...keys, totals.map((d) => d.searches)],
  );
  if (sign < 0) {
    await tx.run(
      `DELETE FROM ${QUERY_TOTALS} t USING unnest($1::text[], $2::text[]) AS k(dataset_id, query)
       WHERE t.dataset_id = k.dataset_id AND ${pgTextKey('t.query')} = ${pgTextKey('k.query')} AND t.searches <= 0`,
      keys,
    );
  }
  await addEventLinks(tx, SEARCH_LINK, rows, sign);
  for (const t of QUERY_PERIOD_TABLES) {
    const deltas = queryPeriodDeltas(rows, t, sign);
    const periodKeys = [deltas.map((d) => d.datasetId), deltas.map((d) => d.query), deltas.map((d) => d.start)];
    await tx.run(
      `INSERT INTO ${t.table} AS t (dataset_id, query, ${t.column}, searches) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[])
       ON CONFLICT (dataset_id, ${pgTextKey('query')}, ${t.column}) DO UPDATE SET searches = t.searches + excluded.searches`,
      [...periodKeys, deltas.map((d) => d.searches)],
    );
    if (sign < 0) {
      await tx.run(
        `DELETE FROM ${t.table} t USING unnest($1::text[], $2::text[], $3::bigint[]) AS k(dataset_id, query, start)
         WHERE t.dataset_id = k.dataset_id AND ${pgTextKey('t.query')} = ${pgTextKey('k.query')} AND t.${t.column} = k.start AND t.searches <= 0`,
        periodKeys,
      );
    }
  }
}

/**
 * Stores `ratings` (the last of each query id, as `store` does it) with their rollup changes, in
 * the search rollups and (for RAG answers) the record rollups; the caller's `store` writes them,
 * after the lock and the reads of what they replace.
 */
export async function rateWithRollup(tx: Tx, ratings: readonly QueryRating[], store: () => Promise<unknown>): Promise<void> {
  await lockRollups(tx);
  const ids = ratings.map((r) => r.queryId);
  const before = await ratingsOf(tx, ids);
  const searches = await tx.all<RollupKey & { id: string }>(
    'SELECT id, dataset_id AS "datasetId", created_at AS "createdAt", search_type AS "searchType", search_method AS "searchMethod" FROM search_queries WHERE id = ANY($1::text[])',
    [ids],
  );
  const answers = await ratingRecordChanges(
    tx,
    ratings.map((r) => ({ ...r, rating: Math.trunc(r.rating) })),
    before,
  );
  await store();
  await applyRecordChanges(tx, answers);
  const byId = new Map(searches.map((s) => [s.id, s]));
  const changes: RatingChange[] = [];
  for (const r of ratings) {
    const search = byId.get(r.queryId);
    if (!search) continue;
    const was = countedRating(before.get(r.queryId), search.datasetId);
    const is = countedRating({ ...r, rating: Math.trunc(r.rating) }, search.datasetId);
    if (was !== is) changes.push({ search, before: was, after: is });
  }
  if (changes.length > 0) await applyDeltas(tx, (t) => ratingDeltas(changes, t));
}

/** A user event as {@link insertEventsWithRollup} sees it: its id as stored. */
export type StoredEvent = NamedStoredEvent & LinkingEvent;

/**
 * Stores user events (the caller's `insert`, returning the ids it stored) with the flags they
 * set on the searches they name, and what they count for the answers and recommendations they
 * name (./record-rollup.ts). Only a batch with an event naming a request takes the lock, before
 * it reads the flags and records and stores the events (a batch of events without request ids
 * never waits for it). An id repeated in the batch is stored once, its first event (as `insert`
 * does); returns how many were stored.
 */
export async function insertEventsWithRollup(tx: Tx, events: readonly StoredEvent[], insert: () => Promise<readonly string[]>): Promise<number> {
  if (!events.some((e) => typeof e.requestId === 'string')) return (await insert()).length;
  await lockRollups(tx);
  const records = await eventRecordState(tx, events);
  const ids = [...new Set(events.filter(linksSearch).map((e) => e.requestId!))];
  // Events naming requests, but no click or conversion among them (views, carts): no search flag to read.
  const before = ids.length === 0 ? new Map() : await flagRowsOf(tx, ids);
  const searches =
    ids.length === 0
      ? []
      : await tx.all<RollupKey & { id: string }>(
          'SELECT id, dataset_id AS "datasetId", created_at AS "createdAt", search_type AS "searchType", search_method AS "searchMethod" FROM search_queries WHERE id = ANY($1::text[])',
          [ids],
        );
  const stored = new Set(await insert());
  const searchOf = new Map(searches.map((s) => [s.id, s]));
  const flags = new Map<string, LinkFlags>();
  const seen = new Set<string>();
  const changes: LinkChange[] = [];
  for (const e of events) {
    if (!stored.has(e.id) || seen.has(e.id)) continue;
    seen.add(e.id);
    const search = linksSearch(e) ? searchOf.get(e.requestId!) : undefined;
    if (!search || search.datasetId !== e.datasetId) continue;
    const was = flags.get(search.id) ?? countedFlags(before.get(search.id) ?? [], search.datasetId);
    const link = eventLink(was, e);
    flags.set(search.id, flagsAfter(was, link));
    if (link) changes.push({ search, ...link });
  }
  if (changes.length > 0) await applyDeltas(tx, (t) => linkDeltas(changes, t));
  await applyRecordChanges(tx, eventRecordChanges(events, stored, records));
  return stored.size;
}

/** {@link ROLLUP_VALUE_COLUMNS}, one by one. */
const VALUE_COLUMNS = ROLLUP_VALUE_COLUMNS.split(', ');

/** Merges each table's deltas into its stored rows (deleting those left without a search). */
async function applyDeltas(tx: Tx, deltasOf: (t: RollupTable) => RollupDelta[]): Promise<void> {
  for (const t of ROLLUP_TABLES) {
    const deltas = deltasOf(t);
    const keys = [deltas.map((d) => d.datasetId), deltas.map((d) => d.start), deltas.map((d) => d.searchType), deltas.map((d) => d.searchMethod)];
    const stored = await tx.all<StoredRollup & { k: number }>(
      `SELECT k.ord AS k, ${VALUE_COLUMNS.map((c) => `r.${c}`).join(', ')}
       FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[]) WITH ORDINALITY AS k(dataset_id, start, search_type, search_method, ord)
       JOIN ${t.table} r ON r.dataset_id = k.dataset_id AND r.${t.column} = k.start AND r.search_type = k.search_type AND r.search_method = k.search_method`,
      keys,
    );
    const byOrdinal = new Map(stored.map((s) => [Number(s.k), s]));
    const put: ({ i: number } & MergedRollup)[] = [];
    const drop: number[] = [];
    deltas.forEach((d, i) => {
      const merged = mergeRollup(byOrdinal.get(i + 1), d);
      if (merged) put.push({ i, ...merged });
      else drop.push(i);
    });
    if (put.length > 0) {
      const values = put.map(mergedValues);
      await tx.run(
        `INSERT INTO ${t.table} (dataset_id, ${t.column}, search_type, search_method, ${ROLLUP_VALUE_COLUMNS})
         SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::float8[], $7::text[], $8::bigint[], $9::bigint[], $10::bigint[],
           $11::float8[], $12::bigint[], $13::bigint[], $14::bigint[], $15::float8[])
         ON CONFLICT (dataset_id, ${t.column}, search_type, search_method) DO UPDATE
           SET ${VALUE_COLUMNS.map((c) => `${c} = excluded.${c}`).join(', ')}`,
        [...keys.map((column) => put.map((p) => column[p.i])), ...VALUE_COLUMNS.map((_, v) => values.map((row) => row[v]))],
      );
    }
    if (drop.length > 0) {
      await tx.run(
        `DELETE FROM ${t.table} r USING unnest($1::text[], $2::bigint[], $3::text[], $4::text[]) AS k(dataset_id, start, search_type, search_method)
         WHERE r.dataset_id = k.dataset_id AND r.${t.column} = k.start AND r.search_type = k.search_type AND r.search_method = k.search_method`,
        keys.map((column) => drop.map((i) => column[i])),
      );
    }
  }
}
