/** Bodies of POST /api/chunk/search, /api/chunk/count and /api/chunks/scroll. */
import { z } from 'zod';
import { badRequest } from '../../core/domain/errors.js';
import type { Filter } from '../../core/domain/filter.js';
import { LIMITS } from '../../core/domain/limits.js';
import { boundedArray, boundedKey, boundedString, finite, jsonObject, parse, requireBody, uuid } from './common.js';
import { chunkFilter } from './filter.js';

/** Search types of the wire, with the reference implementation's aliases. */
const searchType = z
  .enum(['semantic', 'fulltext', 'full_text', 'hybrid', 'bm25', 'BM25'], {
    message: 'search_type must be one of semantic, fulltext, hybrid, bm25',
  })
  .transform((t) => (t === 'full_text' ? 'fulltext' : t === 'BM25' ? 'bm25' : t));

const queryText = boundedString(LIMITS.queryLength);
const multiQuery = boundedArray(z.object({ query: queryText, weight: finite }), LIMITS.multiQueries, 'queries in a multi-query');

/**
 * `query`: a string, an array of {query, weight} or (refused later) an image/audio object. Each
 * form is checked on its own, so a too-long query is named as such, not as "no union member".
 */
const query = z.unknown().transform((q, ctx): string | z.output<typeof multiQuery> | Record<string, unknown> => {
  const schema = typeof q === 'string' ? queryText : Array.isArray(q) ? multiQuery : q !== null && typeof q === 'object' ? jsonObject : null;
  if (!schema) {
    ctx.addIssue({ code: 'custom', message: 'query must be a string (or an array of {query, weight} for semantic search)' });
    return z.NEVER;
  }
  const r = schema.safeParse(q);
  if (!r.success) {
    for (const issue of r.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
    return z.NEVER;
  }
  return r.data;
});

const searchBody = z.object({
  search_type: searchType,
  query,
  page: z.number().int().min(0).nullable().optional(),
  page_size: z.number().int().min(0).max(10_000).nullable().optional(),
  get_total_pages: z.boolean().nullable().optional(),
  filters: chunkFilter,
  score_threshold: finite.nullable().optional(),
  slim_chunks: z.boolean().nullable().optional(),
  content_only: z.boolean().nullable().optional(),
  // sort_options, scoring_options, highlight and typo options are checked by their resolvers.
  typo_options: jsonObject.nullable().optional(),
  remove_stop_words: z.boolean().nullable().optional(),
  use_quote_negated_terms: z.boolean().nullable().optional(),
  user_id: boundedKey(LIMITS.userIdLength).nullable().optional(),
  metadata: z.unknown().optional(),
  extend_results: z.boolean().nullable().optional(),
});

/** A validated search. */
export interface SearchRequest {
  readonly searchType: string;
  readonly query: string;
  readonly page: number;
  readonly pageSize: number;
  readonly getTotalPages: boolean;
  readonly filter: Filter | null;
  readonly scoreThreshold: number | null;
  readonly slimChunks: boolean;
  readonly contentOnly: boolean;
  /** Semantic multi-query (the query text is then their concatenation, for logs). */
  readonly queries: { query: string; weight: number }[];
  readonly removeStopWords: boolean;
  readonly quoteNegatedTerms: boolean;
  /** Autocomplete: append results that do not start with the query after those that do. */
  readonly extendResults: boolean;
}

/** Validates a search body. */
export function parseSearch(body: unknown): SearchRequest {
  requireBody(body, 'a JSON object with "query" and "search_type"');
  const b = parse(searchBody, body);
  let queries: { query: string; weight: number }[] = [];
  if (typeof b.query !== 'string') {
    if (!Array.isArray(b.query)) throw badRequest('image and audio queries are not supported; query must be a string');
    if (b.search_type !== 'semantic') throw badRequest('multi-query (an array of {query, weight}) works only with search_type "semantic"');
    if (b.query.length === 0 || b.query.some((q) => q.query.trim() === '')) throw badRequest('Query cannot be empty');
    queries = b.query;
  } else if (b.query.trim() === '') {
    throw badRequest('Query cannot be empty');
  }
  return {
    searchType: b.search_type,
    query: typeof b.query === 'string' ? b.query : queries.map((q) => q.query).join(' '),
    queries,
    page: Math.max(1, b.page ?? 1),
    pageSize: b.page_size ?? 10,
    getTotalPages: b.get_total_pages ?? false,
    filter: b.filters,
    scoreThreshold: b.score_threshold ?? null,
    slimChunks: b.slim_chunks ?? false,
    contentOnly: b.content_only ?? false,
    removeStopWords: b.remove_stop_words ?? false,
    quoteNegatedTerms: b.use_quote_negated_terms ?? false,
    extendResults: b.extend_results ?? false,
  };
}

const countBody = z.object({
  search_type: searchType.refine((t) => t !== 'hybrid', { message: 'hybrid search cannot be counted; use semantic, fulltext or bm25' }),
  query: queryText,
  filters: chunkFilter,
  score_threshold: finite.nullable().optional(),
  limit: z.number().int().min(0).nullable().optional(),
  use_quote_negated_terms: z.boolean().nullable().optional(),
});

/** Validates a count body; `maxLimit` is the dataset's MAX_LIMIT. */
export function parseCount(body: unknown, maxLimit: number) {
  requireBody(body, 'a JSON object with "query" and "search_type"');
  const b = parse(countBody, body);
  if (b.query.trim() === '') throw badRequest('Query cannot be empty');
  if (b.limit != null && b.limit > maxLimit) throw badRequest(`limit ${b.limit} is above the dataset's MAX_LIMIT of ${maxLimit}`);
  return {
    searchType: b.search_type,
    query: b.query,
    filter: b.filters,
    scoreThreshold: b.score_threshold ?? null,
    limit: b.limit ?? maxLimit,
    quoteNegatedTerms: b.use_quote_negated_terms ?? false,
  };
}

const scrollBody = z.object({
  page_size: z.number().int().min(0).max(10_000).nullable().optional(),
  offset_chunk_id: uuid.nullable().optional(),
  filters: chunkFilter,
  sort_by: z
    .object({
      field: boundedString(LIMITS.filterValueLength).refine((f) => f === 'num_value' || f === 'time_stamp' || (f.startsWith('metadata.') && f.length > 9), {
        message: 'sort_by.field must be num_value, time_stamp or metadata.<key>',
      }),
      direction: z.enum(['asc', 'desc']).nullable().optional(),
      prefetch_amount: z.number().int().min(1).max(100_000).nullable().optional(),
    })
    .nullable()
    .optional(),
});

/** Validates a scroll body. */
export function parseScroll(body: unknown) {
  const b = parse(scrollBody, body ?? {});
  if (b.sort_by && b.offset_chunk_id) {
    throw badRequest('sort_by and offset_chunk_id cannot be used together; to page with a sort, exclude seen ids with a must_not filter');
  }
  return {
    pageSize: b.page_size ?? 10,
    offsetChunkId: b.offset_chunk_id ?? null,
    filter: b.filters,
    sortField: b.sort_by?.field ?? null,
    descending: (b.sort_by?.direction ?? 'desc') === 'desc',
  };
}
