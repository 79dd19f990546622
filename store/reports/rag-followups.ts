/**
 * `followup_queries`: `{top_queries: [{query, count}]}`, a page of the user messages of answers
 * that are not the first of their topic (the first taken over all the topic's answers, even
 * outside the filter), most asked first, ties by message in code-point order.
 *
 * Whether an answer is a follow-up is stored with it, and the follow-ups are counted per message
 * (../followup-batch.ts). With nothing but a rag type narrowing the answers, the page is read from
 * the totals by their rank index. With a date range too, the flagged answers of the range are
 * counted through the partial index that holds only follow-ups (on PostgreSQL two, by the
 * message's size: ../text-keys.ts); when the range covers most of the
 * dataset's history, the totals less the follow-ups outside it are read instead (fewer rows).
 * Any other filter counts the flagged answers that match it.
 */
import { FOLLOWUP_TOTALS, FOLLOWUP_TYPE_TOTALS } from '../followup-batch.js';
import { pgTextFits, rankedText } from '../text-keys.js';
import { ragSelection, type RagAnalyticsFilter } from './rag-filter.js';
import { binaryOrder } from './rag-series.js';
import type { ReportWindow } from './report-rows.js';
import { Where, type Dialect, type RangeBounds, type ReportSql } from './report-sql.js';

/** `{query, count}` of the page. */
interface QueryCount {
  readonly query: string;
  readonly count: number;
}

/** Share of the history's time span above which a range is read as the totals less what lies outside it. */
const MOST_OF_HISTORY = 0.5;

/** The condition on `q.created_at` that holds outside `range` (a row is outside when it breaks one bound). */
function outside(range: RangeBounds): { condition: string; params: number[] } {
  const broken: [string, number | undefined][] = [
    ['q.created_at <= ?', range.gt],
    ['q.created_at < ?', range.gte],
    ['q.created_at >= ?', range.lt],
    ['q.created_at > ?', range.lte],
  ];
  const given = broken.filter((b): b is [string, number] => b[1] !== undefined);
  // A range without bounds holds every row.
  if (given.length === 0) return { condition: '1 = 0', params: [] };
  return { condition: `(${given.map(([c]) => c).join(' OR ')})`, params: given.map(([, v]) => v) };
}

/**
 * FROM and WHERE, with the WHERE's parameters, of the follow-ups among the answers `from` and
 * `where` select (`where` requiring `q.followup = 1`), `user_message` of each as `q.user_message`.
 * On PostgreSQL the union of the short messages and the long ones, each read through its own
 * partial index (../text-keys.ts): only the short ones' index holds the message, for index-only counts.
 */
function followupRows(dialect: Dialect, from: string, where: Where): { from: string; where: string; params: unknown[] } {
  if (dialect === 'sqlite') return { from, where: where.sql(), params: where.params };
  const part = (short: boolean): string => `SELECT q.user_message FROM ${from} ${where.sql()} AND ${pgTextFits('q.user_message', short)}`;
  return { from: `(${part(true)} UNION ALL ${part(false)}) q`, where: '', params: [...where.params, ...where.params] };
}

/** Whether `range` covers most of the time between the dataset's first and last follow-up (each one index probe, two on PostgreSQL: {@link followupRows}). */
async function coversMostOfHistory(sql: ReportSql, datasetId: string, range: RangeBounds): Promise<boolean> {
  const edge = (order: 'ASC' | 'DESC', fits = '') =>
    `(SELECT q.created_at FROM rag_queries q WHERE q.dataset_id = ? AND q.followup = 1${fits} ORDER BY q.created_at ${order} LIMIT 1)`;
  const both = (order: 'ASC' | 'DESC') => [true, false].map((short) => edge(order, ` AND ${pgTextFits('q.user_message', short)}`)).join(', ');
  const [row] = await sql.all<{ first: number | null; last: number | null }>(
    sql.dialect === 'sqlite' ? `SELECT ${edge('ASC')} AS first, ${edge('DESC')} AS last` : `SELECT LEAST(${both('ASC')}) AS first, GREATEST(${both('DESC')}) AS last`,
    sql.dialect === 'sqlite' ? [datasetId, datasetId] : [datasetId, datasetId, datasetId, datasetId],
  );
  if (row?.first === null || row?.first === undefined || row.last === null) return false;
  const first = Number(row.first);
  const last = Number(row.last);
  const from = Math.max(first, range.gt ?? range.gte ?? first);
  const to = Math.min(last, range.lt ?? range.lte ?? last);
  return to - from > MOST_OF_HISTORY * (last - first);
}

const page = (rows: readonly { query: string; n: unknown }[]): { top_queries: QueryCount[] } => ({ top_queries: rows.map((r) => ({ query: r.query, count: Number(r.n) })) });

/** `followup_queries` of the answers of `datasetId` matching the filter. */
export async function followupQueries(
  sql: ReportSql,
  datasetId: string,
  req: { filter: RagAnalyticsFilter; page: ReportWindow },
): Promise<{ top_queries: QueryCount[] }> {
  const { ragType, dateRange, ...rest } = req.filter;
  const window = [req.page.limit, req.page.offset];
  if (Object.values(rest).every((v) => v === undefined) && (dateRange === undefined || (await coversMostOfHistory(sql, datasetId, dateRange)))) {
    const totals = new Where().add('t.dataset_id = ?', datasetId);
    if (ragType !== undefined) totals.add('t.rag_type = ?', ragType);
    const table = (ragType === undefined ? FOLLOWUP_TOTALS : FOLLOWUP_TYPE_TOTALS).table;
    if (dateRange === undefined) {
      return page(
        await sql.all<{ query: string; n: number }>(
          `SELECT t.user_message AS query, t.followups AS n FROM ${table} t ${totals.sql()}
           ORDER BY t.followups DESC, ${rankedText(sql.dialect, 't.user_message')} LIMIT ? OFFSET ?`,
          [...totals.params, ...window],
        ),
      );
    }
    const out = outside(dateRange);
    const others = new Where().add('q.dataset_id = ?', datasetId).add('q.followup = 1');
    if (ragType !== undefined) others.add('q.rag_type = ?', ragType);
    others.add(out.condition, ...out.params);
    const o = followupRows(sql.dialect, 'rag_queries q', others);
    return page(
      await sql.all<{ query: string; n: number }>(
        `SELECT t.user_message AS query, t.followups - COALESCE(o.n, 0) AS n
         FROM ${table} t LEFT JOIN (SELECT q.user_message, COUNT(*) AS n FROM ${o.from} ${o.where} GROUP BY q.user_message) o ON o.user_message = t.user_message
         ${totals.sql()} AND t.followups - COALESCE(o.n, 0) > 0
         ORDER BY n DESC, ${binaryOrder(sql.dialect, 't.user_message')} LIMIT ? OFFSET ?`,
        [...o.params, ...totals.params, ...window],
      ),
    );
  }
  const { from, where } = ragSelection(sql.dialect, datasetId, req.filter);
  const f = followupRows(sql.dialect, from, where.add('q.followup = 1'));
  return page(
    await sql.all<{ query: string; n: number }>(
      `SELECT q.user_message AS query, COUNT(*) AS n FROM ${f.from} ${f.where}
       GROUP BY q.user_message ORDER BY n DESC, ${binaryOrder(sql.dialect, 'q.user_message')} LIMIT ? OFFSET ?`,
      [...f.params, ...window],
    ),
  );
}
