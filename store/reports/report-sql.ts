/**
 * The one SQL surface of the analytics reports. Every report is written once, with `?`
 * placeholders, against the tables both stores share (same columns and value types: epoch-ms
 * integers, JSON as text, booleans 0/1); the few expressions that differ between SQLite and
 * PostgreSQL (calendar buckets, JSON fields, casts) come from the helpers here, switched on
 * {@link ReportSql.dialect}. Each engine supplies a {@link ReportSql}.
 */

import { QuarryError } from '../../core/domain/errors.js';

/**
 * The 504 of a report one of whose statements ran past the deadline, the same on both stores; it
 * says how to ask for less, since the same report asked again would take as long.
 */
export function reportTimeout(timeoutMs: number, cause?: unknown): QuarryError {
  return new QuarryError(
    'timeout',
    `The report took longer than ${timeoutMs} ms and was stopped. Ask for less: a shorter date_range, or a filter (search_type, query, component_name, ...).`,
    { cause },
  );
}

/** The SQL engines reports run on. */
export type Dialect = 'sqlite' | 'postgres';

/** Read-only SQL for reports. */
export interface ReportSql {
  readonly dialect: Dialect;
  /** Every row of one read-only statement; `sql` uses `?` placeholders, bound in order. */
  all<R extends Record<string, unknown> = Record<string, any>>(sql: string, params: readonly unknown[]): Promise<R[]>;
}

/** `?` placeholders as PostgreSQL numbers them (`$1`, `$2`, …). Report SQL holds no `?` in literals. */
export function numberPlaceholders(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** Sizes of a report's time buckets (the reference's `Granularity`). */
export const GRANULARITIES = ['second', 'minute', 'hour', 'day', 'month'] as const;

/** One of {@link GRANULARITIES}. */
export type Granularity = (typeof GRANULARITIES)[number];

const FIXED_BUCKET_MS: Record<Exclude<Granularity, 'month'>, number> = {
  second: 1000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
};

/**
 * An SQL expression for the start of the UTC bucket holding `column` (epoch ms), as epoch ms.
 * Fixed sizes are integer arithmetic (the same in both engines); a month needs the calendar.
 */
export function bucketStart(dialect: Dialect, granularity: Granularity, column: string): string {
  if (granularity !== 'month') {
    const ms = FIXED_BUCKET_MS[granularity];
    return `((${column} / ${ms}) * ${ms})`;
  }
  return dialect === 'sqlite'
    ? `(CAST(strftime('%s', ${column} / 1000, 'unixepoch', 'start of month') AS INTEGER) * 1000)`
    : `(CAST(EXTRACT(EPOCH FROM date_trunc('month', to_timestamp(${column} / 1000.0) AT TIME ZONE 'UTC')) AS BIGINT) * 1000)`;
}

/**
 * The string at `key` of the JSON object held as text in `column`; null when absent or not a
 * string. Only strings: SQLite's json_extract gives numbers and booleans as SQL numbers where
 * PostgreSQL's `->>` gives their text, so `{"k": 1}` would match '1' on one engine only.
 * PostgreSQL's jsonb refuses the escape `\u0000` that JSON text may hold (SQLite keeps it): it
 * becomes U+FFFD before the cast, the same width, so the text stays valid JSON.
 */
export function jsonText(dialect: Dialect, column: string, key: string): string {
  if (!/^[A-Za-z0-9_]+$/.test(key)) throw new Error(`unsafe JSON key ${key}`);
  if (dialect === 'sqlite') return `(CASE WHEN json_type(${column}, '$.${key}') = 'text' THEN json_extract(${column}, '$.${key}') END)`;
  const value = `(replace(${column}, '\\u0000', '\\ufffd')::jsonb -> '${key}')`;
  return `(CASE WHEN jsonb_typeof(${value}) = 'string' THEN ${value} #>> '{}' END)`;
}

/** The JSON text of the object at `key` of the JSON object held as text in `column`; null when absent or not an object. */
export function jsonObjectText(dialect: Dialect, column: string, key: string): string {
  if (!/^[A-Za-z0-9_]+$/.test(key)) throw new Error(`unsafe JSON key ${key}`);
  if (dialect === 'sqlite') return `(CASE WHEN json_type(${column}, '$.${key}') = 'object' THEN json_extract(${column}, '$.${key}') END)`;
  const value = `(replace(${column}, '\\u0000', '\\ufffd')::jsonb -> '${key}')`;
  return `(CASE WHEN jsonb_typeof(${value}) = 'object' THEN ${value}::text END)`;
}

/** `expr` as a floating-point number (integer division and averages must not truncate). */
export const asReal = (dialect: Dialect, expr: string): string => (dialect === 'sqlite' ? `CAST(${expr} AS REAL)` : `CAST(${expr} AS DOUBLE PRECISION)`);

/**
 * A report's time stamp as the reference prints ClickHouse's: `YYYY-MM-DD HH:MM:SS` in UTC, no
 * zone (from epoch ms).
 */
export function reportTimestamp(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

/** Bounds of a range filter (`date_range`, `top_score`, `query_rating`); each absent one is open. */
export interface RangeBounds {
  readonly gt?: number;
  readonly gte?: number;
  readonly lt?: number;
  readonly lte?: number;
}

/** A WHERE clause built one condition at a time, with its parameters in order. */
export class Where {
  private readonly conditions: string[] = [];
  /** The bound values, in placeholder order. */
  readonly params: unknown[] = [];

  /** Adds a condition with `?` placeholders and their values. */
  add(condition: string, ...values: unknown[]): this {
    this.conditions.push(condition);
    this.params.push(...values);
    return this;
  }

  /** Adds the bounds of `range` on `column` (none when the range is absent). */
  range(column: string, range: RangeBounds | undefined): this {
    if (!range) return this;
    if (range.gt !== undefined) this.add(`${column} > ?`, range.gt);
    if (range.gte !== undefined) this.add(`${column} >= ?`, range.gte);
    if (range.lt !== undefined) this.add(`${column} < ?`, range.lt);
    if (range.lte !== undefined) this.add(`${column} <= ?`, range.lte);
    return this;
  }

  /** `WHERE …` (or nothing when there is no condition). */
  sql(): string {
    return this.conditions.length === 0 ? '' : `WHERE ${this.conditions.join(' AND ')}`;
  }
}
