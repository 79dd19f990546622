/**
 * The unchanged-store oracle: a read-only snapshot of every row of every table of
 * `<dataDir>/quarry.sqlite`, compared before and after a request that must not write.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'vitest';

/** Tables written asynchronously after a request (analytics records), left out of write checks. */
const ASYNC_TABLES = new Set(['search_queries', 'recommendation_queries']);

/** Rows of every table, by table name, in a stable order. */
export type StoreSnapshot = Record<string, unknown[]>;

/** Opens the store file read-only (the running processes keep writing through WAL). */
export function openStoreReadOnly(dataDir: string): Database.Database {
  const db = new Database(path.join(dataDir, 'quarry.sqlite'), { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  return db;
}

/** Every row of every table (including sqlite_sequence, so a rolled-back insert cannot hide). */
export function snapshotStore(dataDir: string): StoreSnapshot {
  const db = openStoreReadOnly(dataDir);
  try {
    const tables = (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]
    )
      .map((t) => t.name)
      // Analytics records arrive asynchronously (buffered, flushed by a job): not part of a request's writes.
      .filter((name) => !ASYNC_TABLES.has(name));
    const out: StoreSnapshot = {};
    // One read transaction: all tables from the same point in time.
    db.transaction(() => {
      for (const table of tables) {
        const cols = (db.prepare(`PRAGMA table_info("${table}")`).all() as { name: string }[]).map((c) => `"${c.name}"`);
        out[table] = db.prepare(`SELECT * FROM "${table}" ORDER BY ${cols.join(', ')}`).all();
      }
    })();
    return out;
  } finally {
    db.close();
  }
}

/** Row count of one table (optionally filtered by a WHERE clause with parameters). */
export function countRows(dataDir: string, table: string, where = '1 = 1', ...params: unknown[]): number {
  const db = openStoreReadOnly(dataDir);
  try {
    return (db.prepare(`SELECT COUNT(*) AS n FROM "${table}" WHERE ${where}`).get(...params) as { n: number }).n;
  } finally {
    db.close();
  }
}

/** Rows of a query (read-only). */
export function queryStore<T = Record<string, unknown>>(dataDir: string, sql: string, ...params: unknown[]): T[] {
  const db = openStoreReadOnly(dataDir);
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

/**
 * Runs a request that must be refused and asserts: the status (exact, or any 4xx when omitted),
 * a non-empty `{message}` matching `message` when given, and every row of the store unchanged.
 */
export async function expectRejected(
  dataDir: string,
  call: () => Promise<{ status: number; body: any; text: string }>,
  status?: number,
  message?: RegExp,
): Promise<{ status: number; body: any; text: string }> {
  const before = snapshotStore(dataDir);
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
  expect(snapshotStore(dataDir)).toEqual(before);
  return res;
}
