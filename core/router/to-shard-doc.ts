/** What a shard indexes of a stored chunk. */
import type { IndexedChunkFields } from '../domain/chunk.js';
import type { SparseVector } from '../domain/sparse-vector.js';
import { lexicalText } from '../domain/lexical-text.js';
import type { ShardDoc } from '../../workers/shard/protocol.js';

/** Converts a stored chunk and its group ids into the shard's document. */
export function toShardDoc(c: IndexedChunkFields, groupIds: readonly string[], vector: Float32Array | null = null, sparse: SparseVector | null = null): ShardDoc {
  return {
    chunkId: c.id,
    text: lexicalText(c),
    trackingId: c.trackingId,
    link: c.link,
    tagSet: c.tagSet,
    numValue: c.numValue,
    timeStamp: c.timeStamp,
    lat: c.location?.lat ?? null,
    lon: c.location?.lon ?? null,
    groupIds,
    metadata: c.metadataJson === undefined ? (c.metadata ?? null) : null,
    metadataJson: c.metadataJson ?? null,
    boost: c.fulltextBoost ? { phrase: c.fulltextBoost.phrase, factor: c.fulltextBoost.boost_factor } : null,
    vector,
    sparse,
  };
}
