/**
 * POST /api/chunk/suggestions. Its `search_type` and `filters` are the search's members and are
 * checked by the search's parser (facade/rag/retrieval.ts), or by the scroll's when no query is
 * given.
 */
import { z } from 'zod';
import { LIMITS } from '../../core/domain/limits.js';
import { boundedString, parse } from './common.js';
import { MESSAGE_CONTENT_MAX_LENGTH } from './message.js';

/** Most queries one request may ask for (the provider suggests at most this many). */
export const MAX_SUGGESTIONS = 10;

const suggestionsBody = z.object({
  query: boundedString(LIMITS.queryLength).nullable().optional(),
  suggestion_type: z.enum(['question', 'keyword', 'semantic'], { message: 'suggestion_type must be one of question, keyword, semantic' }).nullable().optional(),
  context: boundedString(MESSAGE_CONTENT_MAX_LENGTH).nullable().optional(),
  suggestions_to_create: z.number().int().min(1).max(MAX_SUGGESTIONS).nullable().optional(),
  is_followup: z.boolean().nullable().optional(),
  is_ecommerce: z.boolean().nullable().optional(),
});

/** A validated suggestions request. */
export interface SuggestionsRequest {
  /** Null: suggest from the dataset's first chunks. */
  readonly query: string | null;
  readonly suggestionType: 'question' | 'keyword' | 'semantic';
  /** Text about the user's situation, given to the model beside the chunks. */
  readonly context: string | null;
  readonly count: number;
}

/** Validates POST /api/chunk/suggestions (an absent body asks for suggestions from the first chunks). */
export function parseSuggestions(body: unknown): SuggestionsRequest {
  const b = parse(suggestionsBody, body ?? {});
  return {
    query: b.query != null && b.query.trim() !== '' ? b.query : null,
    suggestionType: b.suggestion_type ?? 'question',
    context: b.context != null && b.context.trim() !== '' ? b.context : null,
    count: b.suggestions_to_create ?? MAX_SUGGESTIONS,
  };
}
