/** Topics and their messages on the wire. */
import type { MessageRecord, TopicRecord } from '../../core/domain/rag.js';
import { formatTimestamp } from '../../core/domain/time.js';

/** Topic `{id, name, deleted, created_at, updated_at, dataset_id, owner_id}`. */
export function topic(t: TopicRecord): Record<string, unknown> {
  return {
    id: t.id,
    name: t.name,
    deleted: t.deleted,
    created_at: formatTimestamp(t.createdAt),
    updated_at: formatTimestamp(t.updatedAt),
    dataset_id: t.datasetId,
    owner_id: t.ownerId,
  };
}

/** Message `{id, topic_id, sort_order, content, role, deleted, prompt_tokens, completion_tokens, created_at, updated_at, dataset_id}`. */
export function message(m: MessageRecord): Record<string, unknown> {
  return {
    id: m.id,
    topic_id: m.topicId,
    sort_order: m.sortOrder,
    content: m.content,
    role: m.role,
    deleted: m.deleted,
    prompt_tokens: m.promptTokens,
    completion_tokens: m.completionTokens,
    created_at: formatTimestamp(m.createdAt),
    updated_at: formatTimestamp(m.updatedAt),
    dataset_id: m.datasetId,
  };
}
