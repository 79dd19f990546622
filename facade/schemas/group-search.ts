/**
 * The group members of POST /api/chunk_group/search (which group) and
 * POST /api/chunk_group/group_oriented_search (chunks per group). The search members of both
 * bodies are the chunk search's and are validated by `parseSearch`.
 */
import { z } from 'zod';
import { badRequest } from '../../core/domain/errors.js';
import { LIMITS } from '../../core/domain/limits.js';
import { boundedKey, parse, requireBody, uuid } from './common.js';

/** Chunks shown per group when the body names no `group_size` (the reference's default). */
export const DEFAULT_GROUP_SIZE = 3;

const groupRef = z.object({
  group_id: uuid.nullable().optional(),
  group_tracking_id: boundedKey(LIMITS.trackingIdLength).nullable().optional(),
});

/** Validates which group a search-within-group names; `group_id` wins when both are given (as in the reference). */
export function parseGroupRef(body: unknown): { id: string } | { trackingId: string } {
  requireBody(body, 'a JSON object with "query", "search_type" and group_id or group_tracking_id');
  const b = parse(groupRef, body);
  if (b.group_id) return { id: b.group_id };
  if (b.group_tracking_id) return { trackingId: b.group_tracking_id };
  throw badRequest('You must provide either group_id or group_tracking_id');
}

const groupSize = z.object({ group_size: z.number().int().min(0).nullable().optional() });

/** Validates `group_size` of a group-oriented search; `maxLimit` is the dataset's MAX_LIMIT. */
export function parseGroupSize(body: unknown, maxLimit: number): number {
  requireBody(body, 'a JSON object with "query" and "search_type"');
  const n = parse(groupSize, body).group_size ?? DEFAULT_GROUP_SIZE;
  if (n > maxLimit) throw badRequest(`group_size ${n} is above the dataset's MAX_LIMIT of ${maxLimit}`);
  return n;
}
