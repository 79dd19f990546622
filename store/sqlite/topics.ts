/** SQLite topic repository: `topics`, and the messages a topic's deletion or clone takes along (migration 6). */
import { newId } from '../../core/domain/ids.js';
import type { TopicRecord } from '../../core/domain/rag.js';
import { clonedTopic, datasetGone, newTopic, topicNotFound, updatedTopic } from '../rag-records.js';
import type { TopicRepository } from '../repository.js';
import { toJson, topicFromRow } from '../rows.js';
import type { Db } from './database.js';

const COLUMNS = 'id, dataset_id, name, owner_id, metadata, deleted, created_at, updated_at';

/** Whether a driver error is a foreign-key violation (the topic's dataset is gone). */
const isForeignKeyViolation = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';

/** Builds the SQLite topic repository. */
export function sqliteTopics(db: Db): TopicRepository {
  const insert = db.prepare(`INSERT INTO topics (${COLUMNS}) VALUES (?, ?, ?, ?, ?, 0, ?, ?)`);
  const live = db.prepare(`SELECT ${COLUMNS} FROM topics WHERE dataset_id = ? AND id = ? AND deleted = 0`);
  const rewrite = db.prepare('UPDATE topics SET name = ?, metadata = ?, updated_at = ? WHERE id = ?');
  const removeMessages = db.prepare('DELETE FROM messages WHERE topic_id = ?');
  const remove = db.prepare('DELETE FROM topics WHERE id = ?');
  const copyMessage = db.prepare(
    `INSERT INTO messages (id, topic_id, dataset_id, sort_order, role, content, deleted, prompt_tokens, completion_tokens, created_at, updated_at)
     SELECT ?, ?, dataset_id, sort_order, role, content, 0, prompt_tokens, completion_tokens, ?, ? FROM messages WHERE id = ?`,
  );
  const liveMessageIds = db.prepare('SELECT id FROM messages WHERE topic_id = ? AND deleted = 0 ORDER BY sort_order').pluck();
  const byOwner = db.prepare(`SELECT ${COLUMNS} FROM topics WHERE dataset_id = ? AND owner_id = ? AND deleted = 0 ORDER BY created_at DESC, id`);

  const find = (datasetId: string, id: string): TopicRecord | undefined => {
    const row = live.get(datasetId, id);
    return row ? topicFromRow(row) : undefined;
  };
  const store = (t: TopicRecord): void => {
    insert.run(t.id, t.datasetId, t.name, t.ownerId, toJson(t.metadata), t.createdAt, t.updatedAt);
  };

  const updateOne = db.transaction((datasetId: string, id: string, patch: { name?: string; metadata?: unknown }): TopicRecord => {
    const current = find(datasetId, id);
    if (!current) throw topicNotFound(id);
    const next = updatedTopic(current, patch, Date.now());
    rewrite.run(next.name, toJson(next.metadata), next.updatedAt, id);
    return next;
  });

  const deleteOne = db.transaction((datasetId: string, id: string): void => {
    if (!find(datasetId, id)) throw topicNotFound(id);
    removeMessages.run(id);
    remove.run(id);
  });

  const cloneOne = db.transaction((datasetId: string, id: string, patch: { ownerId?: string; name?: string }): TopicRecord => {
    const source = find(datasetId, id);
    if (!source) throw topicNotFound(id);
    const copy = clonedTopic(source, patch, Date.now());
    store(copy);
    for (const messageId of liveMessageIds.all(id) as string[]) copyMessage.run(newId(), copy.id, copy.createdAt, copy.createdAt, messageId);
    return copy;
  });

  return {
    async create(input) {
      const record = newTopic(input, Date.now());
      try {
        store(record);
      } catch (err) {
        if (isForeignKeyViolation(err)) throw datasetGone(input.datasetId);
        throw err;
      }
      return record;
    },
    async get(datasetId, id) {
      return find(datasetId, id);
    },
    // IMMEDIATE: the write lock is taken before the topic is read, so what is checked is what is written over.
    async update(datasetId, id, patch) {
      return updateOne.immediate(datasetId, id, patch);
    },
    async delete(datasetId, id) {
      deleteOne.immediate(datasetId, id);
    },
    async clone(datasetId, id, patch) {
      return cloneOne.immediate(datasetId, id, patch);
    },
    async listByOwner(datasetId, ownerId) {
      return (byOwner.all(datasetId, ownerId) as Record<string, unknown>[]).map(topicFromRow);
    },
  };
}
