/** Chunk records on the wire: V2 (tag_set array) and V1 (tag_set comma-joined string). */
import type { ChunkRecord } from '../../core/domain/chunk.js';
import { formatOptionalTimestamp, formatTimestamp } from '../../core/domain/time.js';
import type { ApiVersion } from '../access.js';
import { jsonFragment, type JsonFragment } from './json-bytes.js';
import { withFields } from '../../core/domain/with-fields.js';

/** V2 ChunkMetadata. */
export function chunkV2(c: ChunkRecord): Record<string, unknown> {
  return {
    id: c.id,
    link: c.link,
    created_at: formatTimestamp(c.createdAt),
    updated_at: formatTimestamp(c.updatedAt),
    chunk_html: c.chunkHtml,
    metadata: c.metadata,
    tracking_id: c.trackingId,
    time_stamp: formatOptionalTimestamp(c.timeStamp),
    dataset_id: c.datasetId,
    weight: c.weight,
    location: c.location,
    image_urls: c.imageUrls,
    tag_set: [...c.tagSet],
    num_value: c.numValue,
  };
}

/** V1 ChunkMetadataStringTagSet. */
export function chunkV1(c: ChunkRecord): Record<string, unknown> {
  return withFields(chunkV2(c), { tag_set: c.tagSet.length > 0 ? c.tagSet.join(',') : null });
}

/** The chunk in the shape the caller's API version asks for. */
export function chunkFor(version: ApiVersion, c: ChunkRecord): Record<string, unknown> {
  return version === 'V1' ? chunkV1(c) : chunkV2(c);
}

/** Slim chunk (no chunk_html), tag_set shaped by version. */
export function slimChunkFor(version: ApiVersion, c: ChunkRecord): Record<string, unknown> {
  const { chunk_html: _omit, ...rest } = chunkFor(version, c);
  return rest;
}

/** ContentChunkMetadata: just what is needed to show the result. */
export function contentOnlyChunk(c: ChunkRecord): Record<string, unknown> {
  return {
    id: c.id,
    chunk_html: c.chunkHtml,
    tracking_id: c.trackingId,
    time_stamp: formatOptionalTimestamp(c.timeStamp),
    weight: c.weight,
    image_urls: c.imageUrls,
    num_value: c.numValue,
  };
}

/** The shapes a result's chunk takes: full, slim (no chunk_html) or content only. */
export type ChunkShape = 'full' | 'slim' | 'content';

/** The chunk in `shape` for `version`. */
export function chunkOfShape(version: ApiVersion, shape: ChunkShape, c: ChunkRecord): Record<string, unknown> {
  if (shape === 'content') return contentOnlyChunk(c);
  return shape === 'slim' ? slimChunkFor(version, c) : chunkFor(version, c);
}

/** Slot of a shape and version in a record's {@link presented} list. */
function slotOf(version: ApiVersion, shape: ChunkShape): number {
  if (shape === 'content') return 4;
  return (version === 'V1' ? 0 : 2) + (shape === 'slim' ? 1 : 0);
}

/**
 * The JSON of each record in each shape, encoded the first time a page shows it. A record never
 * changes once read (a write gives a new record), and the store's read cache
 * (store/sqlite/chunk-cache.ts) hands the same record to every search that shows the chunk, so
 * a popular chunk is encoded once instead of once per page: about 50 us of a 10-result SciFact
 * page (bench/README.md, search-latency). The bytes live as long as the record; a record the
 * cache does not keep is encoded once and dropped with it.
 */
const presented = new WeakMap<ChunkRecord, (JsonFragment | undefined)[]>();

/** The chunk as JSON in `shape` for `version`, encoded once per record. */
export function chunkJson(version: ApiVersion, shape: ChunkShape, c: ChunkRecord): JsonFragment {
  let forms = presented.get(c);
  if (forms === undefined) presented.set(c, (forms = []));
  const slot = slotOf(version, shape);
  return (forms[slot] ??= jsonFragment(chunkOfShape(version, shape, c)));
}
