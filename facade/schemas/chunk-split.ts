/** Body of POST /api/chunk/split: one HTML page and strings to remove from headings and bodies. */
import { z } from 'zod';
import { QuarryError } from '../../core/domain/errors.js';
import { parse, requireBody } from './common.js';

/** Largest `chunk_html` accepted, in UTF-8 bytes (the reference refuses 256 KiB and more with a 413). */
export const MAX_SPLIT_HTML_BYTES = 262_144;
/** Most strings in `heading_remove_strings` and in `body_remove_strings` (each removal is a pass over the page). */
export const MAX_SPLIT_REMOVE_STRINGS = 100;
/** Longest string of `heading_remove_strings` / `body_remove_strings`, in characters. */
export const MAX_SPLIT_REMOVE_STRING_LENGTH = 1024;

const removeStrings = z
  .array(z.string().max(MAX_SPLIT_REMOVE_STRING_LENGTH, `each string must be at most ${MAX_SPLIT_REMOVE_STRING_LENGTH} characters`))
  .max(MAX_SPLIT_REMOVE_STRINGS, `at most ${MAX_SPLIT_REMOVE_STRINGS} strings`)
  .nullable()
  .optional();

const splitBody = z.object({
  chunk_html: z.string({ message: 'chunk_html is required and must be a string' }),
  heading_remove_strings: removeStrings,
  body_remove_strings: removeStrings,
});

/** A validated split request. */
export interface ChunkSplitRequest {
  readonly chunkHtml: string;
  readonly headingRemoveStrings: readonly string[];
  readonly bodyRemoveStrings: readonly string[];
}

/** Validates a split body; 413 when the page is 256 KiB or more. */
export function parseChunkSplit(body: unknown): ChunkSplitRequest {
  requireBody(body, 'a JSON object with "chunk_html"');
  const b = parse(splitBody, body);
  const bytes = Buffer.byteLength(b.chunk_html, 'utf8');
  if (bytes >= MAX_SPLIT_HTML_BYTES) {
    throw new QuarryError('payload_too_large', `The HTML content is too large: chunk_html is ${bytes} bytes; it must be under ${MAX_SPLIT_HTML_BYTES} bytes (256 KiB)`);
  }
  return { chunkHtml: b.chunk_html, headingRemoveStrings: b.heading_remove_strings ?? [], bodyRemoveStrings: b.body_remove_strings ?? [] };
}
