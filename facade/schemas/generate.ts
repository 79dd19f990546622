/** Body of POST /api/chunk/generate (the reference's GenerateOffChunksReqPayload): RAG on chosen chunks. */
import { z } from 'zod';
import { badRequest } from '../../core/domain/errors.js';
import { LIMITS } from '../../core/domain/limits.js';
import type { ChatMessage } from '../../core/domain/rag.js';
import { boundedArray, boundedJson, boundedKey, boundedString, parse, uuid } from './common.js';
import { contextOptions, DEFAULT_IMAGES_PER_CHUNK, imageConfig, samplingFields, type SamplingChoices } from './llm-fields.js';

const message = z.object({
  role: z.enum(['system', 'user', 'assistant'], { message: 'role must be system, user or assistant' }),
  content: boundedString(LIMITS.ragMessageLength),
});

const body = z.object({
  prev_messages: boundedArray(message, LIMITS.ragMessages, 'prev_messages'),
  chunk_ids: boundedArray(uuid, LIMITS.ragChunkIds, 'chunk_ids'),
  prompt: boundedString(LIMITS.configPromptLength).nullable().optional(),
  audio_input: z.string().nullable().optional(),
  image_urls: boundedArray(boundedString(LIMITS.urlLength), LIMITS.imageUrlsPerChunk, 'image_urls').nullable().optional(),
  stream_response: z.boolean().nullable().optional(),
  // Accepted and ignored, as by the reference: the answer is plain text.
  highlight_results: z.boolean().nullable().optional(),
  ...samplingFields,
  user_id: boundedKey(LIMITS.userIdLength).nullable().optional(),
  metadata: boundedJson.optional(),
  image_config: imageConfig,
  context_options: contextOptions,
  model: boundedString(LIMITS.configStringLength).nullable().optional(),
});

/** A validated generate request; null: the dataset's setting (or the reference's default) applies. */
export interface GenerateRequest extends SamplingChoices {
  /** Earlier turns, oldest first (at least one). */
  readonly history: readonly ChatMessage[];
  /** The last message's content: what is answered. */
  readonly question: string;
  /** Unique, in the caller's order. */
  readonly chunkIds: readonly string[];
  /** The RAG prompt; null: the dataset's RAG_PROMPT. The empty string sends the question alone. */
  readonly prompt: string | null;
  readonly imageUrls: readonly string[];
  /** @defaultValue true */
  readonly stream: boolean;
  readonly userId: string | null;
  readonly metadata: unknown;
  readonly includeLinks: boolean;
  readonly model: string | null;
}

/** Parses a generate body: 400 naming the field for anything malformed or out of range. */
export function parseGenerate(value: unknown): GenerateRequest {
  const b = parse(body, value);
  if (b.audio_input !== undefined && b.audio_input !== null && b.audio_input !== '') {
    throw badRequest('Audio input is not supported: no transcription endpoint is configured');
  }
  const last = b.prev_messages.at(-1);
  if (last === undefined) throw badRequest('There needs to be at least 1 prior message');
  return {
    history: b.prev_messages.slice(0, -1),
    question: last.content,
    chunkIds: [...new Set(b.chunk_ids)],
    prompt: b.prompt ?? null,
    imageUrls: b.image_urls ?? [],
    stream: b.stream_response ?? true,
    temperature: b.temperature ?? null,
    frequencyPenalty: b.frequency_penalty ?? null,
    presencePenalty: b.presence_penalty ?? null,
    maxTokens: b.max_tokens ?? null,
    stopTokens: b.stop_tokens ?? [],
    userId: b.user_id ?? null,
    metadata: b.metadata ?? null,
    images: { use: b.image_config?.use_images ?? false, perChunk: b.image_config?.images_per_chunk ?? DEFAULT_IMAGES_PER_CHUNK },
    includeLinks: b.context_options?.include_links ?? false,
    model: b.model ?? null,
  };
}
