/**
 * PostgreSQL's side of the follow-up flags and totals (../followup-batch.ts), applied inside the
 * transaction that inserted or deleted answers, under the rollup lock (./rollup-reads.ts).
 *
 * Under the lock every committed topic has one answer with the flag 0, its first; the rows another
 * transaction is inserting meanwhile are invisible here, and that transaction settles their topic
 * once it holds the lock, seeing this one's commit. The flags' updates wait for no row: the
 * retention purge takes the lock before it deletes (./analytics.ts), and inserted rows are new.
 */
import {
  followupAnswerColumns,
  followupDeltas,
  FOLLOWUP_TOTALS_TABLES,
  totalsKeyColumns,
  type FollowupAnswer,
  type FollowupChanges,
  type TopicKey,
} from '../followup-batch.js';
import { pgTextKey } from '../text-keys.js';
import type { Tx } from './database.js';
import { lockRollups } from './rollup-reads.js';

/** Each of the topics given as two arrays ($1 datasets, $2 topics) with its first answer by (created_at, id), as `f`. */
const FIRSTS = `WITH k AS (SELECT DISTINCT * FROM unnest($1::text[], $2::text[]) AS k(dataset_id, topic_id)),
  f AS (SELECT k.dataset_id, k.topic_id,
    (SELECT q.id FROM rag_queries q WHERE q.dataset_id = k.dataset_id AND q.topic_id = k.topic_id ORDER BY q.created_at, q.id LIMIT 1) AS first FROM k)`;

/**
 * Settles the flags of `topics` (whose answers `tx` just inserted or deleted) and adds to the
 * totals what that changes, plus `changes` (the deleted follow-ups, as `lost`); takes the rollup lock.
 */
export async function applyFollowups(tx: Tx, topics: readonly TopicKey[], changes: FollowupChanges): Promise<void> {
  if (topics.length === 0 && changes.gained.length === 0 && changes.lost.length === 0) return;
  await lockRollups(tx);
  const gained = [...changes.gained];
  const lost = [...changes.lost];
  if (topics.length > 0) {
    const keys = [topics.map((t) => t.datasetId), topics.map((t) => t.topicId)];
    // Only the new rows (inserted with 0) and the old first have the flag 0: the partial index finds them.
    gained.push(
      ...(await tx.all<FollowupAnswer>(
        `${FIRSTS} UPDATE rag_queries q SET followup = 1 FROM f
         WHERE q.dataset_id = f.dataset_id AND q.topic_id = f.topic_id AND q.followup = 0 AND q.id <> f.first RETURNING ${followupAnswerColumns('q.')}`,
        keys,
      )),
    );
    lost.push(...(await tx.all<FollowupAnswer>(`${FIRSTS} UPDATE rag_queries q SET followup = 0 FROM f WHERE q.id = f.first AND q.followup = 1 RETURNING ${followupAnswerColumns('q.')}`, keys)));
  }
  for (const t of FOLLOWUP_TOTALS_TABLES) {
    const deltas = followupDeltas({ gained, lost }, t);
    if (deltas.length === 0) continue;
    const columns = totalsKeyColumns(t);
    const keys = columns.map((_, i) => deltas.map((d) => d.key[i]));
    const keyArrays = columns.map((_, i) => `$${i + 1}::text[]`).join(', ');
    // The message is keyed by its md5 (../text-keys.ts); the other key columns as they are.
    const keyed = (alias: string, c: string): string => (c === 'user_message' ? pgTextKey(`${alias}${c}`) : `${alias}${c}`);
    await tx.run(
      `INSERT INTO ${t.table} AS t (${columns.join(', ')}, followups) SELECT * FROM unnest(${keyArrays}, $${columns.length + 1}::bigint[])
       ON CONFLICT (${columns.map((c) => keyed('', c)).join(', ')}) DO UPDATE SET followups = t.followups + excluded.followups`,
      [...keys, deltas.map((d) => d.followups)],
    );
    if (deltas.some((d) => d.followups < 0)) {
      await tx.run(
        `DELETE FROM ${t.table} t USING unnest(${keyArrays}) AS k(${columns.join(', ')})
         WHERE ${columns.map((c) => `${keyed('t.', c)} = ${keyed('k.', c)}`).join(' AND ')} AND t.followups <= 0`,
        keys,
      );
    }
  }
}
