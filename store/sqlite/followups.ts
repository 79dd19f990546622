/**
 * SQLite's side of the follow-up flags and totals (../followup-batch.ts), applied inside the
 * transaction that inserted or deleted answers. SQLite's single writer makes each topic's read of
 * its first answer and the flag updates after it atomic.
 */
import {
  followupAnswerColumns,
  followupDeltas,
  FOLLOWUP_TOTALS_TABLES,
  TOPIC_FIRST_SQL,
  totalsKeyColumns,
  type FollowupAnswer,
  type FollowupChanges,
  type TopicKey,
} from '../followup-batch.js';
import type { Db } from './database.js';

/**
 * Settles the flags of `topics` (whose answers were just inserted or deleted) and adds to the
 * totals what that changes, plus `changes` (the deleted follow-ups, as `lost`).
 */
export type SqliteFollowups = (topics: readonly TopicKey[], changes: FollowupChanges) => void;

/** The follow-up writer of `db`. */
export function sqliteFollowups(db: Db): SqliteFollowups {
  const firstOf = db.prepare(TOPIC_FIRST_SQL).pluck();
  // Only the new rows (inserted with 0) and the old first have the flag 0: the partial index finds them.
  const demote = db.prepare(`UPDATE rag_queries SET followup = 1 WHERE dataset_id = ? AND topic_id = ? AND followup = 0 AND id <> ? RETURNING ${followupAnswerColumns()}`);
  const promote = db.prepare(`UPDATE rag_queries SET followup = 0 WHERE id = ? AND followup = 1 RETURNING ${followupAnswerColumns()}`);
  const totals = FOLLOWUP_TOTALS_TABLES.map((t) => {
    const keys = totalsKeyColumns(t);
    return {
      t,
      add: db.prepare(
        `INSERT INTO ${t.table} (${keys.join(', ')}, followups) VALUES (${keys.map(() => '?').join(', ')}, ?)
         ON CONFLICT (${keys.join(', ')}) DO UPDATE SET followups = followups + excluded.followups`,
      ),
      dropEmpty: db.prepare(`DELETE FROM ${t.table} WHERE ${keys.map((k) => `${k} = ?`).join(' AND ')} AND followups <= 0`),
    };
  });

  return (topics, changes) => {
    const gained = [...changes.gained];
    const lost = [...changes.lost];
    for (const { datasetId, topicId } of topics) {
      const first = firstOf.get(datasetId, topicId) as string | undefined;
      if (first === undefined) continue;
      gained.push(...(demote.all(datasetId, topicId, first) as FollowupAnswer[]));
      lost.push(...(promote.all(first) as FollowupAnswer[]));
    }
    for (const { t, add, dropEmpty } of totals) {
      for (const d of followupDeltas({ gained, lost }, t)) {
        add.run(...d.key, d.followups);
        if (d.followups < 0) dropEmpty.run(...d.key);
      }
    }
  };
}
