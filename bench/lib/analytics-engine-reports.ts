/**
 * The reports bench/analytics-engines.ts times: the same logic on SQLite and DuckDB, written
 * once per report with the few dialect differences switched on the engine (integer division,
 * percentiles, late row fetch). Each mirrors one of the reference's analytics reports
 * (/work/shared/reference/trieve-wire-format.md, "### Analytics"); a report is one or more
 * statements whose rows {@link Report.combine} turns into the answer compared across engines.
 */

/** The engines compared. */
export type Engine = 'sqlite' | 'duckdb';

/** A date filter: created_at in [from, to) (epoch ms). */
export interface DateRange {
  readonly from: number;
  readonly to: number;
}

/** One statement; `bigint` parameters are epoch ms (DuckDB binds them as BIGINT, not DOUBLE). */
export interface Statement {
  readonly sql: string;
  readonly params: readonly (string | bigint)[];
  /** SQLite only: read the first column of every row as a flat array (percentiles in JS). */
  readonly pluck?: boolean;
}

/** A report: its statements on an engine, and how their rows make the answer. */
export interface Report {
  readonly name: string;
  statements(engine: Engine, dataset: string, range: DateRange | undefined): Statement[];
  /** The answer from each statement's rows (default: the first statement's rows). */
  combine?(engine: Engine, results: unknown[][]): unknown[];
}

const HOUR = 3_600_000;
const DAY = 86_400_000;

/** Start of the fixed-size bucket of `column` (epoch ms): `/` truncates in SQLite, `//` in DuckDB. */
const bucket = (engine: Engine, ms: number, column: string): string =>
  engine === 'sqlite' ? `((${column} / ${ms}) * ${ms})` : `((${column} // ${ms}) * ${ms})`;

/** `dataset_id = ?` and the date range on `alias.` columns, with parameters in order. */
function where(dataset: string, range: DateRange | undefined, alias = ''): { sql: string; params: (string | bigint)[] } {
  const a = alias ? `${alias}.` : '';
  if (!range) return { sql: `${a}dataset_id = ?`, params: [dataset] };
  return { sql: `${a}dataset_id = ? AND ${a}created_at >= ? AND ${a}created_at < ?`, params: [dataset, BigInt(range.from), BigInt(range.to)] };
}

/**
 * Requests of `table` in range with at least one linked event (a click, a conversion), per day or
 * in all. Driven from the events: there are far fewer of them than requests, and each finds its
 * request by id (SQLite: the primary key; DuckDB: a hash join). A click may follow its search past
 * the range's end, so only the start bounds the events.
 */
function linked(engine: Engine, table: string, dataset: string, range: DateRange | undefined, condition: string, requestType: string, perDay: boolean): Statement {
  const w = where(dataset, range, 'q');
  const since = range ? ' AND e.created_at >= ?' : '';
  const t = perDay ? `${bucket(engine, DAY, 'q.created_at')} AS t, ` : '';
  return {
    sql: `SELECT ${t}COUNT(DISTINCT q.id) AS n FROM user_events e JOIN ${table} q ON q.id = e.request_id WHERE e.dataset_id = ? AND ${condition} AND e.request_type = '${requestType}'${since} AND ${w.sql}${perDay ? ' GROUP BY t' : ''}`,
    params: [dataset, ...(range ? [BigInt(range.from)] : []), ...w.params],
  };
}

/** Searches per day beside the linked ones per day (days with none linked count 0). */
function perDayRate(results: unknown[][], name: string): unknown[] {
  const hits = new Map((results[1] as { t: unknown; n: unknown }[]).map((r) => [String(r.t), r.n]));
  return (results[0] as { t: unknown; n: unknown }[]).map((r) => ({ t: r.t, searches: r.n, [name]: hits.get(String(r.t)) ?? 0 }));
}

/** Searches per day (the denominator of the rates). */
function searchesPerDay(engine: Engine, dataset: string, range: DateRange | undefined): Statement {
  const w = where(dataset, range);
  return { sql: `SELECT ${bucket(engine, DAY, 'created_at')} AS t, COUNT(*) AS n FROM search_queries WHERE ${w.sql} GROUP BY t ORDER BY t`, params: w.params };
}

/** Columns of a SearchQueryEvent page. */
const SEARCH_EVENT = 'id, search_type, query, request_params, latency, top_score, results, created_at, user_id, metadata';

/**
 * A page of search events in `order`: SQLite picks the 10 rowids first and reads only their rows
 * (its sorter would otherwise read every ~1 KB row in range); DuckDB's top-N already reads the
 * wide columns of the winners only.
 */
function eventPage(engine: Engine, dataset: string, range: DateRange | undefined, extra: string, order: string): Statement {
  const w = where(dataset, range);
  if (engine === 'duckdb') {
    return { sql: `SELECT ${SEARCH_EVENT} FROM search_queries WHERE ${w.sql}${extra} ORDER BY ${order} LIMIT 10`, params: w.params };
  }
  return {
    sql: `SELECT ${SEARCH_EVENT} FROM search_queries WHERE rowid IN (SELECT rowid FROM search_queries WHERE ${w.sql}${extra} ORDER BY ${order} LIMIT 10) ORDER BY ${order}`,
    params: w.params,
  };
}

/** Nearest-rank value at quantile q of `values` (reordered in place): quickselect, O(n). */
function select(values: Float64Array, q: number): number {
  // Nearest rank, as DuckDB's quantile_disc and bench/lib/metrics.ts quantile().
  const k = Math.min(values.length - 1, Math.max(0, Math.ceil(q * values.length) - 1));
  let lo = 0;
  let hi = values.length - 1;
  while (lo < hi) {
    const pivot = values[(lo + hi) >>> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (values[i]! < pivot) i++;
      while (values[j]! > pivot) j--;
      if (i <= j) {
        const t = values[i]!;
        values[i++] = values[j]!;
        values[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else break;
  }
  return values[k]!;
}

/** The reports timed, in print order. */
export const REPORTS: readonly Report[] = [
  {
    name: 'latency graph (hour)',
    statements: (e, ds, r) => {
      const w = where(ds, r);
      return [{ sql: `SELECT ${bucket(e, HOUR, 'created_at')} AS t, AVG(latency) AS v FROM search_queries WHERE ${w.sql} GROUP BY t ORDER BY t`, params: w.params }];
    },
  },
  {
    name: 'search usage (day)',
    statements: (e, ds, r) => {
      const w = where(ds, r);
      return [{ sql: `SELECT ${bucket(e, DAY, 'created_at')} AS t, COUNT(*) AS n FROM search_queries WHERE ${w.sql} GROUP BY t ORDER BY t`, params: w.params }];
    },
  },
  {
    name: 'search metrics p50/95/99',
    statements: (e, ds, r) => {
      const w = where(ds, r);
      if (e === 'duckdb') {
        return [{
          sql: `SELECT COUNT(*) AS n, AVG(latency) AS avg, quantile_disc(latency, 0.5) AS p50, quantile_disc(latency, 0.95) AS p95, quantile_disc(latency, 0.99) AS p99 FROM search_queries WHERE ${w.sql}`,
          params: w.params,
        }];
      }
      // SQLite has no percentile: one pass reads the latencies (from a covering index when there
      // is one) and JS selects the three ranks; three ORDER BY ... OFFSET k sorts would each scan.
      return [
        { sql: `SELECT COUNT(*) AS n, AVG(latency) AS avg FROM search_queries WHERE ${w.sql}`, params: w.params },
        { sql: `SELECT latency FROM search_queries WHERE ${w.sql}`, params: w.params, pluck: true },
      ];
    },
    combine: (e, results) => {
      if (e === 'duckdb') return results[0]!;
      const head = results[0]![0] as { n: number; avg: number | null };
      const values = Float64Array.from(results[1] as number[]);
      const p = (q: number): number | null => (values.length ? select(values, q) : null);
      return [{ n: head.n, avg: head.avg, p50: p(0.5), p95: p(0.95), p99: p(0.99) }];
    },
  },
  {
    name: 'head queries p1',
    statements: (_e, ds, r) => {
      const w = where(ds, r);
      return [{ sql: `SELECT query, COUNT(*) AS n FROM search_queries WHERE ${w.sql} GROUP BY query ORDER BY n DESC, query LIMIT 10`, params: w.params }];
    },
  },
  {
    name: 'no-result queries p1',
    statements: (e, ds, r) => [eventPage(e, ds, r, ' AND result_count = 0', 'created_at DESC, id DESC')],
  },
  {
    name: 'searches by latency p1',
    statements: (e, ds, r) => [eventPage(e, ds, r, '', 'latency DESC, id DESC')],
  },
  {
    name: 'count by type, method',
    statements: (_e, ds, r) => {
      const w = where(ds, r);
      return [{ sql: `SELECT search_type, search_method, COUNT(*) AS n FROM search_queries WHERE ${w.sql} GROUP BY search_type, search_method ORDER BY search_type, search_method`, params: w.params }];
    },
  },
  {
    name: 'CTR over time (day)',
    statements: (e, ds, r) => [searchesPerDay(e, ds, r), linked(e, 'search_queries', ds, r, "e.event_type = 'click'", 'search', true)],
    combine: (_e, results) => perDayRate(results, 'clicked'),
  },
  {
    name: 'conversion rate (day)',
    statements: (e, ds, r) => [searchesPerDay(e, ds, r), linked(e, 'search_queries', ds, r, 'e.is_conversion = 1', 'search', true)],
    combine: (_e, results) => perDayRate(results, 'converted'),
  },
  {
    name: 'searches per user (day)',
    statements: (e, ds, r) => {
      const w = where(ds, r);
      return [{
        sql: `SELECT ${bucket(e, DAY, 'created_at')} AS t, COUNT(*) * 1.0 / COUNT(DISTINCT user_id) AS v FROM search_queries WHERE ${w.sql} AND user_id IS NOT NULL GROUP BY t ORDER BY t`,
        params: w.params,
      }];
    },
  },
  {
    name: 'average rating (day)',
    statements: (e, ds, r) => {
      const w = where(ds, r, 's');
      return [{
        sql: `SELECT ${bucket(e, DAY, 's.created_at')} AS t, AVG(q.rating) AS v, COUNT(*) AS n FROM query_ratings q JOIN search_queries s ON s.id = q.query_id WHERE q.dataset_id = ? AND q.kind = 'search' AND ${w.sql} GROUP BY t ORDER BY t`,
        params: [ds, ...w.params],
      }];
    },
  },
  {
    name: 'event funnel',
    statements: (_e, ds, r) => {
      const w = where(ds, r);
      return [{ sql: `SELECT event_name, COUNT(*) AS n FROM user_events WHERE ${w.sql} GROUP BY event_name ORDER BY n DESC, event_name`, params: w.params }];
    },
  },
  {
    name: 'search revenue (day)',
    statements: (e, ds, r) => {
      const w = where(ds, r);
      return [{
        sql: `SELECT ${bucket(e, DAY, 'created_at')} AS t, SUM(revenue) AS revenue, COUNT(*) AS n FROM user_events WHERE ${w.sql} AND event_type = 'purchase' AND request_type = 'search' GROUP BY t ORDER BY t`,
        params: w.params,
      }];
    },
  },
  {
    name: 'RAG usage graph (hour)',
    statements: (e, ds, r) => {
      const w = where(ds, r);
      return [{ sql: `SELECT ${bucket(e, HOUR, 'created_at')} AS t, COUNT(*) AS n FROM rag_queries WHERE ${w.sql} GROUP BY t ORDER BY t`, params: w.params }];
    },
  },
  {
    name: 'recommendation CTR',
    statements: (e, ds, r) => {
      const w = where(ds, r);
      return [
        { sql: `SELECT COUNT(*) AS n FROM recommendation_queries WHERE ${w.sql}`, params: w.params },
        linked(e, 'recommendation_queries', ds, r, "e.event_type = 'click'", 'recommendation', false),
      ];
    },
    combine: (_e, results) => [{ recommendations: (results[0]![0] as { n: unknown }).n, clicked: (results[1]![0] as { n: unknown }).n }],
  },
];
