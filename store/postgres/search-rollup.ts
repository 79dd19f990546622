/**
 * PostgreSQL's side of the search rollups (../search-rollup-batch.ts): searches inserted or
 * deleted, and ratings replaced, applied to both rollup tables inside the transaction that wrote
 * them.
 *
 * Each key is read, merged and written back, and a search's rating is read by whichever of the
 * search's and the rating's writers comes second, so these writers must not interleave: each
 * transaction takes one advisory lock (its own class, not the change log's, so analytics never
 * waits on chunk writes) before it reads anything for the rollups. It is taken after the
 * transaction's own rows were inserted or deleted, except by ratings, which take it first: a
 * transaction waiting for a row of another (a redelivered id) never holds the lock, and one holding
 * it waits for no row another holder of a lock-free row could hold, so the waits cannot form a
 * cycle. One lock, not one per dataset: a rating may move a search's rating between datasets.
 */
import type { QueryRating } from '../../core/domain/user-events.js';
import {
  countedRating,
  mergeRollup,
  ratingDeltas,
  ROLLUP_TABLES,
  rollupDeltas,
  type RatingChange,
  type RollupDelta,
  type RollupKey,
  type RollupTable,
  type MergedRollup,
  type StoredRollup,
  type UnratedSearch,
} from '../search-rollup-batch.js';
import type { Tx } from './database.js';

/** Key of the transaction advisory lock that serializes rollup writes. */
const ROLLUP_LOCK = 7_297_012;

/** The columns of `search_queries` a RETURNING clause gives {@link applySearchRollup}. */
export const ROLLUP_RETURNING =
  'RETURNING id, dataset_id AS "datasetId", created_at AS "createdAt", search_type AS "searchType", search_method AS "searchMethod", latency';

/** Takes the rollup lock until `tx` ends. */
const lockRollups = (tx: Tx): Promise<number> => tx.run('SELECT pg_advisory_xact_lock($1)', [ROLLUP_LOCK]);

type RatingRow = { query_id: string; kind: string; datasetId: string; rating: number };

/** The stored ratings of `ids`, by query id. */
async function ratingsOf(tx: Tx, ids: readonly string[]): Promise<Map<string, RatingRow>> {
  const rows = await tx.all<RatingRow>('SELECT query_id, kind, dataset_id AS "datasetId", rating FROM query_ratings WHERE query_id = ANY($1::text[])', [ids]);
  return new Map(rows.map((r) => [r.query_id, r]));
}

/** Applies searches just inserted (`sign` 1) or deleted (-1) in `tx`, with the ratings they have. */
export async function applySearchRollup(tx: Tx, rows: readonly UnratedSearch[], sign: 1 | -1): Promise<void> {
  if (rows.length === 0) return;
  await lockRollups(tx);
  const ratings = await ratingsOf(
    tx,
    rows.map((r) => r.id),
  );
  const rated = rows.map((r) => ({ ...r, rating: countedRating(ratings.get(r.id), r.datasetId) }));
  await applyDeltas(tx, (t) => rollupDeltas(rated, t, sign));
}

/**
 * Stores `ratings` (the last of each query id, as `store` does it) with their rollup changes; the
 * caller's `store` writes them, after the lock and the reads of what they replace.
 */
export async function rateWithRollup(tx: Tx, ratings: readonly QueryRating[], store: () => Promise<unknown>): Promise<void> {
  await lockRollups(tx);
  const ids = ratings.map((r) => r.queryId);
  const before = await ratingsOf(tx, ids);
  const searches = await tx.all<RollupKey & { id: string }>(
    'SELECT id, dataset_id AS "datasetId", created_at AS "createdAt", search_type AS "searchType", search_method AS "searchMethod" FROM search_queries WHERE id = ANY($1::text[])',
    [ids],
  );
  await store();
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

/** Merges each table's deltas into its stored rows (deleting those left without a search). */
async function applyDeltas(tx: Tx, deltasOf: (t: RollupTable) => RollupDelta[]): Promise<void> {
  for (const t of ROLLUP_TABLES) {
    const deltas = deltasOf(t);
    const keys = [deltas.map((d) => d.datasetId), deltas.map((d) => d.start), deltas.map((d) => d.searchType), deltas.map((d) => d.searchMethod)];
    const stored = await tx.all<StoredRollup & { k: number }>(
      `SELECT k.ord AS k, r.searches, r.latency_sum, r.latency_histogram, r.rated, r.positive, r.negative
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
      await tx.run(
        `INSERT INTO ${t.table} (dataset_id, ${t.column}, search_type, search_method, searches, latency_sum, latency_histogram, rated, positive, negative)
         SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::float8[], $7::text[], $8::bigint[], $9::bigint[], $10::bigint[])
         ON CONFLICT (dataset_id, ${t.column}, search_type, search_method) DO UPDATE
           SET searches = excluded.searches, latency_sum = excluded.latency_sum, latency_histogram = excluded.latency_histogram,
             rated = excluded.rated, positive = excluded.positive, negative = excluded.negative`,
        [
          ...keys.map((column) => put.map((p) => column[p.i])),
          put.map((p) => p.searches),
          put.map((p) => p.latencySum),
          put.map((p) => p.histogram),
          put.map((p) => p.rated),
          put.map((p) => p.positive),
          put.map((p) => p.negative),
        ],
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
