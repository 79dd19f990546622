/** Shard placement: a chunk lives on shard `fnv1a(chunk id) mod shards` of its dataset. */
import { fnv1a } from '../domain/fnv1a.js';

/** The shard of a chunk among `shards`. */
export const shardOf = (chunkId: string, shards: number): number => fnv1a(chunkId) % shards;
