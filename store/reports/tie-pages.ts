/**
 * A page of records sorted by one column, ties by id ascending, read without sorting a whole block
 * of ties. The (dataset_id, column, id) indexes give a descending order with ties by id
 * descending, so a plain `ORDER BY column DESC, id LIMIT n OFFSET m` sorts every tie of the page's
 * last value: every answer of a dataset while no hallucination score is set (1.1 s at 10M
 * events), every search without results by top score. Instead the page's last value `t` is found
 * first (a walk of offset + limit index entries), and the page is taken from the records strictly
 * before `t` (fewer than offset + limit) and the first offset + limit of those at `t`, by id: the
 * same rows in the same order.
 */
import type { ReportWindow } from './report-rows.js';
import type { ReportSql } from './report-sql.js';

/** What {@link pageAcrossTies} reads. */
export interface TiePage {
  /** The selected columns of `q`. */
  readonly columns: string;
  /** The table as `q`, its joins and hint, up to (not including) its WHERE clause. */
  readonly from: string;
  /** The WHERE clause (`WHERE …`, or empty) and its values. */
  readonly where: { readonly sql: string; readonly params: readonly unknown[] };
  /** The sort column of `q`, unqualified. */
  readonly sortBy: string;
  readonly sortOrder: 'asc' | 'desc';
  readonly page: ReportWindow;
}

/** The rows of `q.page`, sorted by `q.sortBy` then by id ascending. */
export async function pageAcrossTies<T extends Record<string, unknown> = Record<string, any>>(sql: ReportSql, q: TiePage): Promise<T[]> {
  const order = `q.${q.sortBy} ${q.sortOrder === 'asc' ? 'ASC' : 'DESC'}`;
  const from = `${q.from} ${q.where.sql}`;
  const and = (condition: string): string => `${q.from} ${q.where.sql === '' ? 'WHERE' : `${q.where.sql} AND`} ${condition}`;
  const params = q.where.params;
  const depth = q.page.offset + q.page.limit;
  const [last] = await sql.all<{ v: unknown }>(`SELECT q.${q.sortBy} AS v FROM ${from} ORDER BY ${order} LIMIT 1 OFFSET ?`, [...params, depth - 1]);
  if (last === undefined) {
    // Fewer records than the page reaches: few enough to sort.
    return sql.all<T>(`SELECT ${q.columns} FROM ${from} ORDER BY ${order}, q.id LIMIT ? OFFSET ?`, [...params, q.page.limit, q.page.offset]);
  }
  return sql.all<T>(
    `SELECT * FROM (
       SELECT * FROM (SELECT ${q.columns} FROM ${and(`q.${q.sortBy} ${q.sortOrder === 'asc' ? '<' : '>'} ?`)}) before
       UNION ALL
       SELECT * FROM (SELECT ${q.columns} FROM ${and(`q.${q.sortBy} = ?`)} ORDER BY q.id LIMIT ?) at_last
     ) q ORDER BY ${order}, q.id LIMIT ? OFFSET ?`,
    [...params, last.v, ...params, last.v, depth, q.page.limit, q.page.offset],
  );
}
