/**
 * The DuckDB side of bench/analytics-engines.ts: the store's analytics columns in a DuckDB file
 * (TEXT → VARCHAR, REAL → DOUBLE, INTEGER → INTEGER, epoch ms → BIGINT), loaded through the
 * appender, reports run through prepared statements.
 */
import fs from 'node:fs';
import { DuckDBInstance, type DuckDBAppender, type DuckDBConnection, type DuckDBPreparedStatement } from '@duckdb/node-api';
import { TABLES, type Batch, type ColumnKind, type TableName } from './analytics-engine-data.js';
import type { Statement } from './analytics-engine-reports.js';

const SQL_TYPE: Record<ColumnKind, string> = { text: 'VARCHAR', real: 'DOUBLE', int: 'INTEGER', ms: 'BIGINT' };

/** A DuckDB file with the analytics tables. */
export class DuckEngine {
  private readonly appenders = new Map<TableName, DuckDBAppender>();
  private readonly prepared = new Map<string, DuckDBPreparedStatement>();

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
    readonly file: string,
  ) {}

  /**
   * Opens the file, creating its tables unless `existing` (a file loaded by an earlier run);
   * `threads` and `memoryLimit` keep it a fair neighbour on a shared machine.
   */
  static async create(file: string, threads: number, memoryLimit: string, existing = false): Promise<DuckEngine> {
    const instance = await DuckDBInstance.create(file, { threads: String(threads), memory_limit: memoryLimit });
    const connection = await instance.connect();
    const engine = new DuckEngine(instance, connection, file);
    if (existing) return engine;
    for (const table of TABLES) {
      // No primary key: DuckDB's ART index would cost load time and memory, and the reports join on
      // ids by hash anyway; the store keeps ids unique.
      const columns = table.columns.map(([name, kind]) => `${name} ${SQL_TYPE[kind]}`).join(', ');
      await connection.run(`CREATE TABLE ${table.name} (${columns})`);
      engine.appenders.set(table.name, await connection.createAppender(table.name));
    }
    return engine;
  }

  /** Appends one batch (the appender buffers and writes row groups as they fill). */
  load(batch: Batch): void {
    for (const table of TABLES) {
      const appender = this.appenders.get(table.name)!;
      const kinds = table.columns.map(([, kind]) => kind);
      for (const row of batch[table.name]) {
        for (let c = 0; c < kinds.length; c++) {
          const v = row[c];
          if (v === null || v === undefined) appender.appendNull();
          else if (kinds[c] === 'text') appender.appendVarchar(v as string);
          else if (kinds[c] === 'real') appender.appendDouble(v as number);
          else if (kinds[c] === 'int') appender.appendInteger(v as number);
          else appender.appendBigInt(BigInt(v));
        }
        appender.endRow();
      }
    }
  }

  /** Flushes and closes the appenders, then checkpoints so the file holds everything. */
  async finishLoad(): Promise<void> {
    for (const appender of this.appenders.values()) appender.closeSync();
    this.appenders.clear();
    await this.connection.run('CHECKPOINT');
  }

  /** Rows of one statement as plain JS values. */
  async run(s: Statement): Promise<unknown[]> {
    let p = this.prepared.get(s.sql);
    if (!p) {
      p = await this.connection.prepare(s.sql);
      this.prepared.set(s.sql, p);
    }
    p.bind([...s.params]);
    const reader = await p.runAndReadAll();
    return reader.getRowObjectsJS();
  }

  /** Bytes on disk (file and write-ahead log). */
  size(): number {
    const wal = `${this.file}.wal`;
    return fs.statSync(this.file).size + (fs.existsSync(wal) ? fs.statSync(wal).size : 0);
  }

  /** Closes the connection and the database. */
  close(): void {
    this.connection.closeSync();
    this.instance.closeSync();
  }
}
