/** The per-dataset change log on PostgreSQL: every chunk write appends here in the same transaction. */
import { QuarryError } from '../../core/domain/errors.js';
import type { ChangeLogEntry, ChangeLogRepository } from '../repository.js';
import type { PgDb, Tx } from './database.js';

/** The LISTEN/NOTIFY channel on which each commit that appended to a dataset's log announces that dataset's id. */
export const CHANGES_CHANNEL = 'quarry_changes';

/** One change to record. */
export interface Change {
  readonly chunkId: string;
  readonly op: ChangeLogEntry['op'];
}

// WITH ORDINALITY ... ORDER BY: the identity values are drawn in the order the rows reach the
// insert, so the entries get ascending seqs in the order given. Arrays keep the text constant
// (one prepared plan) and clear of the 65535-parameter limit whatever the batch size.
const INSERT = `INSERT INTO change_log (dataset_id, chunk_id, op, created_at)
  SELECT $1::text, u.chunk_id, u.op, $4::bigint FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS u(chunk_id, op, n) ORDER BY u.n`;
// The first append of a transaction also queues its notification: one round trip for both. A
// data-modifying WITH runs to completion whether or not the outer query reads it.
const INSERT_AND_NOTIFY = `WITH logged AS (${INSERT} RETURNING 1) SELECT pg_notify($5::text, $1::text)`;

/** Datasets each open transaction has already queued a notification for (NOTIFY would fold repeats, but each costs a round trip). */
const notified = new WeakMap<Tx, Set<string>>();

/**
 * Appends entries, in order, to a dataset's change log and queues the commit's notification on
 * {@link CHANGES_CHANNEL}. Call only inside the transaction of the write it records; it takes the
 * dataset's lock first (a no-op when the transaction already holds it, as it should from its
 * start, so that what it read before writing is what SQLite's single writer would have read).
 */
export async function appendChanges(tx: Tx, datasetId: string, entries: readonly Change[], now: number): Promise<void> {
  if (entries.length === 0) return;
  await tx.lockDataset(datasetId);
  const chunkIds = entries.map((e) => e.chunkId);
  const ops = entries.map((e) => e.op);
  let done = notified.get(tx);
  if (done?.has(datasetId)) {
    await tx.run(INSERT, [datasetId, chunkIds, ops, now]);
    return;
  }
  await tx.run(INSERT_AND_NOTIFY, [datasetId, chunkIds, ops, now, CHANGES_CHANNEL]);
  if (!done) notified.set(tx, (done = new Set()));
  done.add(datasetId);
}

/** Whether a driver error is a unique violation (SQLSTATE 23505). */
export const isUniqueViolation = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === '23505';

/** Attempts of {@link datasetTx} that end in a unique violation before it gives up. */
const CONFLICT_ATTEMPTS = 3;

/**
 * Runs a write of one dataset as SQLite's single writer ran it: in a transaction that takes the
 * dataset's lock before anything else, so its checks (is this tracking id taken?) read what every
 * earlier write of the dataset committed. A unique violation can then only come from a writer
 * that skipped the lock; the transaction is run again (it now meets the committed row in its
 * checks and fails, or not, exactly as SQLite would), and if it keeps happening `conflict` turns
 * the driver error into the caller's error: never a raw 23505.
 */
export async function datasetTx<T>(db: PgDb, datasetId: string, fn: (tx: Tx) => Promise<T>, conflict: (err: unknown) => QuarryError): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.tx(async (tx) => {
        await tx.lockDataset(datasetId);
        return fn(tx);
      });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      if (attempt >= CONFLICT_ATTEMPTS) throw conflict(err);
    }
  }
}

/**
 * The tracking id in a unique violation of an index on (dataset_id, tracking_id), from the
 * error's detail (`Key (dataset_id, tracking_id)=(<dataset>, <tracking id>) already exists.`).
 */
export function conflictingTrackingId(err: unknown, datasetId: string): string {
  const detail = String((err as { detail?: unknown } | null)?.detail ?? '');
  const m = /^Key \(dataset_id, tracking_id\)=\((.*)\) already exists\.$/s.exec(detail);
  const pair = m?.[1] ?? '';
  return pair.startsWith(`${datasetId}, `) ? pair.slice(datasetId.length + 2) : pair;
}

/** Reads the change log. */
export function pgChangeLog(db: PgDb): ChangeLogRepository {
  return {
    async since(datasetId, afterSeq, limit) {
      const rows = await db.all<{ seq: number; dataset_id: string; chunk_id: string; op: ChangeLogEntry['op'] }>(
        'SELECT seq, dataset_id, chunk_id, op FROM change_log WHERE dataset_id = $1 AND seq > $2 ORDER BY seq LIMIT $3',
        [datasetId, afterSeq, limit < 0 ? null : limit],
      );
      return rows.map((r) => ({ seq: r.seq, datasetId: r.dataset_id, chunkId: r.chunk_id, op: r.op }));
    },
    async head() {
      return (await db.get<{ head: number }>('SELECT COALESCE(MAX(seq), 0) AS head FROM change_log'))!.head;
    },
  };
}
