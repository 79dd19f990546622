/**
 * A report statement on PostgreSQL past the report deadline is stopped by the server
 * (`SET LOCAL statement_timeout`) and fails with `timeout` (504), and the setting dies with its
 * transaction: the same pooled connection (a pool of one) then runs statements without it. A
 * statement within the deadline answers as usual, and a store opened without a deadline (the
 * processes that answer no reports) sets none.
 */
import { afterEach, expect, it } from 'vitest';
import { QuarryError } from '../../core/domain/errors.js';
import { openPgStore, type PgStore } from '../../store/postgres/pg-store.js';
import { freshPgDatabase, type TestDatabase } from '../helpers/pg.js';

let db: TestDatabase | undefined;
let store: PgStore | undefined;

afterEach(async () => {
  await store?.close();
  await db?.drop();
  store = undefined;
  db = undefined;
});

it('stops a statement past the deadline with a 504, and leaves the pooled connection without the timeout', async () => {
  db = await freshPgDatabase();
  store = await openPgStore(db.url, { poolSize: 1, reportTimeoutMs: 300 });
  const backend = async () => (await store!.db.all<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0]!.pid;
  const pid = await backend();

  const started = Date.now();
  const err = await store.reports.all('SELECT pg_sleep(?) AS slept', [5]).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(QuarryError);
  expect((err as QuarryError).code).toBe('timeout');
  expect((err as QuarryError).httpStatus).toBe(504);
  expect((err as QuarryError).message).toMatch(/took longer than 300 ms.*shorter date_range/);
  // Stopped by the server at its deadline, not waited out.
  expect(Date.now() - started).toBeLessThan(4000);

  // The one connection of the pool, reused: no timeout left on it, and not in a transaction.
  expect(await backend()).toBe(pid);
  expect(await store.db.all('SHOW statement_timeout')).toEqual([{ statement_timeout: '0' }]);
  expect(await store.db.all('SELECT 1 AS slept FROM pg_sleep(0.5)')).toEqual([{ slept: 1 }]);
  expect(await store.db.all(`SELECT current_setting('transaction_isolation') AS iso, now() = statement_timestamp() AS fresh`)).toEqual([
    { iso: 'read committed', fresh: true },
  ]);

  // A report statement within the deadline answers, with its parameters in order.
  expect(await store.reports.all('SELECT ?::int + ?::int AS sum FROM pg_sleep(0.05)', [2, 3])).toEqual([{ sum: 5 }]);
  // And so does one after the timed-out one on the same connection, also ending its transaction.
  expect(await store.reports.all(`SELECT current_setting('statement_timeout') AS limit`, [])).toEqual([{ limit: '300ms' }]);
  expect(await store.db.all('SHOW statement_timeout')).toEqual([{ statement_timeout: '0' }]);
});

it('sets no deadline on a store opened without one', async () => {
  db = await freshPgDatabase();
  store = await openPgStore(db.url, { poolSize: 1 });
  expect(await store.reports.all(`SELECT current_setting('statement_timeout') AS limit`, [])).toEqual([{ limit: '0' }]);
});
