/** A shard document of text (and tags) alone, every other field empty: benchmarks and tests build corpora of these. */
import type { ShardDoc } from './protocol.js';

/** The {@link ShardDoc} of a chunk with only `text` and `tagSet`. */
export function textDoc(chunkId: string, text: string, tagSet: readonly string[] = []): ShardDoc {
  return { chunkId, text, trackingId: null, link: null, tagSet, numValue: null, timeStamp: null, lat: null, lon: null, groupIds: [], metadata: null };
}
