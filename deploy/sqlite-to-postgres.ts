/**
 * Copies a SQLite store (`<data dir>/quarry.sqlite`) into a PostgreSQL database, resumably, and
 * verifies the copy (deploy/migrate-to-postgres.ts is the command around it).
 *
 * Both stores have the same tables and columns with the same value types (store/postgres/migrations.ts),
 * so rows copy column by column. Each table is read in primary-key order in batches (keyset
 * pagination: never a whole table in memory), each batch inserted in one transaction with
 * `ON CONFLICT DO NOTHING`, tables in foreign-key order. The target therefore always holds, per
 * table, a prefix (in key order) of the source's rows, and an interrupted run resumes after the
 * largest key the target holds. Before copying, the target's rows are checked to be exactly that
 * prefix, so a database holding other data is refused instead of being mixed with this one.
 *
 * Verification hashes every row of each table, in key order, in one canonical text encoding on
 * both sides (see {@link encodeValue}); counts and hashes must match.
 */
import { createHash, type Hash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { openPgStore, type PgStore } from '../store/postgres/pg-store.js';
import { MIGRATIONS } from '../store/sqlite/migrations.js';

/** The tables, parents before children (the target enforces foreign keys on every insert). */
export const TABLES = [
  'organizations',
  'users',
  'memberships',
  'api_keys',
  'datasets',
  'chunks',
  'chunk_groups',
  'chunk_group_members',
  'change_log',
  'chunk_vectors',
  'chunk_sparse_vectors',
  'dataset_events',
  'topics',
  'messages',
  'files',
  'search_queries',
  'search_rollup_hourly',
  'search_rollup_daily',
  'search_query_totals',
  'search_filter_rollup_hourly',
  'search_filter_rollup_daily',
  'search_query_hourly',
  'search_query_daily',
  'recommendation_queries',
  'rag_queries',
  'record_rollup_hourly',
  'record_rollup_daily',
  'rag_message_totals',
  'analytics_users',
  'user_rollup_hourly',
  'user_rollup_daily',
  'rag_followup_totals',
  'rag_followup_type_totals',
  'user_events',
  'record_event_rollup_hourly',
  'record_event_rollup_daily',
  'user_event_rollup_hourly',
  'user_event_rollup_daily',
  'query_ratings',
  'experiments',
  'experiment_assignments',
] as const;

/** Rows per INSERT unless told otherwise. */
export const DEFAULT_BATCH_ROWS = 2000;
/** A batch also ends once its values reach this many bytes (chunks of 1 MB text, vectors). */
const MAX_BATCH_BYTES = 32 * 1024 * 1024;
/** PostgreSQL's limit of bind parameters in one statement. */
const MAX_PARAMS = 65_535;
/** Rows per page when the target is read back for verification. */
const VERIFY_PAGE_ROWS = 5000;
/** Least time between two progress lines of one table, in ms. */
const PROGRESS_EVERY_MS = 2000;

/** A failure the user can act on (missing file, unreachable database, foreign data): reported as one line, never a stack. */
export class MigrationError extends Error {
  override readonly name = 'MigrationError';
}

/** Thrown when the run stops early on purpose ({@link MigrateOptions.stopAfterBatches}). */
export class MigrationStopped extends Error {
  override readonly name = 'MigrationStopped';
}

/** Options of {@link migrateSqliteToPostgres}. */
export interface MigrateOptions {
  /** The data directory holding `quarry.sqlite`. */
  readonly dataDir: string;
  /** postgres:// URL of the target database (it must exist; its tables are created here). */
  readonly databaseUrl: string;
  /** Rows per INSERT. @defaultValue {@link DEFAULT_BATCH_ROWS} */
  readonly batchRows?: number;
  /** Stop (throwing {@link MigrationStopped}) after this many committed batches: for testing resumption. */
  readonly stopAfterBatches?: number | null;
  /** Receives progress lines (the command writes them to stderr). */
  readonly progress?: (line: string) => void;
}

/** The outcome for one table. */
export interface TableReport {
  readonly table: string;
  readonly sourceRows: number;
  readonly targetRows: number;
  /** Rows this run inserted. */
  readonly copied: number;
  /** sha256 of the source's canonical rows in key order. */
  readonly sourceSha256: string;
  readonly targetSha256: string;
  readonly ok: boolean;
}

/** The outcome of a run. */
export interface MigrateReport {
  readonly source: string;
  readonly target: string;
  readonly tables: readonly TableReport[];
  /** Rows this run inserted, over all tables. */
  readonly copied: number;
  /** Whether the target held rows of this source before the run (an interrupted or completed migration). */
  readonly resumed: boolean;
  readonly seconds: number;
  /** Rows inserted per second of copying (0 when nothing was copied). */
  readonly rowsPerSecond: number;
  /** Sequence number the target's change log will give next (above every number the source issued). */
  readonly nextChangeSeq: number;
  /** Whether every table's count and checksum match. */
  readonly ok: boolean;
}

/** A value as either driver returns it. */
type Value = string | number | bigint | Buffer | null;
/** One row, columns in the table's column order. */
type RowValues = Value[];

/** What is known of one table before copying. */
interface TablePlan {
  readonly name: string;
  /** Quoted column list, in the source's order. */
  readonly columns: readonly string[];
  /** Quoted primary-key columns, in key order. */
  readonly key: readonly string[];
  /** Positions of the key columns in {@link columns}. */
  readonly keyIndex: readonly number[];
}

/** Count and hash of a run of rows. */
interface Stats {
  rows: number;
  sha256: string;
}

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** The URL with its password masked, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url.replace(/:[^:@/]*@/, ':***@');
  }
}

/** One line describing an error, including the driver's own causes (AggregateError of several addresses). */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const parts: string[] = [];
  if (err.message) parts.push(err.message);
  if (err instanceof AggregateError) parts.push(...err.errors.map(describeError));
  const cause = (err as { cause?: unknown }).cause;
  if (cause !== undefined && parts.length === 0) parts.push(describeError(cause));
  const code = (err as { code?: unknown }).code;
  if (parts.length === 0 && typeof code === 'string') parts.push(code);
  return parts.join('; ').replace(/\s*\n\s*/g, ' ') || err.name;
}

/**
 * The canonical text of one value, identical whichever driver read it: integers and reals as the
 * shortest decimal that reads back as the same number (better-sqlite3 gives BigInt with
 * safeIntegers, pg gives BigInt for INT8 here and numbers for INTEGER and DOUBLE PRECISION), text
 * as a JSON string (JSON columns are text on both sides, compared verbatim), blobs as hex.
 */
export function encodeValue(v: unknown): string {
  if (v === null || v === undefined) return 'N';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'bigint') return `n${v.toString()}`;
  if (typeof v === 'number') return `n${Object.is(v, -0) ? '0' : String(v)}`;
  if (Buffer.isBuffer(v)) return `x${v.toString('hex')}`;
  if (v instanceof Uint8Array) return `x${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex')}`;
  throw new Error(`cannot encode a value of type ${typeof v}`);
}

const hashRow = (hash: Hash, row: readonly unknown[]): void => {
  hash.update(row.map(encodeValue).join(','));
  hash.update('\n');
};

// The target is read with INT8 as BigInt (not as numbers, as the store does) so that the
// comparison is exact even beyond 2^53.
const exactTypes: pg.CustomTypesConfig = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === pg.types.builtins.INT8) return (v: string) => BigInt(v);
    return pg.types.getTypeParser(oid, format);
  },
};

/** `(k1, k2) op (p1, p2)`, or `k op p` for a single column. */
function keyCompare(key: readonly string[], op: string, placeholders: readonly string[]): string {
  return key.length === 1 ? `${key[0]} ${op} ${placeholders[0]}` : `(${key.join(', ')}) ${op} (${placeholders.join(', ')})`;
}

const pgPlaceholders = (n: number, from: number): string[] => Array.from({ length: n }, (_, i) => `$${from + i}`);

/** Bytes a value adds to a batch (roughly: the text, the blob, or a number). */
function valueBytes(v: Value): number {
  if (typeof v === 'string') return v.length * 2;
  if (Buffer.isBuffer(v)) return v.length;
  return 8;
}

/** Whether a driver error means the connection is gone rather than the statement is wrong. */
function isConnectionLoss(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && (code.startsWith('08') || code.startsWith('57P') || /^E[A-Z]+$/.test(code))) return true;
  return err instanceof Error && /Connection terminated|connection error|Connection ended/i.test(err.message);
}

const fmt = (n: number): string => n.toLocaleString('en-US');

/** The source: the SQLite file opened read-only, inside one read transaction (a consistent snapshot). */
class Source {
  private readonly statements = new Map<string, Database.Statement>();

  private constructor(
    readonly file: string,
    readonly db: Database.Database,
  ) {}

  static open(dataDir: string): Source {
    const file = path.join(path.resolve(dataDir), 'quarry.sqlite');
    if (!fs.existsSync(dataDir) || !fs.statSync(dataDir).isDirectory()) {
      throw new MigrationError(`the data directory ${dataDir} does not exist`);
    }
    if (!fs.existsSync(file)) {
      throw new MigrationError(`${dataDir} holds no SQLite store (no quarry.sqlite): --from must name quarry's data directory (QUARRY_DATA_DIR)`);
    }
    let db: Database.Database;
    try {
      db = new Database(file, { readonly: true, fileMustExist: true });
      db.pragma('busy_timeout = 5000');
    } catch (err) {
      throw new MigrationError(`cannot open ${file}: ${describeError(err)}`);
    }
    const source = new Source(file, db);
    try {
      source.checkVersion();
      // Every read of the run sees the same state, even if a process still writes to the file.
      db.exec('BEGIN');
      return source;
    } catch (err) {
      db.close();
      throw err;
    }
  }

  private checkVersion(): void {
    let version: number;
    try {
      version = this.db.pragma('user_version', { simple: true }) as number;
    } catch (err) {
      throw new MigrationError(`cannot read ${this.file}: ${describeError(err)}`);
    }
    if (version < MIGRATIONS.length) {
      throw new MigrationError(
        `${this.file} has schema version ${version}, this version of quarry expects ${MIGRATIONS.length}: ` +
          'start this version of quarry once on the data directory (it upgrades the file), stop it, then run the migration again',
      );
    }
    if (version > MIGRATIONS.length) {
      throw new MigrationError(
        `${this.file} has schema version ${version}, newer than this version of quarry knows (${MIGRATIONS.length}): run the migration command of the version that wrote it`,
      );
    }
    const tables = (this.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().all() as string[]).sort();
    const unknown = tables.filter((t) => !(TABLES as readonly string[]).includes(t));
    const missing = TABLES.filter((t) => !tables.includes(t));
    // A table this list does not name would be left behind without a word.
    if (unknown.length > 0 || missing.length > 0) {
      throw new MigrationError(`${this.file} does not have the expected tables (unknown: ${unknown.join(', ') || 'none'}; missing: ${missing.join(', ') || 'none'})`);
    }
  }

  /** A prepared statement returning rows as arrays, integers as BigInt (exact beyond 2^53). */
  private rowsOf(sql: string): Database.Statement {
    let stmt = this.statements.get(sql);
    if (stmt === undefined) {
      stmt = this.db.prepare(sql).raw(true).safeIntegers(true);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  /** Columns and primary key of a table. */
  plan(table: string): TablePlan {
    const info = this.db.prepare(`PRAGMA table_info(${quote(table)})`).all() as { name: string; pk: number }[];
    const columns = info.map((c) => quote(c.name));
    const keyed = info.map((c, i) => ({ ...c, i })).filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk);
    if (keyed.length === 0) throw new Error(`table ${table} has no primary key`);
    return { name: table, columns, key: keyed.map((c) => quote(c.name)), keyIndex: keyed.map((c) => c.i) };
  }

  count(table: string): number {
    return this.db.prepare(`SELECT COUNT(*) FROM ${quote(table)}`).pluck().get() as number;
  }

  /** Up to `limit` rows (and {@link MAX_BATCH_BYTES}) after `after`, in key order. */
  page(plan: TablePlan, after: readonly Value[] | null, limit: number): RowValues[] {
    const where = after ? `WHERE ${keyCompare(plan.key, '>', plan.key.map(() => '?'))}` : '';
    const stmt = this.rowsOf(`SELECT ${plan.columns.join(', ')} FROM ${quote(plan.name)} ${where} ORDER BY ${plan.key.join(', ')} LIMIT ?`);
    const rows: RowValues[] = [];
    let bytes = 0;
    for (const row of stmt.iterate(...(after ?? []), limit) as IterableIterator<RowValues>) {
      rows.push(row);
      bytes += row.reduce<number>((sum, v) => sum + valueBytes(v), 0);
      if (bytes >= MAX_BATCH_BYTES) break;
    }
    return rows;
  }

  /** Count and hash of the rows with key at most `upTo` (all rows when null). */
  stats(plan: TablePlan, upTo: readonly Value[] | null): Stats {
    const where = upTo ? `WHERE ${keyCompare(plan.key, '<=', plan.key.map(() => '?'))}` : '';
    const stmt = this.rowsOf(`SELECT ${plan.columns.join(', ')} FROM ${quote(plan.name)} ${where} ORDER BY ${plan.key.join(', ')}`);
    const hash = createHash('sha256');
    let rows = 0;
    for (const row of stmt.iterate(...(upTo ?? [])) as IterableIterator<RowValues>) {
      hashRow(hash, row);
      rows++;
    }
    return { rows, sha256: hash.digest('hex') };
  }

  /** The highest change-log sequence number ever issued (AUTOINCREMENT remembers deleted ones). */
  highestChangeSeq(): number {
    const max = Number(this.db.prepare('SELECT COALESCE(MAX(seq), 0) FROM change_log').pluck().get());
    const hasSequence = this.db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'").get() !== undefined;
    const issued = hasSequence ? Number(this.db.prepare("SELECT COALESCE(MAX(seq), 0) FROM sqlite_sequence WHERE name = 'change_log'").pluck().get()) : 0;
    return Math.max(max, issued);
  }

  close(): void {
    if (this.db.inTransaction) this.db.exec('COMMIT');
    this.db.close();
  }
}

/** The target: one connection of the PostgreSQL store's pool. */
class Target {
  private readonly insertSql = new Map<string, string>();

  constructor(private readonly client: pg.PoolClient) {}

  private async query(text: string, values: readonly unknown[] = []): Promise<unknown[][]> {
    return (await this.client.query({ text, values: values as unknown[], rowMode: 'array', types: exactTypes })).rows as unknown[][];
  }

  /** Checks what the copy relies on: UTF-8 (so text keys order as in SQLite) and the same columns. */
  async check(plans: readonly TablePlan[]): Promise<void> {
    // PostgreSQL < 12 prints float8 with 15 digits unless told otherwise; the hash needs every bit.
    await this.client.query('SET extra_float_digits = 3');
    const encoding = (await this.query('SHOW server_encoding'))[0]?.[0];
    if (encoding !== 'UTF8') {
      throw new MigrationError(`the target database's encoding is ${String(encoding)}: create it with ENCODING 'UTF8' (text keys must order as in SQLite)`);
    }
    const rows = await this.query(
      'SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ANY($1)',
      [plans.map((p) => p.name)],
    );
    for (const plan of plans) {
      const want = plan.columns.map((c) => c.slice(1, -1)).sort();
      const have = rows.filter((r) => r[0] === plan.name).map((r) => String(r[1])).sort();
      if (want.join(',') !== have.join(',')) {
        throw new MigrationError(
          `table ${plan.name} has other columns in the target (${have.join(', ') || 'no table'}) than in the source (${want.join(', ')}): the target was made by another version of quarry`,
        );
      }
    }
  }

  /** Key of the last row in key order, or null for an empty table. */
  async lastKey(plan: TablePlan): Promise<Value[] | null> {
    const rows = await this.query(`SELECT ${plan.key.join(', ')} FROM ${quote(plan.name)} ORDER BY ${plan.key.map((k) => `${k} DESC`).join(', ')} LIMIT 1`);
    return (rows[0] as Value[] | undefined) ?? null;
  }

  /**
   * Count and hash of every row, read in pages from one cursor. Keyset pages (`WHERE key > last
   * ORDER BY key LIMIT n`) sorted the rest of a table again for each page whose key order no index
   * gives (the rollups): 98-122 s for 1.7M hourly rows, against 2-3 s for one ordered cursor.
   */
  async stats(plan: TablePlan): Promise<Stats> {
    const hash = createHash('sha256');
    let rows = 0;
    await this.client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    try {
      await this.client.query(`DECLARE verify_rows NO SCROLL CURSOR FOR SELECT ${plan.columns.join(', ')} FROM ${quote(plan.name)} ORDER BY ${plan.key.join(', ')}`);
      for (;;) {
        const page = (await this.query(`FETCH ${VERIFY_PAGE_ROWS} FROM verify_rows`)) as RowValues[];
        for (const row of page) hashRow(hash, row);
        rows += page.length;
        if (page.length < VERIFY_PAGE_ROWS) break;
      }
      await this.client.query('COMMIT');
    } catch (err) {
      await this.client.query('ROLLBACK').catch(() => {});
      throw err;
    }
    return { rows, sha256: hash.digest('hex') };
  }

  /** Inserts rows in one transaction; returns how many were new. */
  async insert(plan: TablePlan, rows: readonly RowValues[]): Promise<number> {
    const cacheKey = `${plan.name}:${rows.length}`;
    let sql = this.insertSql.get(cacheKey);
    if (sql === undefined) {
      const width = plan.columns.length;
      const tuples = rows.map((_, r) => `(${pgPlaceholders(width, r * width + 1).join(', ')})`);
      // change_log.seq is an identity column: the source's numbers are kept (the core's index
      // snapshots record how far they have applied the log by these numbers).
      const overriding = plan.name === 'change_log' ? ' OVERRIDING SYSTEM VALUE' : '';
      sql = `INSERT INTO ${quote(plan.name)} (${plan.columns.join(', ')})${overriding} VALUES ${tuples.join(', ')} ON CONFLICT DO NOTHING`;
      this.insertSql.set(cacheKey, sql);
    }
    await this.client.query('BEGIN');
    try {
      const result = await this.client.query(sql, rows.flat());
      await this.client.query('COMMIT');
      return result.rowCount ?? 0;
    } catch (err) {
      await this.client.query('ROLLBACK').catch(() => {});
      throw err;
    }
  }

  /** Moves the change log's identity past `highest` (never backwards); returns the number it gives next. */
  async advanceChangeSeq(highest: number): Promise<number> {
    const sequence = (await this.query("SELECT pg_get_serial_sequence('change_log', 'seq')"))[0]?.[0];
    const [targetMax, lastValue] = (await this.query('SELECT (SELECT MAX(seq) FROM change_log), pg_sequence_last_value($1::regclass)', [sequence]))[0] ?? [];
    const high = Math.max(highest, Number(targetMax ?? 0), Number(lastValue ?? 0));
    if (high === 0) return 1;
    await this.query('SELECT setval($1::regclass, $2)', [sequence, high]);
    return high + 1;
  }
}

/** Per-table progress lines: at most one every {@link PROGRESS_EVERY_MS}, and one at the end. */
class Progress {
  private readonly started = Date.now();
  private last = 0;

  constructor(
    private readonly out: (line: string) => void,
    private readonly table: string,
    private readonly total: number,
    private readonly already: number,
  ) {}

  tick(copied: number, done = false): void {
    const now = Date.now();
    if (!done && now - this.last < PROGRESS_EVERY_MS) return;
    this.last = now;
    const seconds = (now - this.started) / 1000;
    const rate = seconds > 0 ? Math.round(copied / seconds) : copied;
    const state = done ? 'done' : 'copying';
    this.out(`${this.table}: ${state} ${fmt(this.already + copied)}/${fmt(this.total)} rows (${fmt(copied)} this run, ${fmt(rate)} rows/s)`);
  }
}

/** Copies the SQLite store of `dataDir` into the database at `databaseUrl` and verifies it. */
export async function migrateSqliteToPostgres(options: MigrateOptions): Promise<MigrateReport> {
  const started = Date.now();
  const out = options.progress ?? (() => {});
  const batchRows = Math.max(1, Math.floor(options.batchRows ?? DEFAULT_BATCH_ROWS));
  const source = Source.open(options.dataDir);
  let store: PgStore | null = null;
  let client: pg.PoolClient | null = null;
  try {
    const plans = TABLES.map((t) => source.plan(t));
    try {
      // One attempt: a user who typed the wrong address should hear so now, not in a minute.
      store = await openPgStore(options.databaseUrl, { poolSize: 1, connectTimeoutMs: 10_000, startTimeoutMs: 0 });
      client = await store.db.pool.connect();
      // Checked out, the connection has no listener of the pool's: a server gone between two
      // queries would otherwise end the process with an 'error' event instead of the next query failing.
      client.on('error', () => {});
    } catch (err) {
      // The store wraps an unreachable server's error in its 503 for clients: the driver's own says more here.
      const cause = (err as { cause?: unknown }).cause ?? err;
      const hint = (cause as { code?: unknown }).code === '3D000' ? " (create it first: CREATE DATABASE <name> ENCODING 'UTF8')" : '';
      throw new MigrationError(`cannot open the PostgreSQL database ${redactUrl(options.databaseUrl)}: ${describeError(cause)}${hint}`);
    }
    const target = new Target(client);
    await target.check(plans);

    // What the target holds already must be this source's rows up to its last key in each table.
    const counts = new Map(plans.map((p) => [p.name, source.count(p.name)]));
    const lastKeys = new Map<string, Value[] | null>();
    const prefix = new Map<string, { source: Stats; target: Stats }>();
    const foreign: string[] = [];
    for (const plan of plans) {
      const last = await target.lastKey(plan);
      lastKeys.set(plan.name, last);
      if (!last) continue;
      const [s, t] = [source.stats(plan, last), await target.stats(plan)];
      prefix.set(plan.name, { source: s, target: t });
      if (s.rows !== t.rows) foreign.push(`${plan.name}: ${fmt(t.rows)} rows in the target, ${fmt(s.rows)} in the source up to the same key`);
      else if (s.sha256 !== t.sha256) foreign.push(`${plan.name}: ${fmt(t.rows)} rows on both sides up to the same key, with other contents`);
    }
    if (foreign.length > 0) {
      throw new MigrationError(
        `the target database holds data that is not a copy of ${source.file} (${foreign.join('; ')}); ` +
          'migrate into an empty database (drop and create it again to start over), and stop quarry on both stores while migrating',
      );
    }
    const resumed = prefix.size > 0;
    if (resumed) out(`resuming: the target already holds ${fmt([...prefix.values()].reduce((n, p) => n + p.target.rows, 0))} rows of this store`);

    let batches = 0;
    let copiedTotal = 0;
    let copyMs = 0;
    let nextChangeSeq = 0;
    const copied = new Map<string, number>();
    for (const plan of plans) {
      const total = counts.get(plan.name)!;
      const already = prefix.get(plan.name)?.target.rows ?? 0;
      const progress = new Progress(out, plan.name, total, already);
      let after = lastKeys.get(plan.name) ?? null;
      let n = 0;
      const tableStarted = Date.now();
      const limit = Math.min(batchRows, Math.floor(MAX_PARAMS / plan.columns.length));
      for (;;) {
        const rows = source.page(plan, after, limit);
        if (rows.length === 0) break;
        try {
          n += await target.insert(plan, rows);
        } catch (err) {
          if (isConnectionLoss(err)) {
            throw new MigrationError(`lost the connection to PostgreSQL while copying ${plan.name}: ${describeError(err)}; run the command again to resume`);
          }
          const first = plan.keyIndex.map((i) => encodeValue(rows[0]![i])).join(', ');
          throw new MigrationError(`copying ${plan.name} failed in the batch starting at key ${first}: ${describeError(err)}`);
        }
        const lastRow = rows[rows.length - 1]!;
        after = plan.keyIndex.map((i) => lastRow[i]!);
        batches++;
        progress.tick(n);
        if (options.stopAfterBatches && batches >= options.stopAfterBatches) {
          throw new MigrationStopped(`stopped after ${batches} batches (${fmt(copiedTotal + n)} rows) as asked; run again to resume`);
        }
      }
      copyMs += Date.now() - tableStarted;
      if (total > 0) progress.tick(n, true);
      copied.set(plan.name, n);
      copiedTotal += n;
      if (plan.name === 'change_log') nextChangeSeq = await target.advanceChangeSeq(source.highestChangeSeq());
    }

    out('verifying: counting and hashing every table on both sides');
    const tables: TableReport[] = [];
    for (const plan of plans) {
      const n = copied.get(plan.name) ?? 0;
      const known = prefix.get(plan.name);
      // Nothing inserted and the earlier check covered every source row: those hashes still hold.
      const reuse = n === 0 && known !== undefined && known.source.rows === counts.get(plan.name);
      const s = reuse ? known.source : source.stats(plan, null);
      const t = reuse ? known.target : await target.stats(plan);
      tables.push({
        table: plan.name,
        sourceRows: s.rows,
        targetRows: t.rows,
        copied: n,
        sourceSha256: s.sha256,
        targetSha256: t.sha256,
        ok: s.rows === t.rows && s.sha256 === t.sha256,
      });
    }
    return {
      source: source.file,
      target: redactUrl(options.databaseUrl),
      tables,
      copied: copiedTotal,
      resumed,
      seconds: (Date.now() - started) / 1000,
      rowsPerSecond: copiedTotal > 0 && copyMs > 0 ? Math.round((copiedTotal * 1000) / copyMs) : 0,
      nextChangeSeq,
      ok: tables.every((t) => t.ok),
    };
  } catch (err) {
    if (err instanceof MigrationError || err instanceof MigrationStopped || !isConnectionLoss(err)) throw err;
    throw new MigrationError(`lost the connection to PostgreSQL: ${describeError(err)}; run the command again to resume`);
  } finally {
    client?.release();
    await store?.close().catch(() => {});
    source.close();
  }
}
