/**
 * What PostgreSQL's rollup writers (./search-rollup.ts, ./record-rollup.ts) share: the advisory
 * lock that serializes them, and the reads of what a record counts (its rating, the user events
 * naming it) that they make under it.
 */
import { LINK_FLAGS_SQL } from '../search-rollup-batch.js';
import type { Tx } from './database.js';

/** Key of the transaction advisory lock that serializes rollup writes. */
const ROLLUP_LOCK = 7_297_012;

/** Takes the rollup lock until `tx` ends. */
export const lockRollups = (tx: Tx): Promise<number> => tx.run('SELECT pg_advisory_xact_lock($1)', [ROLLUP_LOCK]);

/** A stored rating as the rollups read it. */
export type RatingRow = { query_id: string; kind: string; datasetId: string; rating: number };

/** The stored ratings of `ids`, by query id. */
export async function ratingsOf(tx: Tx, ids: readonly string[]): Promise<Map<string, RatingRow>> {
  const rows = await tx.all<RatingRow>('SELECT query_id, kind, dataset_id AS "datasetId", rating FROM query_ratings WHERE query_id = ANY($1::text[])', [ids]);
  return new Map(rows.map((r) => [r.query_id, r]));
}

/** The aggregate of the user events naming one request, per dataset of the events. */
export type FlagRow = { request_id: string; dataset_id: string; clicked: number; converted: number; positioned: number; position_sum: number | null };

/** Rows grouped by `id`. */
export function groupedBy<R>(rows: readonly R[], id: (r: R) => string): Map<string, R[]> {
  const by = new Map<string, R[]>();
  for (const r of rows) {
    const group = by.get(id(r));
    if (group) group.push(r);
    else by.set(id(r), [r]);
  }
  return by;
}

/** The aggregates of the user events naming each of `ids`, by request id (one row per dataset of the events). */
export async function flagRowsOf(tx: Tx, ids: readonly string[]): Promise<Map<string, FlagRow[]>> {
  const rows = await tx.all<FlagRow>(`${LINK_FLAGS_SQL} WHERE request_id = ANY($1::text[]) GROUP BY request_id, dataset_id`, [ids]);
  return groupedBy(rows, (r) => r.request_id);
}
