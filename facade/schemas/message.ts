/**
 * Topic message bodies: POST /api/message (a new user message), PUT /api/message (edit one and
 * answer again), DELETE and PATCH /api/message (answer the last question again). The search
 * members (search_type, page_size, filters, score_threshold, sort_options, highlight_options,
 * typo_options, remove_stop_words, use_quote_negated_terms and the legacy flat keys) are not
 * checked here: they are handed to the search's own parser (facade/schemas/search.ts), so a
 * message searches exactly as POST /api/chunk/search would.
 */
import { z } from 'zod';
import { badRequest } from '../../core/domain/errors.js';
import { LIMITS } from '../../core/domain/limits.js';
import { boundedArray, boundedJson, boundedKey, boundedString, boundedText, parse, requireBody, uuid } from './common.js';
import { contextOptions, DEFAULT_IMAGES_PER_CHUNK, imageConfig, samplingFields, type SamplingChoices } from './llm-fields.js';

/** Longest message a caller may send (a first message of a topic too), in UTF-16 units. */
export const MESSAGE_CONTENT_MAX_LENGTH = LIMITS.ragMessageLength;
/** Most earlier messages a caller may ask to include in the prompt. */
export const MAX_MESSAGES_TO_INCLUDE = LIMITS.ragMessages;
/** Earlier messages included when the caller does not say (the reference's default). */
export const DEFAULT_MESSAGES_TO_INCLUDE = 10;
/**
 * Text stored as a message: PostgreSQL cannot hold the NUL character, and the answer is paid for
 * before the message is stored, so it is refused here on every store.
 */
export const storableText = (max: number) =>
  boundedString(max).refine((s) => !s.includes('\u0000'), { message: 'must not contain the NUL character (\\u0000)' });

/** A stored identifier the store indexes (user and owner ids, event names): {@link storableText} within LIMITS.keyBytes. */
export const storableKey = (max: number) =>
  boundedKey(max).refine((s) => !s.includes('\u0000'), { message: 'must not contain the NUL character (\\u0000)' });

/** The answer when the search found nothing (no model call is made). */
export const DEFAULT_NO_RESULT_MESSAGE = 'I was not able to find any relevant information to answer your query.';

/** Sampling and output options: `llm_options`, and the same keys flat on the body (the reference folds them in). */
const llmFields = {
  completion_first: z.boolean().nullable().optional(),
  stream_response: z.boolean().nullable().optional(),
  ...samplingFields,
  system_prompt: boundedString(LIMITS.configPromptLength).nullable().optional(),
};
const llmOptions = z.object({ ...llmFields, image_config: imageConfig });

const messageFields = {
  topic_id: uuid,
  new_message_content: storableText(MESSAGE_CONTENT_MAX_LENGTH).nullable().optional(),
  search_query: boundedString(LIMITS.queryLength).nullable().optional(),
  llm_options: llmOptions.nullable().optional(),
  ...llmFields,
  context_options: contextOptions,
  include_links: z.boolean().nullable().optional(),
  use_group_search: z.boolean().nullable().optional(),
  concat_user_messages_query: z.boolean().nullable().optional(),
  only_include_docs_used: z.boolean().nullable().optional(),
  number_of_messages_to_include: z.number().int().min(0).max(MAX_MESSAGES_TO_INCLUDE).nullable().optional(),
  no_result_message: storableText(MESSAGE_CONTENT_MAX_LENGTH).nullable().optional(),
  rag_context: boundedText(LIMITS.chunkTextBytes).nullable().optional(),
  currency: boundedString(16).nullable().optional(),
  image_urls: boundedArray(boundedString(LIMITS.urlLength), LIMITS.imageUrlsPerChunk, 'image_urls').nullable().optional(),
  audio_input: z.string().nullable().optional(),
  use_agentic_search: z.boolean().nullable().optional(),
  metadata: boundedJson.optional(),
  model: boundedString(LIMITS.configStringLength).nullable().optional(),
  user_id: boundedKey(LIMITS.userIdLength).nullable().optional(),
};

const createBody = z.object(messageFields);
const editBody = z.object({ ...messageFields, message_sort_order: z.number().int().min(1).max(2_147_483_647) });

/** Sampling options the caller set; unset ones take the dataset's or the defaults. */
export interface LlmChoices extends SamplingChoices {
  readonly completionFirst: boolean;
  readonly stream: boolean;
  /** Replaces the dataset's SYSTEM_PROMPT. */
  readonly systemPrompt: string | null;
}

/** The choices of a request that sets none (topic names and suggestions use them). */
export const DEFAULT_LLM_CHOICES: LlmChoices = Object.freeze({
  completionFirst: false,
  stream: true,
  temperature: null,
  frequencyPenalty: null,
  presencePenalty: null,
  maxTokens: null,
  stopTokens: [],
  systemPrompt: null,
  images: { use: false, perChunk: DEFAULT_IMAGES_PER_CHUNK },
});

/** A validated message request (the search members stay in the body for the search's parser). */
export interface MessageRequest {
  readonly topicId: string;
  /** The new user message; null for a regeneration (the last question is asked again). */
  readonly content: string | null;
  /** PUT: the sort order of the user message replaced. */
  readonly sortOrder: number | null;
  readonly searchQuery: string | null;
  readonly llm: LlmChoices;
  readonly includeLinks: boolean;
  readonly useGroupSearch: boolean;
  readonly concatUserMessages: boolean;
  readonly onlyIncludeDocsUsed: boolean;
  readonly messagesToInclude: number;
  readonly noResultMessage: string;
  /** Replaces the search: this text is the one document. */
  readonly ragContext: string | null;
  readonly currency: string | null;
  readonly imageUrls: readonly string[];
  readonly metadata: unknown;
  readonly model: string | null;
  readonly userId: string | null;
}

type Parsed = z.output<typeof createBody>;

function toRequest(b: Parsed, content: string | null, sortOrder: number | null): MessageRequest {
  if (b.audio_input != null) throw badRequest('Audio input is not supported: no transcription endpoint is configured');
  if (b.use_agentic_search === true) throw badRequest('use_agentic_search is not supported; leave it out or set it to false');
  // The nested object wins over the flat keys, member by member.
  const nested = b.llm_options ?? {};
  const pick = <K extends keyof typeof llmFields>(k: K) => nested[k] ?? b[k] ?? null;
  return {
    topicId: b.topic_id,
    content,
    sortOrder,
    searchQuery: b.search_query != null && b.search_query.trim() !== '' ? b.search_query : null,
    llm: {
      completionFirst: pick('completion_first') ?? false,
      stream: pick('stream_response') ?? true,
      temperature: pick('temperature'),
      frequencyPenalty: pick('frequency_penalty'),
      presencePenalty: pick('presence_penalty'),
      maxTokens: pick('max_tokens'),
      stopTokens: pick('stop_tokens') ?? [],
      systemPrompt: pick('system_prompt'),
      images: { use: nested.image_config?.use_images ?? false, perChunk: nested.image_config?.images_per_chunk ?? DEFAULT_IMAGES_PER_CHUNK },
    },
    includeLinks: b.context_options?.include_links ?? b.include_links ?? false,
    useGroupSearch: b.use_group_search ?? false,
    concatUserMessages: b.concat_user_messages_query ?? false,
    onlyIncludeDocsUsed: b.only_include_docs_used ?? false,
    messagesToInclude: b.number_of_messages_to_include ?? DEFAULT_MESSAGES_TO_INCLUDE,
    noResultMessage: b.no_result_message ?? DEFAULT_NO_RESULT_MESSAGE,
    ragContext: b.rag_context != null && b.rag_context.trim() !== '' ? b.rag_context : null,
    currency: b.currency ?? null,
    imageUrls: b.image_urls ?? [],
    metadata: b.metadata ?? null,
    model: b.model != null && b.model.trim() !== '' ? b.model : null,
    userId: b.user_id ?? null,
  };
}

/** The new message's text, or 400 when there is none. */
function requireContent(b: Parsed): string {
  if (b.audio_input != null) throw badRequest('Audio input is not supported: no transcription endpoint is configured');
  const content = b.new_message_content;
  if (content == null) throw badRequest('No message content provided: new_message_content is required');
  if (content.trim() === '') throw badRequest('new_message_content must not be empty');
  return content;
}

/** Validates POST /api/message. */
export function parseCreateMessage(body: unknown): MessageRequest {
  requireBody(body, 'a JSON object with "topic_id" and "new_message_content"');
  const b = parse(createBody, body);
  return toRequest(b, requireContent(b), null);
}

/** Validates PUT /api/message: the user message at `message_sort_order` is replaced by `new_message_content`. */
export function parseEditMessage(body: unknown): MessageRequest {
  requireBody(body, 'a JSON object with "topic_id", "message_sort_order" and "new_message_content"');
  const b = parse(editBody, body);
  return toRequest(b, requireContent(b), b.message_sort_order);
}

/** Validates DELETE and PATCH /api/message: the last answer is generated again. */
export function parseRegenerateMessage(body: unknown): MessageRequest {
  requireBody(body, 'a JSON object with "topic_id"');
  return toRequest(parse(createBody, body), null, null);
}
