/** The analytics reports' SQL on SQLite (see ../reports/report-sql.ts). */
import type { ReportSql } from '../reports/report-sql.js';
import type { Db } from './database.js';

/** Most report statements kept prepared: each report variant has a few shapes. */
const PREPARED_STATEMENTS = 256;

/** Report SQL on `db`, statements prepared once per text. */
export function sqliteReportSql(db: Db): ReportSql {
  const prepared = new Map<string, { all(...params: unknown[]): unknown[] }>();
  return {
    dialect: 'sqlite',
    async all(sql, params) {
      let statement = prepared.get(sql);
      if (!statement) {
        if (prepared.size >= PREPARED_STATEMENTS) prepared.clear();
        statement = db.prepare(sql);
        prepared.set(sql, statement);
      }
      return statement.all(...params) as any[];
    },
  };
}
