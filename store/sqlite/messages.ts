/** SQLite message repository: the `messages` of live topics (migration 6). */
import type { MessageRecord } from '../../core/domain/rag.js';
import { badRole, checkFromSortOrder, newMessages, topicNotFound } from '../rag-records.js';
import type { MessageRepository, NewMessage } from '../repository.js';
import { messageFromRow } from '../rows.js';
import type { Db } from './database.js';

const COLUMNS = 'id, topic_id, dataset_id, sort_order, role, content, deleted, prompt_tokens, completion_tokens, created_at, updated_at';

/** Whether a driver error is the CHECK on `messages.role`. */
const isCheckViolation = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === 'SQLITE_CONSTRAINT_CHECK';

/** Builds the SQLite message repository. */
export function sqliteMessages(db: Db): MessageRepository {
  const liveTopic = db.prepare('SELECT 1 FROM topics WHERE dataset_id = ? AND id = ? AND deleted = 0');
  const list = db.prepare(`SELECT ${COLUMNS} FROM messages WHERE topic_id = ? AND deleted = 0 ORDER BY sort_order`);
  const one = db.prepare(
    `SELECT ${COLUMNS.split(', ').map((c) => `m.${c}`).join(', ')} FROM messages m JOIN topics t ON t.id = m.topic_id
     WHERE m.id = ? AND m.dataset_id = ? AND m.deleted = 0 AND t.deleted = 0`,
  );
  const dropTail = db.prepare('UPDATE messages SET deleted = 1, updated_at = ? WHERE topic_id = ? AND deleted = 0 AND sort_order >= ?');
  const last = db.prepare('SELECT COALESCE(MAX(sort_order), 0) FROM messages WHERE topic_id = ? AND deleted = 0').pluck();
  const insert = db.prepare(`INSERT INTO messages (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)`);
  const touch = db.prepare('UPDATE topics SET updated_at = MAX(updated_at, ?) WHERE id = ?');

  const appendAll = db.transaction(
    (datasetId: string, topicId: string, messages: readonly NewMessage[], fromSortOrder: number | undefined): MessageRecord[] => {
      if (!liveTopic.get(datasetId, topicId)) throw topicNotFound(topicId);
      const now = Date.now();
      if (fromSortOrder !== undefined) dropTail.run(now, topicId, fromSortOrder);
      const stored = newMessages(datasetId, topicId, messages, last.get(topicId) as number, now);
      for (const m of stored) {
        insert.run(m.id, topicId, datasetId, m.sortOrder, m.role, m.content, m.promptTokens, m.completionTokens, now, now);
      }
      touch.run(now, topicId);
      return stored;
    },
  );

  return {
    async list(datasetId, topicId) {
      if (!liveTopic.get(datasetId, topicId)) throw topicNotFound(topicId);
      return (list.all(topicId) as Record<string, unknown>[]).map(messageFromRow);
    },
    async get(datasetId, id) {
      const row = one.get(id, datasetId) as Record<string, unknown> | undefined;
      return row === undefined ? undefined : messageFromRow(row);
    },
    async append(datasetId, topicId, messages, fromSortOrder) {
      checkFromSortOrder(fromSortOrder);
      try {
        // IMMEDIATE: the write lock is taken before the highest sort order is read, so appends of
        // other connections (the job workers, another process) wait instead of reading the same one.
        return appendAll.immediate(datasetId, topicId, messages, fromSortOrder);
      } catch (err) {
        if (isCheckViolation(err)) throw badRole();
        throw err;
      }
    },
  };
}
