/**
 * PostgreSQL's side of the filter rollups (../filter-rollup-batch.ts): searches inserted or
 * deleted, applied to both tables inside the transaction that wrote them, one upsert per table
 * (keys in sorted order), and the fill from the searches already stored.
 *
 * The upsert adds signed deltas and reads nothing, but a row left at zero is deleted: it is
 * done under the rollup lock (./rollup-reads.ts), taken after the transaction's own searches were
 * written, like the search rollups' writer that runs beside it (./search-rollup.ts).
 */
import { FILL_FROM, FILL_SQL, fillHour, FILTER_ROLLUP_TABLES, filterRollupDeltas, type FilteredSearch } from '../filter-rollup-batch.js';
import { HOUR_MS } from '../search-rollup-batch.js';
import type { Sql, Tx } from './database.js';
import { lockRollups } from './rollup-reads.js';

/** The request params a RETURNING clause of `search_queries` adds for {@link applyFilterRollup}. */
export const FILTER_RETURNING = ', request_params AS "requestParams"';

/** What the writer needs of a connection: a statement run with `$n` parameters (a transaction, or the migration's client). */
type Run = (sql: string, params: unknown[]) => Promise<unknown>;

/** Adds each table's deltas of `rows` (`sign` 1: inserted, -1: deleted), deleting rows left at zero. */
async function addDeltas(run: Run, rows: readonly FilteredSearch[], sign: 1 | -1): Promise<void> {
  for (const t of FILTER_ROLLUP_TABLES) {
    const deltas = filterRollupDeltas(rows, t, sign);
    if (deltas.length === 0) continue;
    const keys = [deltas.map((d) => d.datasetId), deltas.map((d) => d.start), deltas.map((d) => d.searchType), deltas.map((d) => d.searchMethod), deltas.map((d) => d.key)];
    await run(
      `INSERT INTO ${t.table} AS r (dataset_id, ${t.column}, search_type, search_method, key, clause, field, filter_type, value, searches)
       SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bigint[])
       ON CONFLICT (dataset_id, ${t.column}, search_type, search_method, key) DO UPDATE SET searches = r.searches + excluded.searches`,
      [...keys, deltas.map((d) => d.clause), deltas.map((d) => d.field), deltas.map((d) => d.filterType), deltas.map((d) => d.value), deltas.map((d) => d.searches)],
    );
    if (sign < 0) {
      await run(
        `DELETE FROM ${t.table} r USING unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[]) AS k(dataset_id, start, search_type, search_method, key)
         WHERE r.dataset_id = k.dataset_id AND r.${t.column} = k.start AND r.search_type = k.search_type AND r.search_method = k.search_method AND r.key = k.key
           AND r.searches <= 0`,
        keys,
      );
    }
  }
}

/** Applies searches just inserted (`sign` 1) or deleted (-1) in `tx` (as RETURNING gave them, with {@link FILTER_RETURNING}). */
export async function applyFilterRollup(tx: Tx, rows: readonly FilteredSearch[], sign: 1 | -1): Promise<void> {
  if (rows.length === 0) return;
  await lockRollups(tx);
  await addDeltas((sql, params) => tx.run(sql, params), rows, sign);
}

/**
 * Fills the filter rollups from the searches already stored (their JSON is parsed by
 * ../filter-uses.ts, which SQL cannot match on both engines), an hour at a time; run it inside
 * the migration's transaction, on empty tables.
 */
export async function fillPgFilterRollup(sql: Sql): Promise<void> {
  const p = (n: number): string => `$${n}`;
  const next = async (from: number): Promise<number | null> => fillHour((await sql.get<{ at: unknown }>(FILL_SQL.next(p), [from]))?.at);
  for (let start = await next(FILL_FROM); start !== null; start = await next(start + HOUR_MS)) {
    const rows = await sql.all<FilteredSearch & Record<string, unknown>>(FILL_SQL.hour(p), [start, start + HOUR_MS]);
    await addDeltas((text, params) => sql.run(text, params), rows, 1);
  }
}
