/**
 * The language-model options every RAG body shares (POST /api/chunk/generate, and the topic
 * message bodies' `llm_options`): sampling ranges as the reference checks them, stop tokens,
 * images per chunk, links in the context.
 */
import { z } from 'zod';
import { LIMITS } from '../../core/domain/limits.js';
import { boundedArray, boundedString, finite } from './common.js';

/** A finite number within `min..max`; the message names the field. */
export const rangeOf = (min: number, max: number, what: string) =>
  finite.refine((v) => v >= min && v <= max, { message: `${what} must be between ${min} and ${max}` });

/** temperature (0..2), frequency_penalty and presence_penalty (-2..2), max_tokens (>= 0), stop_tokens (at most 4); each nullable. */
export const samplingFields = {
  temperature: rangeOf(0, 2, 'temperature').nullable().optional(),
  frequency_penalty: rangeOf(-2, 2, 'frequency_penalty').nullable().optional(),
  presence_penalty: rangeOf(-2, 2, 'presence_penalty').nullable().optional(),
  max_tokens: z.number().int().min(0).max(2_147_483_647).nullable().optional(),
  stop_tokens: boundedArray(boundedString(LIMITS.ragStopTokenLength), LIMITS.ragStopTokens, 'stop_tokens').nullable().optional(),
};

/** `image_config`: whether the chunks' images go to the model, and how many per chunk. */
export const imageConfig = z
  .object({
    use_images: z.boolean().nullable().optional(),
    images_per_chunk: z.number().int().min(0).max(LIMITS.ragImagesPerChunk).nullable().optional(),
  })
  .nullable()
  .optional();

/** `context_options`: whether each document carries its link. */
export const contextOptions = z.object({ include_links: z.boolean().nullable().optional() }).nullable().optional();

/** Images per chunk when `image_config` does not say (the reference's default). */
export const DEFAULT_IMAGES_PER_CHUNK = 5;

/** The sampling options a RAG body set (null: the dataset's or the reference's default), as parsed from {@link samplingFields} and {@link imageConfig}. */
export interface SamplingChoices {
  readonly temperature: number | null;
  readonly frequencyPenalty: number | null;
  readonly presencePenalty: number | null;
  readonly maxTokens: number | null;
  readonly stopTokens: readonly string[];
  readonly images: { readonly use: boolean; readonly perChunk: number };
}
