/**
 * `sort_options` and `scoring_options` of search-like bodies, with the reference's legacy flat
 * keys (`sort_by`, `location_bias`, `use_weights`, `tag_weights`, `mmr` at the top level are
 * folded into `sort_options` when it is absent; `recency_bias` is not folded, as in the reference).
 */
import { z } from 'zod';
import { LIMITS } from '../../core/domain/limits.js';
import { isSortableField, RERANK_TYPES, SORTABLE_FIELDS, type ScoringOptions, type SortOptions } from '../../core/domain/search-options.js';
import { boundedString, finite, geoPoint, parse } from './common.js';

export type { ScoringOptions, SortByField, SortByRerank, SortOptions } from '../../core/domain/search-options.js';

const phrase = boundedString(LIMITS.queryLength);

const prefetch = z.number().int().min(1, 'prefetch_amount must be at least 1').nullable().optional();

const sortByField = z.object({
  field: boundedString(LIMITS.filterValueLength).refine((f) => isSortableField(f), {
    message: `sort_by.field must be one of ${SORTABLE_FIELDS.join(', ')} or metadata.<key>`,
  }),
  direction: z.enum(['asc', 'desc'], { message: 'sort_by.direction must be asc or desc' }).nullable().optional(),
  prefetch_amount: prefetch,
});

const sortByRerank = z.object({
  rerank_type: z.enum(RERANK_TYPES, { message: `sort_by.rerank_type must be one of ${RERANK_TYPES.join(', ')}` }),
  prefetch_amount: prefetch,
  rerank_query: phrase.nullable().optional(),
});

const sortOptions = z.object({
  sort_by: z.union([sortByRerank, sortByField], { message: 'sort_by must be {field, direction?, prefetch_amount?} or {rerank_type, prefetch_amount?, rerank_query?}' }).nullable().optional(),
  location_bias: z.object({ location: geoPoint, bias: finite.refine((b) => b >= 0 && b <= 1, { message: 'bias must be within 0..1' }) }).nullable().optional(),
  recency_bias: finite.refine((r) => r >= 0, { message: 'recency_bias must be at least 0' }).nullable().optional(),
  use_weights: z.boolean().nullable().optional(),
  tag_weights: z
    .record(boundedString(LIMITS.tagLength), finite)
    .refine((w) => Object.keys(w).length <= LIMITS.tagWeights, { error: (iss) => `at most ${LIMITS.tagWeights} tag weights allowed, got ${Object.keys(iss.input as object).length}` })
    .nullable()
    .optional(),
  mmr: z
    .object({
      use_mmr: z.boolean(),
      mmr_lambda: finite.refine((l) => l >= 0 && l <= 1, { message: 'mmr_lambda must be within 0..1' }).nullable().optional(),
    })
    .nullable()
    .optional(),
});

const boostPhrase = z.object({
  phrase,
  boost_factor: finite.refine((f) => f > 0, { message: 'boost_factor must be greater than 0' }),
});
const semanticBoost = z.union([
  z.object({ phrase, distance_factor: finite }),
  z.object({ phrase, boost_factor: finite }).transform((b) => ({ phrase: b.phrase, distance_factor: b.boost_factor })),
]);

const scoringOptions = z.object({
  fulltext_boost: boostPhrase.nullable().optional(),
  semantic_boost: semanticBoost.nullable().optional(),
});

const FOLDED = ['sort_by', 'location_bias', 'use_weights', 'tag_weights', 'mmr'] as const;

/**
 * The sort options of a body: `sort_options`, or the legacy flat keys folded into one; null when
 * neither is present (then no post-ranking happens at all, as in the reference).
 */
export function resolveSortOptions(body: Record<string, unknown>): SortOptions | null {
  let raw = body.sort_options;
  let prefix = 'sort_options';
  if (raw === undefined || raw === null) {
    const flat = Object.fromEntries(FOLDED.filter((k) => body[k] !== undefined && body[k] !== null).map((k) => [k, body[k]]));
    if (Object.keys(flat).length === 0) return null;
    raw = flat;
    prefix = '';
  }
  const o = parse(prefix ? z.object({ sort_options: sortOptions }) : sortOptions, prefix ? { sort_options: raw } : raw);
  const s = 'sort_options' in o ? o.sort_options : o;
  const sortBy = s.sort_by
    ? 'rerank_type' in s.sort_by
      ? { kind: 'rerank' as const, rerankType: s.sort_by.rerank_type, prefetch: s.sort_by.prefetch_amount ?? null, query: s.sort_by.rerank_query ?? null }
      : { kind: 'field' as const, field: s.sort_by.field, descending: (s.sort_by.direction ?? 'desc') === 'desc', prefetch: s.sort_by.prefetch_amount ?? null }
    : null;
  return {
    sortBy,
    locationBias: s.location_bias ? { lat: s.location_bias.location.lat, lon: s.location_bias.location.lon, bias: s.location_bias.bias } : null,
    recencyBias: s.recency_bias ?? 0,
    useWeights: s.use_weights ?? true,
    tagWeights: s.tag_weights ?? null,
    mmrLambda: s.mmr?.use_mmr ? (s.mmr.mmr_lambda ?? 0.5) : null,
  };
}

/** The scoring options of a body (null when absent or empty). */
export function resolveScoringOptions(body: Record<string, unknown>): ScoringOptions | null {
  if (body.scoring_options === undefined || body.scoring_options === null) return null;
  const { scoring_options: s } = parse(z.object({ scoring_options: scoringOptions }), { scoring_options: body.scoring_options });
  const fulltextBoost = s.fulltext_boost && s.fulltext_boost.phrase.trim() !== '' ? { phrase: s.fulltext_boost.phrase, factor: s.fulltext_boost.boost_factor } : null;
  const semanticBoost = s.semantic_boost && s.semantic_boost.phrase.trim() !== '' ? { phrase: s.semantic_boost.phrase, factor: s.semantic_boost.distance_factor } : null;
  return fulltextBoost || semanticBoost ? { fulltextBoost, semanticBoost } : null;
}
