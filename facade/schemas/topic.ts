/** Topic request bodies: create, rename, clone. */
import { z } from 'zod';
import { badRequest } from '../../core/domain/errors.js';
import { LIMITS } from '../../core/domain/limits.js';
import { boundedJson, parse, requireBody, uuid } from './common.js';
import { MESSAGE_CONTENT_MAX_LENGTH, storableKey, storableText } from './message.js';

/** Longest topic name (a generated one is at most 100 characters). */
export const TOPIC_NAME_MAX_LENGTH = 1024;

const name = storableText(TOPIC_NAME_MAX_LENGTH);
/** An owner id is caller-chosen (a browser fingerprint, a user id): bounded like `user_id`. */
const ownerId = storableKey(LIMITS.userIdLength);

const createTopic = z.object({
  owner_id: ownerId,
  first_user_message: storableText(MESSAGE_CONTENT_MAX_LENGTH).nullable().optional(),
  name: name.nullable().optional(),
  metadata: boundedJson.optional(),
});

/** A validated POST /api/topic: the name, or the first message to name the topic after. */
export interface CreateTopicRequest {
  readonly ownerId: string;
  /** The caller's name; null: generate one from `firstMessage`. */
  readonly name: string | null;
  readonly firstMessage: string | null;
  readonly metadata: unknown;
}

/** Blank text counts as absent: a topic named "" or "   " would show as nothing. */
const nonBlank = (s: string | null | undefined): string | null => (s != null && s.trim() !== '' ? s : null);

/** Validates POST /api/topic. */
export function parseCreateTopic(body: unknown): CreateTopicRequest {
  requireBody(body, 'a JSON object with "owner_id" and "name" or "first_user_message"');
  const b = parse(createTopic, body);
  const topicName = nonBlank(b.name);
  const firstMessage = nonBlank(b.first_user_message);
  if (topicName === null && firstMessage === null) throw badRequest('first_user_message and name must not be empty');
  return { ownerId: b.owner_id, name: topicName, firstMessage, metadata: b.metadata ?? null };
}

const updateTopic = z.object({ topic_id: uuid, name });

/** Validates PUT /api/topic. */
export function parseUpdateTopic(body: unknown): { topicId: string; name: string } {
  requireBody(body, 'a JSON object with "topic_id" and "name"');
  const b = parse(updateTopic, body);
  const topicName = nonBlank(b.name);
  if (topicName === null) throw badRequest('Topic name must not be empty');
  return { topicId: b.topic_id, name: topicName };
}

const cloneTopic = z.object({ topic_id: uuid, owner_id: ownerId.nullable().optional(), name: name.nullable().optional() });

/** Validates POST /api/topic/clone: the copy keeps the owner and name unless given. */
export function parseCloneTopic(body: unknown): { topicId: string; ownerId?: string; name?: string } {
  requireBody(body, 'a JSON object with "topic_id"');
  const b = parse(cloneTopic, body);
  const topicName = nonBlank(b.name);
  return { topicId: b.topic_id, ...(b.owner_id != null ? { ownerId: b.owner_id } : {}), ...(topicName !== null ? { name: topicName } : {}) };
}
