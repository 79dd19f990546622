/** PostgreSQL message repository: the `messages` of live topics. */
import { badRole, checkFromSortOrder, newMessages, topicNotFound } from '../rag-records.js';
import type { MessageRepository } from '../repository.js';
import { messageFromRow } from '../rows.js';
import type { PgDb } from './database.js';
import { lockLiveTopic } from './topics.js';

const COLUMNS = 'id, topic_id, dataset_id, sort_order, role, content, deleted, prompt_tokens, completion_tokens, created_at, updated_at';

// One statement for the whole batch, a column per array parameter.
const INSERT = `INSERT INTO messages (${COLUMNS})
  SELECT u.id, $1::text, $2::text, u.sort_order, u.role, u.content, 0, u.prompt_tokens, u.completion_tokens, $3::bigint, $3::bigint
  FROM unnest($4::text[], $5::int[], $6::text[], $7::text[], $8::int[], $9::int[]) AS u(id, sort_order, role, content, prompt_tokens, completion_tokens)`;

/** Whether a driver error is a CHECK violation (SQLSTATE 23514: the role). */
const isCheckViolation = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === '23514';

/** Builds the PostgreSQL message repository. */
export function pgMessages(db: PgDb): MessageRepository {
  return {
    async list(datasetId, topicId) {
      // One statement: the topic's check and its messages read in one snapshot.
      const rows = await db.all(
        `SELECT t.id AS live_topic, m.* FROM topics t
         LEFT JOIN messages m ON m.topic_id = t.id AND m.deleted = 0
         WHERE t.dataset_id = $1 AND t.id = $2 AND t.deleted = 0
         ORDER BY m.sort_order`,
        [datasetId, topicId],
      );
      if (rows.length === 0) throw topicNotFound(topicId);
      return rows.filter((r) => r.id !== null).map(messageFromRow);
    },
    async get(datasetId, id) {
      const [row] = await db.all(
        `SELECT m.* FROM messages m JOIN topics t ON t.id = m.topic_id
         WHERE m.id = $1 AND m.dataset_id = $2 AND m.deleted = 0 AND t.deleted = 0`,
        [id, datasetId],
      );
      return row === undefined ? undefined : messageFromRow(row);
    },
    async append(datasetId, topicId, messages, fromSortOrder) {
      checkFromSortOrder(fromSortOrder);
      try {
        return await db.tx(async (tx) => {
          // The topic's row lock serializes appends to it: the highest sort order read below is
          // the one the previous append committed, so two appends never take the same numbers.
          if (!(await lockLiveTopic(tx, datasetId, topicId))) throw topicNotFound(topicId);
          const now = Date.now();
          if (fromSortOrder !== undefined) {
            await tx.run('UPDATE messages SET deleted = 1, updated_at = $1 WHERE topic_id = $2 AND deleted = 0 AND sort_order >= $3::float8', [
              now,
              topicId,
              fromSortOrder,
            ]);
          }
          const top = await tx.get<{ n: number }>('SELECT COALESCE(MAX(sort_order), 0) AS n FROM messages WHERE topic_id = $1 AND deleted = 0', [topicId]);
          const stored = newMessages(datasetId, topicId, messages, top!.n, now);
          if (stored.length > 0) {
            await tx.run(INSERT, [
              topicId,
              datasetId,
              now,
              stored.map((m) => m.id),
              stored.map((m) => m.sortOrder),
              stored.map((m) => m.role),
              stored.map((m) => m.content),
              stored.map((m) => m.promptTokens),
              stored.map((m) => m.completionTokens),
            ]);
          }
          await tx.run('UPDATE topics SET updated_at = GREATEST(updated_at, $1) WHERE id = $2', [now, topicId]);
          return stored;
        });
      } catch (err) {
        if (isCheckViolation(err)) throw badRole();
        throw err;
      }
    },
  };
}
