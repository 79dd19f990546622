/**
 * The topic and message records a write makes, and the errors of topic and message writes, shared
 * by both stores so that the same call stores the same record and fails with the same error on each.
 */
import { badRequest, notFound, type QuarryError } from '../core/domain/errors.js';
import { newId } from '../core/domain/ids.js';
import type { MessageRecord, TopicRecord } from '../core/domain/rag.js';
import type { NewMessage } from './repository.js';

/** The 404 of a topic that is not the dataset's live topic. */
export const topicNotFound = (id: string): QuarryError => notFound(`topic with id ${id} does not exist in this dataset`);

/** The 404 of a topic created for a dataset that is gone (purged after the caller looked it up). */
export const datasetGone = (id: string): QuarryError => notFound(`dataset with id ${id} does not exist`);

/** The 400 of a message whose role is not a chat role (the column's CHECK refused it; nothing was stored). */
export const badRole = (): QuarryError => badRequest("Each message's role must be one of system, user or assistant; nothing was stored");

/** Checks an append's `fromSortOrder` (undefined: nothing is replaced). */
export function checkFromSortOrder(fromSortOrder: number | undefined): void {
  if (fromSortOrder !== undefined && !Number.isFinite(fromSortOrder)) throw badRequest('fromSortOrder must be a finite number');
}

/** Largest token count stored: PostgreSQL's INTEGER is 32-bit, and a count past it must not fail its write (or an analytics batch, on every retry). */
const MAX_TOKENS = 2 ** 31 - 1;

/** A token count as the INTEGER columns keep it: a whole number in 0..2^31-1 (0 when absent or not finite). */
export const tokenCount = (n: number | null | undefined): number =>
  typeof n === 'number' && Number.isFinite(n) ? Math.min(MAX_TOKENS, Math.max(0, Math.round(n))) : 0;

/** A new topic. */
export function newTopic(input: { datasetId: string; name: string; ownerId: string; metadata: unknown }, now: number): TopicRecord {
  return {
    id: newId(),
    datasetId: input.datasetId,
    name: input.name,
    ownerId: input.ownerId,
    metadata: input.metadata ?? null,
    deleted: false,
    createdAt: now,
    updatedAt: now,
  };
}

/** A live topic after an update: absent fields keep their values; updated_at never goes back. */
export function updatedTopic(current: TopicRecord, patch: { name?: string; metadata?: unknown }, now: number): TopicRecord {
  return {
    ...current,
    name: patch.name ?? current.name,
    metadata: patch.metadata === undefined ? current.metadata : patch.metadata,
    updatedAt: Math.max(now, current.updatedAt),
  };
}

/** The copy of a topic that a clone makes (its messages are copied beside it). */
export function clonedTopic(source: TopicRecord, patch: { ownerId?: string; name?: string }, now: number): TopicRecord {
  return {
    ...source,
    id: newId(),
    name: patch.name ?? source.name,
    ownerId: patch.ownerId ?? source.ownerId,
    createdAt: now,
    updatedAt: now,
  };
}

/** The records of messages appended after the live message numbered `last` (0: none). */
export function newMessages(datasetId: string, topicId: string, messages: readonly NewMessage[], last: number, now: number): MessageRecord[] {
  return messages.map((m, i) => ({
    id: newId(),
    topicId,
    datasetId,
    sortOrder: last + i + 1,
    role: m.role,
    content: m.content,
    deleted: false,
    promptTokens: tokenCount(m.promptTokens),
    completionTokens: tokenCount(m.completionTokens),
    createdAt: now,
    updatedAt: now,
  }));
}
