/**
 * What the report listings (searches, answers, recommendations) share in reading their rows: the
 * page, the latest rating joined as `r`, JSON columns read without failing the report, and the
 * ORDER BY of a `sort_by`/`sort_order` pair.
 */
import type { JsonColumn } from '../rows.js';
import { fromJson } from '../rows.js';

/** LIMIT and OFFSET of a listing page. */
export interface ReportWindow {
  readonly limit: number;
  readonly offset: number;
}

/** A rating as reports show it. */
export interface ReportRating {
  readonly rating: number;
  readonly note: string | null;
  readonly metadata: unknown;
}

/** The columns of the rating joined as `r`, named apart from the record's own. */
export const RATING_COLUMNS = 'r.rating AS rating_value, r.note AS rating_note, r.metadata AS rating_metadata';

/** JSON text of a column, parsed; a damaged value shows as `fallback`, not as a failed report. */
export const parsed: JsonColumn = <T>(text: unknown, fallback: T): T => {
  if (typeof text !== 'string') return fallback;
  try {
    return fromJson(text, fallback);
  } catch {
    return fallback;
  }
};

/** The rating of a row read with {@link RATING_COLUMNS}, its metadata read by `json`; null when unrated. */
export function ratingFromRow(r: Record<string, any>, json: JsonColumn): ReportRating | null {
  return r.rating_value === null || r.rating_value === undefined
    ? null
    : { rating: Number(r.rating_value), note: r.rating_note ?? null, metadata: json(r.rating_metadata, null) };
}

