/** The analytics reports' SQL on PostgreSQL (see ../reports/report-sql.ts). */
import { numberPlaceholders, reportTimeout, type ReportSql } from '../reports/report-sql.js';
import type { PgDb } from './database.js';

/** SQLSTATE query_canceled: what a statement stopped by `statement_timeout` fails with. */
const QUERY_CANCELED = '57014';

/**
 * Report SQL on the pool of `db`, `?` placeholders numbered for PostgreSQL. With `timeoutMs`,
 * each statement runs in a transaction of its own under `SET LOCAL statement_timeout`: the server
 * stops it at the deadline and frees the connection, and the setting ends with the transaction,
 * so the next user of the pooled connection never inherits it. Without, statements run as they
 * come (processes that answer no reports).
 */
export function pgReportSql(db: PgDb, timeoutMs?: number): ReportSql {
  const numbered = new Map<string, string>();
  // An integer of ours, never the caller's: safe to put in the text (SET takes no parameters).
  const setLimit = timeoutMs === undefined ? null : `SET LOCAL statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`;
  return {
    dialect: 'postgres',
    async all(sql, params) {
      let text = numbered.get(sql);
      if (text === undefined) {
        text = numberPlaceholders(sql);
        if (numbered.size < 1024) numbered.set(sql, text);
      }
      if (setLimit === null) return db.all(text, params);
      const statement = text;
      try {
        return await db.tx(async (tx) => {
          await tx.run(setLimit);
          return tx.all(statement, params);
        });
      } catch (err) {
        if ((err as { code?: unknown } | null)?.code === QUERY_CANCELED) throw reportTimeout(timeoutMs!, err);
        throw err;
      }
    },
  };
}
