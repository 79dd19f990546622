/**
 * Reading the store behind the service's back, on either store: SQLite at
 * `<dataDir>/quarry.sqlite`, or the PostgreSQL database of `databaseUrl`. The unchanged-store
 * oracle (a snapshot of every row of every table, compared before and after a request that must
 * not write) and the row checks of the tests are built on it.
 *
 * Rows come back alike from both stores (the PostgreSQL schema keeps SQLite's value types: JSON
 * as text, booleans 0/1, epoch ms as integers, BLOB/BYTEA as Buffer), so one assertion serves both.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { expect } from 'vitest';

/**
 * Tables written asynchronously after a request (analytics records, and the search and record
 * rollups written with them), left out of write checks.
 */
const ASYNC_TABLES = new Set([
  'search_queries',
  'recommendation_queries',
  'rag_queries',
  'search_rollup_hourly',
  'search_rollup_daily',
  'search_query_totals',
  'search_filter_rollup_hourly',
  'search_filter_rollup_daily',
  'search_query_hourly',
  'search_query_daily',
  'record_rollup_hourly',
  'record_rollup_daily',
  'record_event_rollup_hourly',
  'record_event_rollup_daily',
  'rag_message_totals',
  'analytics_users',
  'user_rollup_hourly',
  'user_rollup_daily',
  'rag_followup_totals',
  'rag_followup_type_totals',
]);

/** Where a stack stores: SQLite in `dataDir` when `databaseUrl` is null, else that PostgreSQL database. A {@link Stack} is one. */
export interface StoreLocation {
  readonly dataDir: string;
  readonly databaseUrl: string | null;
}

/** Rows of every table, by table name, in a stable order. */
export type StoreSnapshot = Record<string, unknown[]>;

/** Runs one statement with `?` placeholders inside a {@link readStore} transaction: its rows. */
export type StoreQuery = <T = Record<string, unknown>>(sql: string, ...params: unknown[]) => Promise<T[]>;

/** Runs statements without parameters inside a {@link readStore} transaction, in one round trip on PostgreSQL: the rows of each. */
export type StoreQueryMany = (statements: readonly string[]) => Promise<unknown[][]>;

/** Whether the location is a PostgreSQL database (for the few queries that need a store-aware branch). */
export function isPostgres(loc: StoreLocation): boolean {
  return loc.databaseUrl !== null;
}

// BIGINT (epoch ms, counts) and NUMERIC (SUM of integers) as numbers, as better-sqlite3 gives
// them and as the PostgreSQL store itself reads them (store/postgres/database.ts).
const toNumber = (v: string): number => Number(v);
const PG_TYPES: pg.CustomTypesConfig = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC) return toNumber;
    return pg.types.getTypeParser(oid, format);
  },
};

/**
 * A small pool per database: a snapshot on a new connection cost PostgreSQL a backend start each
 * time (two snapshots per case of the bad-input sweep). Idle connections close after a second and
 * never hold the test process open.
 */
const pools = new Map<string, pg.Pool>();

function pgPool(url: string): pg.Pool {
  let pool = pools.get(url);
  if (!pool) {
    pool = new pg.Pool({ connectionString: url, types: PG_TYPES, max: 4, idleTimeoutMillis: 1000, allowExitOnIdle: true });
    // An idle connection the server ended (a restart in an outage test) is dropped by the pool;
    // without a listener the error would crash the test worker.
    pool.on('error', () => {});
    pools.set(url, pool);
  }
  return pool;
}

/** `?` placeholders as PostgreSQL's `$1..$n`; a `?` inside a quoted string or identifier stays. */
function toPgPlaceholders(sql: string): string {
  let n = 0;
  let quote: string | null = null;
  let out = '';
  for (const ch of sql) {
    if (quote !== null) {
      // A doubled quote ('' or "") closes and reopens: the same state after both characters.
      if (ch === quote) quote = null;
      out += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      out += ch;
    } else {
      out += ch === '?' ? `$${++n}` : ch;
    }
  }
  return out;
}

/**
 * Runs `read` inside one read-only transaction of the store, so that all its queries see the
 * same point in time (the running processes keep writing meanwhile). A connection of its own
 * (SQLite), or one of a pool of the database's (PostgreSQL).
 */
export async function readStore<R>(loc: StoreLocation, read: (query: StoreQuery, many: StoreQueryMany) => Promise<R>): Promise<R> {
  if (loc.databaseUrl !== null) {
    const client = await pgPool(loc.databaseUrl).connect();
    let failed: Error | undefined;
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const query: StoreQuery = async <T>(sql: string, ...params: unknown[]) =>
        (await client.query(toPgPlaceholders(sql), params)).rows as T[];
      // Without parameters pg sends the text as one simple query, which may hold many statements.
      const many: StoreQueryMany = async (statements) => {
        if (statements.length === 0) return [];
        const results = (await client.query(statements.join(';\n'))) as unknown as pg.QueryResult | pg.QueryResult[];
        return (Array.isArray(results) ? results : [results]).map((r) => r.rows as unknown[]);
      };
      const out = await read(query, many);
      await client.query('COMMIT');
      return out;
    } catch (err) {
      failed = err as Error;
      throw err;
    } finally {
      // A failed read may leave the transaction open (or the session dead): that connection is
      // closed, not reused.
      client.release(failed);
    }
  }
  // Read-only: the running processes keep writing through WAL.
  const db = new Database(path.join(loc.dataDir, 'quarry.sqlite'), { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    // A deferred transaction takes its read snapshot at the first read and keeps it until COMMIT.
    db.exec('BEGIN');
    const query: StoreQuery = <T>(sql: string, ...params: unknown[]) => Promise.resolve(db.prepare(sql).all(...params) as T[]);
    const many: StoreQueryMany = (statements) => Promise.resolve(statements.map((sql) => db.prepare(sql).all()));
    const out = await read(query, many);
    db.exec('COMMIT');
    return out;
  } finally {
    db.close();
  }
}

/**
 * Every row of every table. On SQLite that includes sqlite_sequence, so a rolled-back insert
 * cannot hide. PostgreSQL keeps its counters in sequences (the identity of change_log.seq), which
 * are not transactional: a rolled-back insert advances them too, so they would report a write
 * that did not happen, and they are left out; a committed insert still shows as a row.
 * Tables written asynchronously after a request (analytics) are left out unless `withAsync`
 * (a store test, where nothing writes behind its back).
 */
export async function snapshotStore(loc: StoreLocation, { withAsync = false } = {}): Promise<StoreSnapshot> {
  const postgres = isPostgres(loc);
  return readStore(loc, async (query, many) => {
    const tables = (await tableColumns(loc, query)).filter(([name]) => withAsync || !ASYNC_TABLES.has(name));
    const rows = await many(tables.map(([table, cols]) => `SELECT * FROM "${table}" ORDER BY ${cols.map((c) => `"${c}"`).join(', ')}`));
    return Object.fromEntries(tables.map(([table], i) => [table, rows[i]!]));
  });

  /**
   * The tables and their columns, read once per database: the schema does not change once a
   * stack has migrated it, and PostgreSQL's information_schema took most of a snapshot's time
   * (two snapshots per case of the bad-input sweep).
   */
  async function tableColumns(at: StoreLocation, query: StoreQuery): Promise<[string, string[]][]> {
    const key = postgres ? `pg ${at.databaseUrl}` : `sqlite ${at.dataDir}`;
    const known = schemaCache.get(key);
    if (known) return known;
    const tables = (
      await query<{ name: string }>(
        postgres
          ? "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name"
          : "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
      )
    )
      .map((t) => t.name);
    const out: [string, string[]][] = [];
    for (const table of tables) {
      const cols = (
        await query<{ name: string }>(
          postgres
            ? "SELECT column_name AS name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = ? ORDER BY ordinal_position"
            : `PRAGMA table_info("${table}")`,
          ...(postgres ? [table] : []),
        )
      ).map((c) => c.name);
      out.push([table, cols]);
    }
    // Stacks and test stores migrate before their first snapshot.
    schemaCache.set(key, out);
    return out;
  }
}

/** Tables and columns by database (see snapshotStore). */
const schemaCache = new Map<string, [string, string[]][]>();

/** Row count of one table (optionally filtered by a WHERE clause with `?` parameters). */
export async function countRows(loc: StoreLocation, table: string, where = '1 = 1', ...params: unknown[]): Promise<number> {
  const rows = await readStore(loc, (query) => query<{ n: number }>(`SELECT COUNT(*) AS n FROM "${table}" WHERE ${where}`, ...params));
  return rows[0]!.n;
}

/** Rows of one read-only query with `?` parameters (SQL both stores understand). */
export async function queryStore<T = Record<string, unknown>>(loc: StoreLocation, sql: string, ...params: unknown[]): Promise<T[]> {
  return readStore(loc, (query) => query<T>(sql, ...params));
}

/**
 * Runs a request that must be refused and asserts: the status (exact, or any 4xx when omitted),
 * a non-empty `{message}` matching `message` when given, and every row of the store unchanged.
 */
export async function expectRejected(
  loc: StoreLocation,
  call: () => Promise<{ status: number; body: any; text: string }>,
  status?: number,
  message?: RegExp,
): Promise<{ status: number; body: any; text: string }> {
  const before = await snapshotStore(loc);
  const res = await call();
  if (status === undefined) {
    expect(res.status, res.text).toBeGreaterThanOrEqual(400);
    expect(res.status, res.text).toBeLessThan(500);
  } else {
    expect(res.status, res.text).toBe(status);
  }
  expect(typeof res.body?.message, res.text).toBe('string');
  expect((res.body.message as string).length).toBeGreaterThan(0);
  if (message) expect(res.body.message).toMatch(message);
  expect(await snapshotStore(loc)).toEqual(before);
  return res;
}
