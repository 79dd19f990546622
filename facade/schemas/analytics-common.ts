/**
 * The pieces every analytics body shares: date and number ranges (refused when empty by
 * construction: a lower bound above an upper one), granularity, sort order and the report page.
 */
import { z } from 'zod';
import type { RangeBounds } from '../../store/reports/report-sql.js';
import { GRANULARITIES } from '../../store/reports/report-sql.js';
import { finite, timestamp } from './common.js';

/** Rows per page of every paged report and listing (the reference's). */
export const REPORT_PAGE_SIZE = 10;

/** Whether a range's lower bound lies above its upper bound (then nothing can match: the caller erred). */
function inverted(r: RangeBounds): boolean {
  const low = r.gt ?? r.gte;
  const high = r.lt ?? r.lte;
  if (low === undefined || high === undefined) return false;
  // Equal bounds match only when both are inclusive.
  return low > high || (low === high && (r.gt !== undefined || r.lt !== undefined));
}

/** A `{gt, gte, lt, lte}` range over `bound` values, refused when inverted. */
function range<T extends z.ZodType<number>>(bound: T, what: string) {
  return z
    .object({ gt: bound.optional(), gte: bound.optional(), lt: bound.optional(), lte: bound.optional() })
    .refine((r) => !inverted(r as RangeBounds), { message: `${what} is empty: its lower bound is above its upper bound` })
    .transform((r) => r as RangeBounds);
}

/** `date_range`: wire timestamps (UTC unless zoned) → epoch-ms bounds. */
export const dateRange = range(timestamp as unknown as z.ZodType<number>, 'date_range');

/** `top_score`-like range of floats. */
export const floatRange = range(finite, 'range');

/** `query_rating`-like range of integers. */
export const intRange = range(z.number().int(), 'range');

/** `granularity` (bucket size of graphs). */
export const granularity = z.enum(GRANULARITIES);

/** `sort_order`. */
export const sortOrder = z.enum(['desc', 'asc']);

/** A report's 1-based `page` (0 is read as 1, negative refused). */
export const reportPage = z
  .number()
  .int()
  .min(0, { message: 'page must be 0 or more' })
  .max(1_000_000, { message: 'page must be at most 1000000' })
  .transform((n) => Math.max(1, n));

/** LIMIT and OFFSET of a report page. */
export const pageWindow = (page: number, size = REPORT_PAGE_SIZE): { limit: number; offset: number } => ({ limit: size, offset: (page - 1) * size });
