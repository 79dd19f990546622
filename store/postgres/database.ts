/**
 * The PostgreSQL connection pool, the error mapping every repository relies on, transactions, and
 * the migrations (run under an advisory lock, so several processes may start together).
 */
import pg from 'pg';
import { QuarryError } from '../../core/domain/errors.js';
import { PG_MIGRATIONS } from './migrations.js';

/** Key of the session advisory lock the migrations run under (any constant other code never takes). */
const MIGRATION_LOCK = 7_297_010;
/** Class (first key) of the transaction advisory locks that order one dataset's change log. */
const DATASET_LOCK_CLASS = 7_297_011;

/** Seconds a client is told to wait before retrying while the store is unreachable. */
export const STORE_RETRY_AFTER_S = 1;

/** Options of {@link PgDb}. */
export interface PgOptions {
  /**
   * Connections in the pool.
   * @defaultValue `10`
   */
  readonly poolSize?: number;
  /**
   * Milliseconds a query waits for a free connection or a new one before failing with 503.
   * @defaultValue `5000`
   */
  readonly connectTimeoutMs?: number;
  /**
   * Milliseconds {@link PgDb.open} keeps trying while the server is unreachable (processes
   * started beside it, or restarted while it is down, wait for it instead of exiting).
   * @defaultValue `60000`
   */
  readonly startTimeoutMs?: number;
}

/** A row as the driver returns it. */
export type Row = Record<string, any>;

/** What runs SQL: the pool (each statement on its own) or a transaction's client. */
export interface Sql {
  /** Every row of the statement. */
  all<R extends Row = Row>(text: string, values?: readonly unknown[]): Promise<R[]>;
  /** The first row, or undefined. */
  get<R extends Row = Row>(text: string, values?: readonly unknown[]): Promise<R | undefined>;
  /** Runs a statement; returns the number of rows it touched. */
  run(text: string, values?: readonly unknown[]): Promise<number>;
}

/** A transaction's {@link Sql}, with the locks that order writes. */
export interface Tx extends Sql {
  /**
   * Takes the dataset's write lock until the transaction ends. Every transaction that appends to
   * a dataset's change log takes it first, so the sequence numbers it draws commit in their own
   * order: a reader of `seq > n` never sees a later number before an earlier one commits (plain
   * sequences commit out of order, and the core would skip the late one). Writes of one dataset
   * are serialized, as SQLite's single writer did; writes of different datasets are not.
   */
  lockDataset(datasetId: string): Promise<void>;
}

// BIGINT (epoch ms, counts, sequence numbers) and NUMERIC (SUM of integers) come back as numbers,
// as better-sqlite3 gives them: every value stored here is far below 2^53.
const toNumber = (v: string): number => Number(v);
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC) return toNumber;
    return pg.types.getTypeParser(oid, format);
  },
};

/** SQLSTATEs and socket errors that mean the server is gone or not accepting work, not that the request is wrong. */
function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (code.startsWith('08')) return true; // connection_exception
    if (code === '57P01' || code === '57P02' || code === '57P03') return true; // shutdown, crash, cannot connect now
    if (code === '53300') return true; // too_many_connections
    if (/^E[A-Z]+$/.test(code)) return true; // ECONNREFUSED, ECONNRESET, EPIPE, ETIMEDOUT, ...
  }
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended/i.test(
    err.message,
  );
}

/**
 * The error a caller sees for a driver error: 503 with Retry-After while the server is
 * unreachable, 400 for text PostgreSQL cannot store (the NUL character, which SQLite keeps),
 * otherwise the error itself (a bug: 500).
 */
export function storeError(err: unknown): unknown {
  if (err instanceof QuarryError) return err;
  if (isConnectionError(err)) {
    return new QuarryError('unavailable', `The store (PostgreSQL) is unavailable: ${(err as Error).message}; retry shortly`, {
      cause: err,
      retryAfterSeconds: STORE_RETRY_AFTER_S,
    });
  }
  const code = (err as { code?: unknown } | null)?.code;
  if (code === '22021' || code === '22P05') {
    return new QuarryError('bad_request', 'Text may not contain the NUL character (\\u0000): the store (PostgreSQL) cannot hold it');
  }
  return err;
}

/** {@link Sql} over a pool or one client. */
class Runner implements Sql {
  constructor(protected readonly on: pg.Pool | pg.ClientBase) {}

  async all<R extends Row = Row>(text: string, values: readonly unknown[] = []): Promise<R[]> {
    try {
      return (await this.on.query<R>(text, values as unknown[])).rows;
    } catch (err) {
      throw storeError(err);
    }
  }

  async get<R extends Row = Row>(text: string, values: readonly unknown[] = []): Promise<R | undefined> {
    return (await this.all<R>(text, values))[0];
  }

  async run(text: string, values: readonly unknown[] = []): Promise<number> {
    try {
      return (await this.on.query(text, values as unknown[])).rowCount ?? 0;
    } catch (err) {
      throw storeError(err);
    }
  }
}

/** {@link Sql} over a client of one's own (a migration's, a tool's), errors mapped as the store maps them. */
export const clientSql = (client: pg.ClientBase): Sql => new Runner(client);

class Transaction extends Runner implements Tx {
  private readonly locked = new Set<string>();

  async lockDataset(datasetId: string): Promise<void> {
    if (this.locked.has(datasetId)) return;
    await this.run('SELECT pg_advisory_xact_lock($1, hashtext($2))', [DATASET_LOCK_CLASS, datasetId]);
    this.locked.add(datasetId);
  }
}

/** The pool of one PostgreSQL database. */
export class PgDb extends Runner {
  /** Whether {@link close} was called. */
  closed = false;

  private constructor(readonly pool: pg.Pool) {
    super(pool);
  }

  /** Connects to `url` and brings its schema up to date. */
  static async open(url: string, options: PgOptions = {}): Promise<PgDb> {
    const pool = new pg.Pool({
      connectionString: url,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
      types,
    });
    // An idle connection that dies (the server restarted) is dropped by the pool, which emits this;
    // unhandled it would end the process. The next query opens a new connection.
    pool.on('error', () => {});
    const db = new PgDb(pool);
    const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
    for (;;) {
      try {
        await db.migrate();
        return db;
      } catch (err) {
        if (err instanceof QuarryError && err.code === 'unavailable' && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 500));
          continue;
        }
        await pool.end().catch(() => {});
        throw err;
      }
    }
  }

  /**
   * Runs `fn` in a transaction on one connection: committed when it resolves, rolled back when it
   * throws (its error is rethrown, mapped by {@link storeError}).
   */
  async tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw storeError(err);
    }
    // A connection that dies between two statements of the transaction emits 'error' on the
    // client, which the pool listens for only while it is idle: unheard, it would end the process.
    // The statement that follows fails anyway, and that failure is what the caller sees.
    const onError = (): void => {};
    client.on('error', onError);
    let broken = false;
    try {
      await client.query('BEGIN');
      const out = await fn(new Transaction(client));
      await client.query('COMMIT');
      return out;
    } catch (err) {
      try {
        await client.query('ROLLBACK');
      } catch {
        broken = true;
      }
      throw storeError(err);
    } finally {
      client.off('error', onError);
      // A connection whose ROLLBACK failed is not returned to the pool in an unknown state.
      client.release(broken);
    }
  }

  /** A connection of its own (for LISTEN), outside the pool. */
  async dedicatedClient(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: (this.pool.options as { connectionString?: string }).connectionString, types });
    client.on('error', () => {});
    try {
      await client.connect();
    } catch (err) {
      throw storeError(err);
    }
    return client;
  }

  /**
   * Runs the migrations that have not run yet, each in its own transaction, while holding a
   * session advisory lock: processes starting together take turns, and each reads the version
   * only once it holds the lock.
   */
  private async migrate(): Promise<void> {
    const client = await this.pool.connect().catch((err: unknown) => {
      throw storeError(err);
    });
    const onError = (): void => {};
    client.on('error', onError);
    try {
      await this.migrateOn(client);
    } catch (err) {
      throw storeError(err);
    } finally {
      client.off('error', onError);
      client.release();
    }
  }

  private async migrateOn(client: pg.PoolClient): Promise<void> {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)');
      await client.query('INSERT INTO schema_version (version) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM schema_version)');
      const version = (await client.query<{ version: number }>('SELECT version FROM schema_version')).rows[0]!.version;
      if (version > PG_MIGRATIONS.length) {
        throw new Error(`store schema version ${version} is newer than this build knows (${PG_MIGRATIONS.length})`);
      }
      for (let v = version; v < PG_MIGRATIONS.length; v++) {
        await client.query('BEGIN');
        try {
          const migration = PG_MIGRATIONS[v]!;
          if (typeof migration === 'string') await client.query(migration);
          else await migration(clientSql(client));
          await client.query('UPDATE schema_version SET version = $1', [v + 1]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw err;
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  }


  /** Ends every connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }
}
