/** Where a page of hits meets the store: their chunk records, in hit order. */
import type { Store } from '../../store/repository.js';
import type { Ranked } from './post-rank.js';

/** A scored chunk id, as the core answers it. */
export interface ScoredId {
  readonly chunk_id: string;
  readonly score: number;
}

/** A result of the pipeline: a chunk id and its score (records are read only where a step needs them). */
export interface Hit {
  readonly id: string;
  readonly score: number;
}

/** Chunk records of `hits`, in hit order (hits whose chunk was deleted meanwhile are dropped). */
export async function chunksInHitOrder(store: Store, datasetId: string, hits: readonly ScoredId[]): Promise<Ranked[]> {
  const byId = new Map((await store.chunks.getMany(datasetId, hits.map((h) => h.chunk_id))).map((c) => [c.id, c]));
  return hits.flatMap((h) => {
    const c = byId.get(h.chunk_id);
    return c ? [{ c, score: h.score }] : [];
  });
}

/** The engine's parallel id and score lists as scored ids. */
export function scoredIds(hits: { readonly chunkIds: readonly string[]; readonly scores: ArrayLike<number> }): ScoredId[] {
  return hits.chunkIds.map((id, i) => ({ chunk_id: id, score: hits.scores[i]! }));
}

/** The engine's parallel id and score lists as pipeline hits. */
export function hitsOf(hits: { readonly chunkIds: readonly string[]; readonly scores: ArrayLike<number> }): Hit[] {
  return hits.chunkIds.map((id, i) => ({ id, score: hits.scores[i]! }));
}
