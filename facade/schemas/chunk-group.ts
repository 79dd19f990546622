/** Chunk-group request bodies. */
import { z } from 'zod';
import { QuarryError, badRequest } from '../../core/domain/errors.js';
import type { GroupInput } from '../../core/domain/group.js';
import { LIMITS } from '../../core/domain/limits.js';
import { boundedArray, boundedJson, boundedKey, boundedString, parse, requireBody, tagSet, trackingId, uuid } from './common.js';

const groupFields = {
  name: boundedString(LIMITS.groupNameLength).nullable().optional(),
  description: boundedString(LIMITS.groupDescriptionLength).nullable().optional(),
  tracking_id: trackingId.nullable().optional(),
  metadata: boundedJson.optional(),
  tag_set: tagSet.nullable().optional(),
};

const createGroup = z.object({ ...groupFields, upsert_by_tracking_id: z.boolean().nullable().optional() });

/** A validated create: groups, upsert flag, and whether the body was an array. */
export interface CreateGroupsRequest {
  readonly inputs: GroupInput[];
  readonly upsert: boolean;
  readonly isBatch: boolean;
}

const toInput = (b: z.output<typeof createGroup>): GroupInput => ({
  name: b.name ?? '',
  description: b.description ?? '',
  trackingId: b.tracking_id ?? null,
  metadata: b.metadata ?? null,
  tagSet: b.tag_set ?? [],
});

/** Validates POST /api/chunk_group: one group or an array of at most `limit`. */
export function parseCreateGroups(body: unknown, limit: number): CreateGroupsRequest {
  requireBody(body, 'a group object or an array of group objects');
  if (Array.isArray(body)) {
    if (body.length > limit) {
      throw new QuarryError('payload_too_large', `Too many groups provided in bulk. The limit is ${limit} groups per request; got ${body.length}`);
    }
    if (body.length === 0) throw badRequest('The array of groups is empty; send at least one group');
    const parsed = parse(z.array(createGroup), body);
    return { inputs: parsed.map(toInput), upsert: parsed.some((b) => b.upsert_by_tracking_id === true), isBatch: true };
  }
  const one = parse(createGroup, body);
  return { inputs: [toInput(one)], upsert: one.upsert_by_tracking_id === true, isBatch: false };
}

const updateGroup = z.object({ ...groupFields, group_id: uuid.nullable().optional() });

/** Validates PUT /api/chunk_group: `group_id` identifies; with both, `tracking_id` is the new one. */
export function parseUpdateGroup(
  body: unknown,
  pathTrackingId?: string,
): { selector: { id: string } | { trackingId: string }; patch: GroupInput } {
  requireBody(body, 'a JSON object with group_id or tracking_id');
  const b = parse(updateGroup, body);
  const patch: GroupInput = {
    name: b.name ?? undefined,
    description: b.description ?? undefined,
    metadata: b.metadata,
    tagSet: b.tag_set === undefined ? undefined : (b.tag_set ?? []),
  };
  if (pathTrackingId !== undefined) return { selector: { trackingId: pathTrackingId }, patch };
  if (b.group_id) return { selector: { id: b.group_id }, patch: { ...patch, trackingId: b.tracking_id ?? undefined } };
  if (b.tracking_id) return { selector: { trackingId: b.tracking_id }, patch };
  throw badRequest('Either group_id or tracking_id must be provided to identify the group to update');
}

/** Validates the body naming a chunk to add to a group. */
export function parseChunkRef(body: unknown): { id: string } | { trackingId: string } {
  requireBody(body, 'a JSON object with chunk_id or chunk_tracking_id');
  const b = parse(z.object({ chunk_id: uuid.nullable().optional(), chunk_tracking_id: boundedKey(LIMITS.trackingIdLength).nullable().optional() }), body);
  if (b.chunk_id) return { id: b.chunk_id };
  if (b.chunk_tracking_id) return { trackingId: b.chunk_tracking_id };
  throw badRequest('Either chunk_id or chunk_tracking_id must be provided');
}

/** Validates POST /api/chunk_group/chunks. */
export function parseGroupsForChunks(body: unknown) {
  requireBody(body, 'a JSON object with chunk_ids or chunk_tracking_ids');
  return parse(
    z.object({
      chunk_ids: boundedArray(uuid, LIMITS.idsPerLookup, 'chunk ids').nullable().optional(),
      chunk_tracking_ids: boundedArray(boundedKey(LIMITS.trackingIdLength), LIMITS.idsPerLookup, 'chunk tracking ids').nullable().optional(),
    }),
    body,
  );
}

/** Reads `delete_chunks` from the query string. */
export function deleteChunksFlag(value: unknown): boolean {
  if (value === undefined || value === 'false' || value === '0' || value === '') return false;
  if (value === 'true' || value === '1') return true;
  throw badRequest('query parameter delete_chunks must be true or false');
}
