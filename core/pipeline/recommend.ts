/**
 * Chunk recommendations: chunks like the positive examples and unlike the negative ones, never
 * the examples themselves (as Qdrant's recommend excludes them), within the caller's filter.
 *
 * - semantic `average_vector`: one search by the average vector of the examples' stored vectors.
 * - semantic `best_score`: candidates from one search per positive vector, scored exactly from
 *   the stored vectors (see recommend-vectors.ts). The per-positive lists grow until no chunk
 *   outside them can beat the last result kept: a chunk missing from every list is no more
 *   similar to any positive than that list's last hit, and a chunk nearer a negative scores at
 *   most 0. Past {@link MAX_SEEDS} positives, or with a distance metric (whose negative-branch
 *   scores have no such bound), one round is kept, like Qdrant's approximate graph walk.
 * - `bm25` / `fulltext`: one search of that type by a query built from the examples' words
 *   (recommend-query.ts).
 *
 * Vectors are always the dataset's current model's, so a recommendation never compares vectors
 * of two models; an example without one yet is a 400 saying embeddings are pending.
 */
import type { ChunkRecord } from '../domain/chunk.js';
import { embeddingSpec } from '../domain/dataset-config.js';
import type { DistanceMetric } from '../domain/distance-metric.js';
import { badRequest } from '../domain/errors.js';
import { MAX_MUST_NOT_IDS, withConditions, type Condition, type Filter } from '../domain/filter.js';
import { lexicalText } from '../domain/lexical-text.js';
import type { RecommendStrategy } from '../domain/search-options.js';
import { hitsOf, scoredIds, type Hit } from './hit-chunks.js';
import type { PipelineContext } from './ranked-search.js';
import { recommendQueryText } from './recommend-query.js';
import { averageVector, bestScore, prepare, similarityOfScore } from './recommend-vectors.js';

/** Positives searched for `best_score` candidates; beyond them the average of all positives seeds one more search. */
export const MAX_SEEDS = 32;

/** Growth of the per-positive candidate lists between `best_score` rounds. */
const SEED_GROWTH = 4;

/** Longest candidate list one `best_score` search asks for, whatever the dataset's MAX_LIMIT. */
const MAX_CANDIDATES = 10_000;

/** A recommendation's examples, resolved to chunks of the dataset. */
export interface Examples {
  readonly positives: readonly ChunkRecord[];
  readonly negatives: readonly ChunkRecord[];
}

/** How to recommend. */
export interface Recommendation {
  readonly strategy: RecommendStrategy;
  /** What similarity recommends by: semantic, bm25 or fulltext. */
  readonly recommendType: string;
  readonly filter: Filter | null;
  /** Results wanted. */
  readonly limit: number;
}

/** must_not conditions excluding `ids`, in conditions of at most MAX_MUST_NOT_IDS ids. */
function excluding(ids: readonly string[]): Condition[] {
  const out: Condition[] = [];
  for (let i = 0; i < ids.length; i += MAX_MUST_NOT_IDS) out.push({ has_id: { ids: ids.slice(i, i + MAX_MUST_NOT_IDS) } });
  return out;
}

/** The stored vectors of the examples under the dataset's current model, prepared for `s`; 400 when one is missing. */
async function exampleVectors(ctx: PipelineContext, modelKey: string, s: DistanceMetric, chunks: readonly ChunkRecord[]): Promise<Float64Array[]> {
  const stored = await ctx.store.vectors.getMany(chunks.map((c) => c.id), modelKey);
  const missing = chunks.filter((c) => !stored.has(c.id)).map((c) => c.id);
  if (missing.length > 0) {
    const shown = missing.slice(0, 5).join(', ') + (missing.length > 5 ? ` and ${missing.length - 5} more` : '');
    throw badRequest(
      `embeddings are pending for example chunks ${shown}: semantic recommendations need their vectors; retry once GET /api/dataset/usage shows no chunks pending embedding, or use recommend_type bm25`,
    );
  }
  return chunks.map((c) => prepare(s, stored.get(c.id)!));
}

/** Scored ids of a semantic search by `vector`. */
async function searchByVector(ctx: PipelineContext, vector: Float64Array, filter: Filter | null, limit: number) {
  const hits = await ctx.retrieve(
    {
      datasetId: ctx.dataset.id,
      searchType: 'semantic',
      query: '',
      vector: Float32Array.from(vector),
      filter,
      offset: 0,
      limit,
      scoreThreshold: null,
      countTotal: false,
    },
    ctx.signal,
  );
  return scoredIds(hits);
}

/** `best_score` over candidates gathered around the positives (see the module comment). */
async function bestScored(
  pipeline: PipelineContext,
  ctx: { s: DistanceMetric; modelKey: string; filter: Filter | null },
  positives: readonly Float64Array[],
  negatives: readonly Float64Array[],
  r: Recommendation,
): Promise<{ id: string; score: number }[]> {
  const seeds = positives.length <= MAX_SEEDS ? positives : [...positives.slice(0, MAX_SEEDS - 1), averageVector(positives, [])];
  const certifiable = positives.length <= MAX_SEEDS && (ctx.s === 'cosine' || ctx.s === 'dot');
  const cap = Math.max(r.limit, Math.min(pipeline.maxLimit, MAX_CANDIDATES));
  let fetch = Math.min(cap, Math.max(10, r.limit * 2));
  const scores = new Map<string, number>();
  for (;;) {
    const lists = await Promise.all(seeds.map((v) => searchByVector(pipeline, v, ctx.filter, fetch)));
    const fresh = [...new Set(lists.flatMap((l) => l.map((h) => h.chunk_id)))].filter((id) => !scores.has(id));
    const stored = await pipeline.store.vectors.getMany(fresh, ctx.modelKey);
    for (const [id, v] of stored) scores.set(id, bestScore(ctx.s, prepare(ctx.s, v), positives, negatives));
    const top = [...scores.entries()]
      .map(([id, score]) => ({ id, score }))
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .slice(0, r.limit);
    const truncated = lists.filter((l) => l.length >= fetch);
    if (truncated.length === 0 || !certifiable || fetch >= cap) return top;
    // No chunk outside the lists beats this bound (the 1e-9 margin absorbs f32 rounding in the core).
    const bound = Math.max(0, ...truncated.map((l) => similarityOfScore(ctx.s, l[l.length - 1]!.score)));
    const last = top[r.limit - 1];
    if (top.length === r.limit && last !== undefined && last.score >= bound + 1e-9) return top;
    fetch = Math.min(cap, fetch * SEED_GROWTH);
  }
}

/** Recommends chunks for the examples, best first. */
export async function recommendChunks(ctx: PipelineContext, ex: Examples, r: Recommendation): Promise<Hit[]> {
  if (r.limit === 0) return [];
  const filter = withConditions(r.filter, [], excluding([...new Set([...ex.positives, ...ex.negatives].map((c) => c.id))]));
  if (r.recommendType !== 'semantic') {
    const query = recommendQueryText(ex.positives.map(lexicalText), ex.negatives.map(lexicalText));
    // Positives without a single describing word have nothing to be matched on.
    if (query === '') return [];
    const hits = await ctx.retrieve(
      { datasetId: ctx.dataset.id, searchType: r.recommendType, query, filter, offset: 0, limit: r.limit, scoreThreshold: null, countTotal: false },
      ctx.signal,
    );
    return hitsOf(hits);
  }
  const spec = embeddingSpec(ctx.dataset.serverConfiguration);
  const s = spec.distance;
  const positives = await exampleVectors(ctx, spec.modelKey, s, ex.positives);
  const negatives = await exampleVectors(ctx, spec.modelKey, s, ex.negatives);
  if (r.strategy === 'best_score') {
    return bestScored(ctx, { s, modelKey: spec.modelKey, filter }, positives, negatives, r);
  }
  const vector = averageVector(positives, negatives);
  // Cosine has no direction to search along when the examples cancel out.
  if (s === 'cosine' && vector.every((x) => x === 0)) return [];
  return (await searchByVector(ctx, vector, filter, r.limit)).map((h) => ({ id: h.chunk_id, score: h.score }));
}
