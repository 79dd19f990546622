/** Bodies of POST /api/chunk/recommend and POST /api/chunk_group/recommend. */
import { z } from 'zod';
import { badRequest } from '../../core/domain/errors.js';
import type { Filter } from '../../core/domain/filter.js';
import { LIMITS } from '../../core/domain/limits.js';
import { boundedArray, boundedKey, parse, requireBody, uuid } from './common.js';
import { chunkFilter } from './filter.js';

/** Most ids (or tracking ids) one example list may name. */
export const MAX_EXAMPLE_IDS = LIMITS.exampleIds;

/** How positives and negatives become a ranking (the reference's RecommendationStrategy). */
export type { RecommendStrategy } from '../../core/domain/search-options.js';
import type { RecommendStrategy } from '../../core/domain/search-options.js';

/** What similarity recommends by (the reference's RecommendType). */
export type RecommendType = 'semantic' | 'fulltext' | 'bm25';

const strategy = z.enum(['average_vector', 'best_score'], { message: 'strategy must be average_vector or best_score' });

const recommendType = z
  .enum(['semantic', 'fulltext', 'full_text', 'bm25', 'BM25'], { message: 'recommend_type must be one of semantic, fulltext, bm25' })
  .transform((t): RecommendType => (t === 'full_text' ? 'fulltext' : t === 'BM25' ? 'bm25' : t));

const ids = boundedArray(uuid, MAX_EXAMPLE_IDS, 'ids').nullable().optional();
const trackingIds = boundedArray(boundedKey(LIMITS.trackingIdLength), MAX_EXAMPLE_IDS, 'tracking ids').nullable().optional();
const count = z.number().int().min(0).nullable().optional();

const common = {
  strategy: strategy.nullable().optional(),
  recommend_type: recommendType.nullable().optional(),
  filters: chunkFilter,
  limit: count,
  slim_chunks: z.boolean().nullable().optional(),
  user_id: boundedKey(LIMITS.userIdLength).nullable().optional(),
  metadata: z.unknown().optional(),
};

/** Options shared by chunk and group recommendations. */
export interface RecommendOptions {
  /** @defaultValue `'average_vector'` */
  readonly strategy: RecommendStrategy;
  /** @defaultValue `'semantic'` */
  readonly recommendType: RecommendType;
  readonly filter: Filter | null;
  /** Chunks (or groups) to return. @defaultValue 10 */
  readonly limit: number;
  readonly slimChunks: boolean;
}

/** Examples named by id and by tracking id. */
export interface ExampleRefs {
  readonly ids: readonly string[];
  readonly trackingIds: readonly string[];
}

/** A validated chunk recommendation. */
export interface ChunkRecommendRequest extends RecommendOptions {
  readonly positive: ExampleRefs;
  readonly negative: ExampleRefs;
}

/** A validated group recommendation. */
export interface GroupRecommendRequest extends RecommendOptions {
  readonly positive: ExampleRefs;
  readonly negative: ExampleRefs;
  /** Chunks shown per group. @defaultValue 10 (the reference handler's default; its docs say 3) */
  readonly groupSize: number;
}

/** Checks a count against the dataset's MAX_LIMIT. */
function underMax(name: string, value: number, maxLimit: number): number {
  if (value > maxLimit) throw badRequest(`${name} ${value} is above the dataset's MAX_LIMIT of ${maxLimit}`);
  return value;
}

function options(b: { strategy?: RecommendStrategy | null; recommend_type?: RecommendType | null; filters: Filter | null; limit?: number | null; slim_chunks?: boolean | null }, maxLimit: number): RecommendOptions {
  return {
    strategy: b.strategy ?? 'average_vector',
    recommendType: b.recommend_type ?? 'semantic',
    filter: b.filters,
    limit: underMax('limit', b.limit ?? 10, maxLimit),
    slimChunks: b.slim_chunks ?? false,
  };
}

const refs = (list: readonly string[] | null | undefined, tracking: readonly string[] | null | undefined): ExampleRefs => ({
  ids: [...new Set(list ?? [])],
  trackingIds: [...new Set(tracking ?? [])],
});

const chunkBody = z.object({
  ...common,
  positive_chunk_ids: ids,
  negative_chunk_ids: ids,
  positive_tracking_ids: trackingIds,
  negative_tracking_ids: trackingIds,
});

/** Validates a chunk recommendation body; `maxLimit` is the dataset's MAX_LIMIT. */
export function parseChunkRecommend(body: unknown, maxLimit: number): ChunkRecommendRequest {
  requireBody(body, 'a JSON object with positive_chunk_ids or positive_tracking_ids');
  const b = parse(chunkBody, body);
  const positive = refs(b.positive_chunk_ids, b.positive_tracking_ids);
  // The reference lets best_score run on negatives alone; a recommendation needs something to be like.
  if (positive.ids.length + positive.trackingIds.length === 0) {
    throw badRequest('Either positive_chunk_ids or positive_tracking_ids must be provided (at least one positive example)');
  }
  return { ...options(b, maxLimit), positive, negative: refs(b.negative_chunk_ids, b.negative_tracking_ids) };
}

const groupBody = z.object({
  ...common,
  positive_group_ids: ids,
  negative_group_ids: ids,
  positive_group_tracking_ids: trackingIds,
  negative_group_tracking_ids: trackingIds,
  group_size: count,
});

/** Validates a group recommendation body; `maxLimit` is the dataset's MAX_LIMIT. */
export function parseGroupRecommend(body: unknown, maxLimit: number): GroupRecommendRequest {
  requireBody(body, 'a JSON object with positive_group_ids or positive_group_tracking_ids');
  const b = parse(groupBody, body);
  const positive = refs(b.positive_group_ids, b.positive_group_tracking_ids);
  if (positive.ids.length + positive.trackingIds.length === 0) {
    throw badRequest('You must provide at least one positive group id or group tracking id (positive_group_ids or positive_group_tracking_ids)');
  }
  return {
    ...options(b, maxLimit),
    positive,
    negative: refs(b.negative_group_ids, b.negative_group_tracking_ids),
    groupSize: underMax('group_size', b.group_size ?? 10, maxLimit),
  };
}
