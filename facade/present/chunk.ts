/** Chunk records on the wire: V2 (tag_set array) and V1 (tag_set comma-joined string). */
import type { ChunkRecord } from '../../core/domain/chunk.js';
import { formatOptionalTimestamp, formatTimestamp } from '../../core/domain/time.js';
import type { ApiVersion } from '../access.js';

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
  return { ...chunkV2(c), tag_set: c.tagSet.length > 0 ? c.tagSet.join(',') : null };
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
