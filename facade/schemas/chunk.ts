/** Chunk request bodies: create (one or many), update, get-by-ids. */
import { z } from 'zod';
import type { ChunkInput, ChunkPatch } from '../../core/domain/chunk.js';
import { QuarryError } from '../../core/domain/errors.js';
import { finite, geoPoint, json, parse, requireBody, tagSet, timestamp, trackingId, uuid } from './common.js';

const fulltextBoost = z.object({ phrase: z.string(), boost_factor: finite });
const semanticBoost = z.object({ phrase: z.string(), distance_factor: finite });

/** Fields shared by create and update. */
const chunkFields = {
  chunk_html: z.string().nullable().optional(),
  semantic_content: z.string().nullable().optional(),
  fulltext_content: z.string().nullable().optional(),
  link: z.string().nullable().optional(),
  tag_set: tagSet.nullable().optional(),
  num_value: finite.nullable().optional(),
  metadata: json.optional(),
  group_ids: z.array(uuid).nullable().optional(),
  group_tracking_ids: z.array(z.string().min(1)).nullable().optional(),
  time_stamp: timestamp.nullable().optional(),
  location: geoPoint.nullable().optional(),
  image_urls: z.array(z.string()).nullable().optional(),
  weight: finite.nullable().optional(),
  convert_html_to_text: z.boolean().nullable().optional(),
  fulltext_boost: fulltextBoost.nullable().optional(),
  boost_phrase: fulltextBoost.nullable().optional(),
  semantic_boost: semanticBoost.nullable().optional(),
  distance_phrase: semanticBoost.nullable().optional(),
};

const createChunk = z.object({
  ...chunkFields,
  tracking_id: trackingId.nullable().optional(),
  upsert_by_tracking_id: z.boolean().nullable().optional(),
  split_avg: z.boolean().nullable().optional(),
  high_priority: z.boolean().nullable().optional(),
});

type CreateChunkBody = z.output<typeof createChunk>;

/** A validated create request: the chunks and whether the body was an array. */
export interface CreateChunksRequest {
  readonly inputs: ChunkInput[];
  readonly upsert: boolean[];
  readonly isBatch: boolean;
}

function toInput(b: CreateChunkBody): ChunkInput {
  return {
    trackingId: b.tracking_id ?? null,
    chunkHtml: b.chunk_html ?? null,
    link: b.link ?? null,
    metadata: b.metadata ?? null,
    tagSet: b.tag_set ?? [],
    timeStamp: b.time_stamp ?? null,
    weight: b.weight ?? 0,
    imageUrls: b.image_urls ?? null,
    location: b.location ?? null,
    numValue: b.num_value ?? null,
    semanticContent: b.semantic_content ?? null,
    fulltextContent: b.fulltext_content ?? null,
    convertHtmlToText: b.convert_html_to_text ?? true,
    fulltextBoost: b.fulltext_boost ?? b.boost_phrase ?? null,
    semanticBoost: b.semantic_boost ?? b.distance_phrase ?? null,
    groupIds: b.group_ids ?? [],
    groupTrackingIds: b.group_tracking_ids ?? [],
  };
}

/** Validates POST /api/chunk: one payload or an array of at most `limit`. */
export function parseCreateChunks(body: unknown, limit: number): CreateChunksRequest {
  requireBody(body, 'a chunk object or an array of chunk objects');
  if (Array.isArray(body)) {
    if (body.length > limit) {
      throw new QuarryError(
        'payload_too_large',
        `Too many chunks provided in bulk. The limit is ${limit} chunks per bulk upload; got ${body.length}`,
      );
    }
    if (body.length === 0) throw new QuarryError('bad_request', 'The array of chunks is empty; send at least one chunk');
    const parsed = parse(z.array(createChunk), body);
    return { inputs: parsed.map(toInput), upsert: parsed.map((b) => b.upsert_by_tracking_id === true), isBatch: true };
  }
  const one = parse(createChunk, body);
  return { inputs: [toInput(one)], upsert: [one.upsert_by_tracking_id === true], isBatch: false };
}

const updateChunk = z.object({
  ...chunkFields,
  chunk_id: uuid.nullable().optional(),
  tracking_id: trackingId.nullable().optional(),
});

/** A validated update: which chunk, and the patch. */
export interface UpdateChunkRequest {
  readonly selector: { id: string } | { trackingId: string };
  readonly patch: ChunkPatch;
}

/** Maps present fields to a patch; absent (undefined) keeps the stored value. */
function toPatch(b: z.output<typeof updateChunk>): ChunkPatch {
  const keepOr = <T, U>(v: T | undefined, f: (v: T) => U): U | undefined => (v === undefined ? undefined : f(v));
  return {
    chunkHtml: b.chunk_html,
    link: b.link,
    metadata: b.metadata,
    tagSet: keepOr(b.tag_set, (v) => v ?? []),
    timeStamp: b.time_stamp,
    weight: keepOr(b.weight, (v) => v ?? 0),
    imageUrls: b.image_urls,
    location: b.location,
    numValue: b.num_value,
    semanticContent: b.semantic_content,
    fulltextContent: b.fulltext_content,
    convertHtmlToText: keepOr(b.convert_html_to_text, (v) => v ?? true),
    fulltextBoost: b.fulltext_boost ?? b.boost_phrase,
    semanticBoost: b.semantic_boost ?? b.distance_phrase,
    groupIds: keepOr(b.group_ids, (v) => v ?? []),
    groupTrackingIds: keepOr(b.group_tracking_ids, (v) => v ?? []),
  };
}

/** Validates PUT /api/chunk: `chunk_id` wins; with both, `tracking_id` is the new tracking id. */
export function parseUpdateChunk(body: unknown): UpdateChunkRequest {
  requireBody(body, 'a JSON object with chunk_id or tracking_id');
  const b = parse(updateChunk, body);
  const patch = toPatch(b);
  if (b.chunk_id) {
    return { selector: { id: b.chunk_id }, patch: { ...patch, newTrackingId: b.tracking_id } };
  }
  if (b.tracking_id) return { selector: { trackingId: b.tracking_id }, patch };
  throw new QuarryError('bad_request', 'Either chunk_id or tracking_id must be provided to identify the chunk to update');
}

/** Validates PUT /api/chunk/tracking_id/update (legacy): identified by tracking_id only. */
export function parseUpdateChunkByTrackingId(body: unknown): UpdateChunkRequest {
  requireBody(body, 'a JSON object with tracking_id');
  const b = parse(updateChunk.extend({ tracking_id: z.string().min(1) }), body);
  return { selector: { trackingId: b.tracking_id }, patch: toPatch(b) };
}

/** Validates POST /api/chunks. */
export function parseGetChunks(body: unknown): string[] {
  requireBody(body, 'a JSON object {"ids": [...]}');
  return parse(z.object({ ids: z.array(uuid).max(10_000) }), body).ids;
}

/** Validates POST /api/chunks/tracking. */
export function parseGetChunksByTracking(body: unknown): string[] {
  requireBody(body, 'a JSON object {"tracking_ids": [...]}');
  return parse(z.object({ tracking_ids: z.array(z.string()).max(10_000) }), body).tracking_ids;
}
