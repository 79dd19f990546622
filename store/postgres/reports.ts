/** The analytics reports' SQL on PostgreSQL (see ../reports/report-sql.ts). */
import { numberPlaceholders, type ReportSql } from '../reports/report-sql.js';
import type { PgDb } from './database.js';

/** Report SQL on the pool of `db`, `?` placeholders numbered for PostgreSQL. */
export function pgReportSql(db: PgDb): ReportSql {
  const numbered = new Map<string, string>();
  return {
    dialect: 'postgres',
    async all(sql, params) {
      let text = numbered.get(sql);
      if (text === undefined) {
        text = numberPlaceholders(sql);
        if (numbered.size < 1024) numbered.set(sql, text);
      }
      return db.all(text, params);
    },
  };
}
