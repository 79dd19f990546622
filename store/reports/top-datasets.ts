/**
 * The organization's busiest datasets (`POST /api/analytics/top`): its live datasets with the
 * most searches, RAG answers or recommendations recorded in the date range, most first (ties by
 * dataset id), at most {@link TOP_DATASETS}. A dataset with none in the range is not listed.
 * The organization's datasets are read in the same statement, so an organization with many
 * datasets costs no list of ids and a dataset flagged deleted drops out at once.
 */
import type { RequestType } from '../../core/domain/user-events.js';
import { Where, type RangeBounds, type ReportSql } from './report-sql.js';

/** How many datasets the report lists (the reference's). */
export const TOP_DATASETS = 10;

/** Which records each type counts. */
const TABLE_OF: Record<RequestType, string> = {
  search: 'search_queries',
  rag: 'rag_queries',
  recommendation: 'recommendation_queries',
};

/** A validated `POST /api/analytics/top`. */
export interface TopDatasetsRequest {
  readonly type: RequestType;
  /** Bounds on the records' `created_at` (epoch ms). */
  readonly dateRange?: RangeBounds;
}

/** One dataset of the answer, as the wire has it. */
export interface TopDataset {
  readonly dataset_id: string;
  readonly dataset_tracking_id: string | null;
  readonly total_queries: number;
}

/** The organization's top datasets by records of the asked type. */
export async function topDatasets(sql: ReportSql, organizationId: string, request: TopDatasetsRequest): Promise<TopDataset[]> {
  // A count per dataset (each an index range count, no row read when only dates filter), not
  // one GROUP BY over every record of the organization, which sorts them all to group them.
  const records = new Where().add('q.dataset_id = d.id').range('q.created_at', request.dateRange);
  const rows = await sql.all<{ dataset_id: string; dataset_tracking_id: string | null; total_queries: number }>(
    `SELECT d.id AS dataset_id, d.tracking_id AS dataset_tracking_id,
       (SELECT COUNT(*) FROM ${TABLE_OF[request.type]} q ${records.sql()}) AS total_queries
     FROM datasets d WHERE d.organization_id = ? AND d.deleted = 0
     ORDER BY total_queries DESC, d.id
     LIMIT ${TOP_DATASETS}`,
    [...records.params, organizationId],
  );
  // Datasets without records sort last: dropping them after the LIMIT leaves the same list.
  return rows.filter((r) => Number(r.total_queries) > 0).map((r) => ({ dataset_id: r.dataset_id, dataset_tracking_id: r.dataset_tracking_id ?? null, total_queries: Number(r.total_queries) }));
}
