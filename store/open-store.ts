/** Opens the store a process is configured for: PostgreSQL when a database URL is given, else SQLite in the data directory. */
import type { Store } from './repository.js';

/** Where the store is and how this process uses it. */
export interface OpenStoreOptions {
  /** Directory of the SQLite file (used when {@link databaseUrl} is null). */
  readonly dataDir: string;
  /** postgres:// URL of the PostgreSQL store, or null for SQLite. */
  readonly databaseUrl: string | null;
  /** Connections to PostgreSQL. */
  readonly poolSize?: number;
  /** Bytes of SQLite read caches (sqlite-store.ts); PostgreSQL keeps none. */
  readonly readCacheBytes?: number;
  /**
   * SQLite only: run writes in a thread of their own at this nice value (threaded-store.ts), so
   * a synchronous write transaction does not hold the caller's event loop. PostgreSQL's writes
   * are network round trips and never hold it.
   */
  readonly writeThread?: { readonly nice: number } | null;
  /**
   * The analytics reports of the process that answers them (the HTTP process): the longest one
   * statement may run (PostgreSQL: `statement_timeout`), and on SQLite the nice value of the
   * processes they run in (sqlite/report-process.ts). null: in line and without a deadline, for
   * processes that run no reports.
   */
  readonly reports?: { readonly nice: number; readonly timeoutMs: number } | null;
}

/** Which store a configuration names, for logs and health: `postgres` or `sqlite`. */
export function storeKind(options: Pick<OpenStoreOptions, 'databaseUrl'>): 'postgres' | 'sqlite' {
  return options.databaseUrl ? 'postgres' : 'sqlite';
}

/**
 * Opens (creating and migrating as needed) the configured store. Each engine's code and driver
 * load only when chosen: `pg` and its ~20 modules in a SQLite process, or better-sqlite3 and the
 * SQLite store in a PostgreSQL one, took ~0.1-0.2 s of CPU in a profile of each process start.
 */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  if (options.databaseUrl) {
    const { openPgStore } = await import('./postgres/pg-store.js');
    return openPgStore(options.databaseUrl, { poolSize: options.poolSize, reportTimeoutMs: options.reports?.timeoutMs });
  }
  const [{ openSqliteStore }, { withWriteThread }] = await Promise.all([import('./sqlite/sqlite-store.js'), import('./sqlite/threaded-store.js')]);
  const store = openSqliteStore(options.dataDir, { readCacheBytes: options.readCacheBytes ?? 0, reportProcesses: options.reports ?? null });
  return options.writeThread ? withWriteThread(store, options.dataDir, { nice: options.writeThread.nice }) : store;
}
