/**
 * An API key's `default_params` are forced on search and scroll bodies: where the key sets a
 * member, the key's value replaces the body's (as in the reference implementation, `filters` is
 * replaced, not merged).
 */
import type { Caller } from './context.js';

/** Members forced on search-like routes. */
const SEARCH_MEMBERS = [
  'search_type',
  'page_size',
  'filters',
  'highlight_options',
  'score_threshold',
  'slim_chunks',
  'use_quote_negated_terms',
  'remove_stop_words',
  'typo_options',
  'no_result_message',
] as const;

/** Members forced on scroll. */
const SCROLL_MEMBERS = ['page_size', 'filters'] as const;

/** The body with the caller's key defaults applied (the body itself when there are none). */
export function withDefaultParams(body: unknown, caller: Caller, route: 'search' | 'scroll'): unknown {
  if (caller.kind !== 'key' || !caller.key.defaultParams) return body;
  if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body))) return body;
  const out: Record<string, unknown> = { ...((body as Record<string, unknown> | undefined) ?? {}) };
  const params = caller.key.defaultParams;
  for (const member of route === 'search' ? SEARCH_MEMBERS : SCROLL_MEMBERS) {
    if (params[member] !== undefined && params[member] !== null) out[member] = params[member];
  }
  return out;
}
