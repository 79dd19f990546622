/**
 * The SQLite side of bench/analytics-engines.ts: the store's own file (openDatabase, so the real
 * schema, indexes and pragmas), loaded in batch transactions, reports run through prepared
 * statements, and the extra indexes tried to bring reports under 100 ms with what each costs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { openDatabase, type Db } from '../../store/sqlite/database.js';
import { TABLES, type Batch, type Row, type TableName } from './analytics-engine-data.js';
import type { Statement } from './analytics-engine-reports.js';

/** The store's SQLite file under a directory of its own. */
export class SqliteEngine {
  readonly db: Db;
  readonly file: string;
  private readonly inserts = new Map<TableName, { run(...values: unknown[]): unknown }>();
  private readonly statements = new Map<string, { all(...params: unknown[]): unknown[] }>();

  constructor(dir: string) {
    this.db = openDatabase(dir);
    this.file = path.join(dir, 'quarry.sqlite');
    for (const table of TABLES) {
      // The generator writes the columns in the spec's order: a schema that moved on must fail here, not load shifted values.
      const actual = (this.db.prepare(`PRAGMA table_info(${table.name})`).all() as { name: string }[]).map((c) => c.name);
      const expected = table.columns.map(([name]) => name);
      if (actual.join() !== expected.join()) throw new Error(`${table.name}: store columns ${actual.join()} differ from the bench's ${expected.join()}`);
      const cols = expected.join(', ');
      this.inserts.set(table.name, this.db.prepare(`INSERT INTO ${table.name} (${cols}) VALUES (${expected.map(() => '?').join(', ')})`));
    }
  }

  /** Inserts one batch in one transaction (the recorder also writes its batches whole). */
  load(batch: Batch): void {
    this.db.transaction(() => {
      for (const table of TABLES) {
        const insert = this.inserts.get(table.name)!;
        for (const row of batch[table.name]) insert.run(...row);
      }
    })();
  }

  /** Inserts rows of one table in transactions of `perTransaction`; returns rows/s. */
  insertRate(table: TableName, rows: readonly Row[], perTransaction: number): number {
    const insert = this.inserts.get(table)!;
    const write = this.db.transaction((slice: readonly Row[]) => {
      for (const row of slice) insert.run(...row);
    });
    const t0 = performance.now();
    for (let i = 0; i < rows.length; i += perTransaction) write(rows.slice(i, i + perTransaction));
    return rows.length / ((performance.now() - t0) / 1000);
  }

  /** Rows of one statement; a plucked statement gives its first column as a flat array. */
  run(s: Statement): unknown[] {
    const key = `${s.pluck ? 'P' : 'R'}${s.sql}`;
    let prepared = this.statements.get(key);
    if (!prepared) {
      const p = this.db.prepare(s.sql);
      prepared = s.pluck ? p.pluck() : p;
      this.statements.set(key, prepared);
    }
    return prepared.all(...s.params);
  }

  /** Index names from the statement's query plan (which extra index the planner took). */
  plan(s: Statement): string {
    const rows = this.db.prepare(`EXPLAIN QUERY PLAN ${s.sql}`).all(...s.params) as { detail: string }[];
    const used = new Set<string>();
    for (const { detail } of rows) {
      const m = /USING (?:COVERING )?INDEX (\w+)|USING (INTEGER PRIMARY KEY|ROWID SEARCH)|^(SCAN \w+)$|(TEMP B-TREE)|(AUTOMATIC[\w ]*INDEX)/.exec(detail);
      if (m) used.add((m[1] ?? m[2] ?? m[3] ?? m[4] ?? m[5])!);
    }
    return [...used].join(' + ');
  }

  /** File size after folding the WAL into it. */
  size(): number {
    this.db.pragma('wal_checkpoint(TRUNCATE)');
    return fs.statSync(this.file).size;
  }

  /** Creates `sql`'s index; returns seconds and bytes added. */
  addIndex(sql: string): { seconds: number; bytes: number } {
    const before = this.size();
    const t0 = performance.now();
    this.db.exec(sql);
    return { seconds: (performance.now() - t0) / 1000, bytes: this.size() - before };
  }

  /** Gathers planner statistics (the store never runs ANALYZE; with several indexes on dataset_id the planner needs them to choose). */
  analyze(): number {
    const t0 = performance.now();
    // A bounded sample: a full ANALYZE reads every index of a 10M-row file.
    this.db.pragma('analysis_limit = 1000');
    this.db.exec('ANALYZE');
    return (performance.now() - t0) / 1000;
  }

  /** Forgets prepared statements: their plans predate the new indexes. */
  resetStatements(): void {
    this.statements.clear();
  }

  /** Closes the file. */
  close(): void {
    this.db.close();
  }
}

/**
 * Indexes tried for the reports: covering indexes so that a scan reads ~60-byte index entries
 * instead of ~1 KB rows (results and request_params JSON), and orderings that serve a page's
 * ORDER BY without sorting.
 */
export const EXTRA_INDEXES: readonly { name: string; sql: string; for: string }[] = [
  {
    name: 'sq_cover',
    sql: 'CREATE INDEX sq_cover ON search_queries(dataset_id, created_at, latency, result_count, search_type, search_method, user_id, id)',
    for: 'graphs, metrics, counts, per user, CTR/conversion (search side)',
  },
  { name: 'sq_query', sql: 'CREATE INDEX sq_query ON search_queries(dataset_id, query, created_at)', for: 'head queries (grouped in index order)' },
  { name: 'sq_latency', sql: 'CREATE INDEX sq_latency ON search_queries(dataset_id, latency)', for: 'searches by latency, no date filter' },
  {
    name: 'sq_no_result',
    sql: 'CREATE INDEX sq_no_result ON search_queries(dataset_id, created_at) WHERE result_count = 0',
    for: 'no-result page (partial: ~8% of rows)',
  },
  {
    name: 'ue_cover',
    sql: 'CREATE INDEX ue_cover ON user_events(dataset_id, event_type, request_type, created_at, is_conversion, revenue, request_id)',
    for: 'clicks/conversions by request, revenue',
  },
  { name: 'ue_name', sql: 'CREATE INDEX ue_name ON user_events(dataset_id, created_at, event_name)', for: 'event funnel' },
  { name: 'rq_cover', sql: 'CREATE INDEX rq_cover ON recommendation_queries(dataset_id, created_at, id)', for: 'recommendation CTR' },
];
