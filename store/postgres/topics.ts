/** PostgreSQL topic repository: `topics`, and the messages a topic's deletion or clone takes along. */
import { newId } from '../../core/domain/ids.js';
import type { TopicRecord } from '../../core/domain/rag.js';
import { clonedTopic, datasetGone, newTopic, topicNotFound, updatedTopic } from '../rag-records.js';
import type { TopicRepository } from '../repository.js';
import { toJson, topicFromRow } from '../rows.js';
import type { PgDb, Sql } from './database.js';

const COLUMNS = 'id, dataset_id, name, owner_id, metadata, deleted, created_at, updated_at';
const INSERT = `INSERT INTO topics (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, 0, $6, $6)`;

/** Whether a driver error is a foreign-key violation (SQLSTATE 23503: the topic's dataset is gone). */
const isForeignKeyViolation = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === '23503';

/**
 * The dataset's live topic, its row locked until the transaction ends (FOR UPDATE): every write
 * of a topic or its messages takes this lock first, so they run one at a time per topic (as
 * SQLite's single writer runs them) and an append never reads a sort order another is about to use.
 */
export async function lockLiveTopic(tx: Sql, datasetId: string, id: string): Promise<TopicRecord | undefined> {
  const row = await tx.get(`SELECT ${COLUMNS} FROM topics WHERE dataset_id = $1 AND id = $2 AND deleted = 0 FOR UPDATE`, [datasetId, id]);
  return row ? topicFromRow(row) : undefined;
}

/** Builds the PostgreSQL topic repository. */
export function pgTopics(db: PgDb): TopicRepository {
  return {
    async create(input) {
      const record = newTopic(input, Date.now());
      try {
        await db.run(INSERT, [record.id, record.datasetId, record.name, record.ownerId, toJson(record.metadata), record.createdAt]);
      } catch (err) {
        if (isForeignKeyViolation(err)) throw datasetGone(input.datasetId);
        throw err;
      }
      return record;
    },
    async get(datasetId, id) {
      const row = await db.get(`SELECT ${COLUMNS} FROM topics WHERE dataset_id = $1 AND id = $2 AND deleted = 0`, [datasetId, id]);
      return row ? topicFromRow(row) : undefined;
    },
    update(datasetId, id, patch) {
      return db.tx(async (tx) => {
        const current = await lockLiveTopic(tx, datasetId, id);
        if (!current) throw topicNotFound(id);
        const next = updatedTopic(current, patch, Date.now());
        await tx.run('UPDATE topics SET name = $1, metadata = $2, updated_at = $3 WHERE id = $4', [next.name, toJson(next.metadata), next.updatedAt, id]);
        return next;
      });
    },
    delete(datasetId, id) {
      return db.tx(async (tx) => {
        if (!(await lockLiveTopic(tx, datasetId, id))) throw topicNotFound(id);
        await tx.run('DELETE FROM messages WHERE topic_id = $1', [id]);
        await tx.run('DELETE FROM topics WHERE id = $1', [id]);
      });
    },
    clone(datasetId, id, patch) {
      return db.tx(async (tx) => {
        // Locked: an append to the source waits, so the copy holds its messages before or after it, never half.
        const source = await lockLiveTopic(tx, datasetId, id);
        if (!source) throw topicNotFound(id);
        const copy = clonedTopic(source, patch, Date.now());
        await tx.run(INSERT, [copy.id, datasetId, copy.name, copy.ownerId, toJson(copy.metadata), copy.createdAt]);
        const ids = (await tx.all<{ id: string }>('SELECT id FROM messages WHERE topic_id = $1 AND deleted = 0', [id])).map((r) => r.id);
        if (ids.length > 0) {
          await tx.run(
            `INSERT INTO messages (id, topic_id, dataset_id, sort_order, role, content, deleted, prompt_tokens, completion_tokens, created_at, updated_at)
             SELECT u.new_id, $1, m.dataset_id, m.sort_order, m.role, m.content, 0, m.prompt_tokens, m.completion_tokens, $2, $2
             FROM unnest($3::text[], $4::text[]) AS u(old_id, new_id) JOIN messages m ON m.id = u.old_id`,
            [copy.id, copy.createdAt, ids, ids.map(() => newId())],
          );
        }
        return copy;
      });
    },
    async listByOwner(datasetId, ownerId) {
      const rows = await db.all(`SELECT ${COLUMNS} FROM topics WHERE dataset_id = $1 AND owner_id = $2 AND deleted = 0 ORDER BY created_at DESC, id`, [
        datasetId,
        ownerId,
      ]);
      return rows.map(topicFromRow);
    },
  };
}
