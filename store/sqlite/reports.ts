/** The analytics reports' SQL on SQLite (see ../reports/report-sql.ts). */
import type { ReportSql } from '../reports/report-sql.js';
import type { Db } from './database.js';

/** Most report statements kept prepared: each report variant has a few shapes. */
const PREPARED_STATEMENTS = 256;

/**
 * Report SQL on `db`, statements prepared once per text, run on the caller's thread with no
 * deadline: better-sqlite3 cannot interrupt a statement, and one on the event loop cannot even be
 * timed out. So the HTTP process never uses it (its reports run in report-process.ts); what does
 * (the core's and job workers' stores, tools, tests) answers no report requests.
 */
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
