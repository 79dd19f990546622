/** Chunk request bodies: create (one or many), update, get-by-ids. */
import { z } from 'zod';
import type { ChunkInput, ChunkPatch } from '../../core/domain/chunk.js';
import { QuarryError } from '../../core/domain/errors.js';
import { LIMITS } from '../../core/domain/limits.js';
import { boundedArray, boundedJson, boundedKey, boundedString, boundedText, finite, geoPoint, parse, requireBody, tagSet, timestamp, trackingId, uuid } from './common.js';

const phrase = boundedString(LIMITS.queryLength);
const fulltextBoost = z.object({ phrase, boost_factor: finite });
const semanticBoost = z.object({ phrase, distance_factor: finite });
const url = boundedString(LIMITS.urlLength);

/** Fields shared by create and update; chunk texts are capped at `maxTextBytes` each. */
function chunkFields(maxTextBytes: number) {
  const text = boundedText(maxTextBytes);
  return {
    chunk_html: text.nullable().optional(),
    semantic_content: text.nullable().optional(),
    fulltext_content: text.nullable().optional(),
    link: url.nullable().optional(),
    tag_set: tagSet.nullable().optional(),
    num_value: finite.nullable().optional(),
    metadata: boundedJson.optional(),
    group_ids: boundedArray(uuid, LIMITS.groupsPerChunk, 'group ids per chunk').nullable().optional(),
    group_tracking_ids: boundedArray(boundedKey(LIMITS.trackingIdLength).min(1), LIMITS.groupsPerChunk, 'group tracking ids per chunk')
      .nullable()
      .optional(),
    time_stamp: timestamp.nullable().optional(),
    location: geoPoint.nullable().optional(),
    image_urls: boundedArray(url, LIMITS.imageUrlsPerChunk, 'image urls per chunk').nullable().optional(),
    weight: finite.nullable().optional(),
    convert_html_to_text: z.boolean().nullable().optional(),
    fulltext_boost: fulltextBoost.nullable().optional(),
    boost_phrase: fulltextBoost.nullable().optional(),
    semantic_boost: semanticBoost.nullable().optional(),
    distance_phrase: semanticBoost.nullable().optional(),
  };
}

/** The create and update schemas for one text cap (the cap is configuration, so they are built once per value). */
function schemasFor(maxTextBytes: number) {
  const fields = chunkFields(maxTextBytes);
  const createChunk = z.object({
    ...fields,
    tracking_id: trackingId.nullable().optional(),
    upsert_by_tracking_id: z.boolean().nullable().optional(),
    split_avg: z.boolean().nullable().optional(),
    high_priority: z.boolean().nullable().optional(),
  });
  const updateChunk = z.object({
    ...fields,
    chunk_id: uuid.nullable().optional(),
    tracking_id: trackingId.nullable().optional(),
  });
  return { createChunk, updateChunk, updateByTrackingId: updateChunk.extend({ tracking_id: boundedKey(LIMITS.trackingIdLength).min(1) }) };
}

const schemaCache = new Map<number, ReturnType<typeof schemasFor>>();
function schemas(maxTextBytes: number): ReturnType<typeof schemasFor> {
  let s = schemaCache.get(maxTextBytes);
  if (!s) schemaCache.set(maxTextBytes, (s = schemasFor(maxTextBytes)));
  return s;
}

type CreateChunkBody = z.output<ReturnType<typeof schemasFor>['createChunk']>;

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

/** Validates POST /api/chunk: one payload or an array of at most `limit`, texts of at most `maxTextBytes` each. */
export function parseCreateChunks(body: unknown, limit: number, maxTextBytes: number = LIMITS.chunkTextBytes): CreateChunksRequest {
  const { createChunk } = schemas(maxTextBytes);
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
    const memberships = parsed.reduce((n, b) => n + (b.group_ids?.length ?? 0) + (b.group_tracking_ids?.length ?? 0), 0);
    if (memberships > LIMITS.groupsPerRequest) {
      throw new QuarryError(
        'invalid_json',
        `Json Deserialization Error: group_ids and group_tracking_ids: at most ${LIMITS.groupsPerRequest} in total per request allowed, got ${memberships}`,
      );
    }
    return { inputs: parsed.map(toInput), upsert: parsed.map((b) => b.upsert_by_tracking_id === true), isBatch: true };
  }
  const one = parse(createChunk, body);
  return { inputs: [toInput(one)], upsert: [one.upsert_by_tracking_id === true], isBatch: false };
}

/** A validated update: which chunk, and the patch. */
export interface UpdateChunkRequest {
  readonly selector: { id: string } | { trackingId: string };
  readonly patch: ChunkPatch;
}

/** Maps present fields to a patch; absent (undefined) keeps the stored value. */
function toPatch(b: z.output<ReturnType<typeof schemasFor>['updateChunk']>): ChunkPatch {
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
export function parseUpdateChunk(body: unknown, maxTextBytes: number = LIMITS.chunkTextBytes): UpdateChunkRequest {
  requireBody(body, 'a JSON object with chunk_id or tracking_id');
  const b = parse(schemas(maxTextBytes).updateChunk, body);
  const patch = toPatch(b);
  if (b.chunk_id) {
    return { selector: { id: b.chunk_id }, patch: { ...patch, newTrackingId: b.tracking_id } };
  }
  if (b.tracking_id) return { selector: { trackingId: b.tracking_id }, patch };
  throw new QuarryError('bad_request', 'Either chunk_id or tracking_id must be provided to identify the chunk to update');
}

/** Validates PUT /api/chunk/tracking_id/update (legacy): identified by tracking_id only. */
export function parseUpdateChunkByTrackingId(body: unknown, maxTextBytes: number = LIMITS.chunkTextBytes): UpdateChunkRequest {
  requireBody(body, 'a JSON object with tracking_id');
  const b = parse(schemas(maxTextBytes).updateByTrackingId, body);
  return { selector: { trackingId: b.tracking_id }, patch: toPatch(b) };
}

/** Validates POST /api/chunks. */
export function parseGetChunks(body: unknown): string[] {
  requireBody(body, 'a JSON object {"ids": [...]}');
  return parse(z.object({ ids: boundedArray(uuid, LIMITS.idsPerLookup, 'ids') }), body).ids;
}

/** Validates POST /api/chunks/tracking. */
export function parseGetChunksByTracking(body: unknown): string[] {
  requireBody(body, 'a JSON object {"tracking_ids": [...]}');
  return parse(z.object({ tracking_ids: boundedArray(boundedKey(LIMITS.trackingIdLength), LIMITS.idsPerLookup, 'tracking ids') }), body).tracking_ids;
}
