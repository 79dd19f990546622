/** Shard placement: a chunk lives on shard `hash(chunk id) mod shards` of its dataset. */

/** FNV-1a 32-bit hash of a string's UTF-16 code units: fast, stable across processes and versions. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The shard of a chunk among `shards`. */
export const shardOf = (chunkId: string, shards: number): number => fnv1a(chunkId) % shards;
