/**
 * V1 ChunkMetadataWithScore, the items of a V1 chunk recommendation: the chunk's own fields
 * (tag_set comma-joined) and `score`, flat rather than wrapped in a ScoreChunkDTO.
 */
import type { Ranked } from '../../core/pipeline/post-rank.js';
import { chunkV1, slimChunkFor } from './chunk.js';
import { withFields } from '../../core/domain/with-fields.js';

/** One V1 recommended chunk; slim chunks leave chunk_html out. */
export function chunkWithScoreV1(r: Ranked, slim: boolean): Record<string, unknown> {
  return withFields(slim ? slimChunkFor('V1', r.c) : chunkV1(r.c), { score: r.score });
}
