/** What a chunk's dense vector is made from, and the hash that tells when it is outdated. */
import { createHash } from 'node:crypto';
import type { ChunkRecord } from './chunk.js';
import { htmlToText } from './html-text.js';

/** The text embedded for a chunk: semantic_content when given, else chunk_html (as text unless told not to convert). */
export function semanticText(c: Pick<ChunkRecord, 'semanticContent' | 'chunkHtml' | 'convertHtmlToText'>): string {
  if (c.semanticContent != null) return c.semanticContent;
  const html = c.chunkHtml ?? '';
  return c.convertHtmlToText ? htmlToText(html) : html;
}

/** Hash of everything the vector depends on: the text and the semantic boost. */
export function semanticHash(c: Pick<ChunkRecord, 'semanticContent' | 'chunkHtml' | 'convertHtmlToText' | 'semanticBoost'>): string {
  const h = createHash('sha1').update(semanticText(c));
  if (c.semanticBoost) h.update(`\u0000${c.semanticBoost.phrase}\u0000${c.semanticBoost.distance_factor}`);
  return h.digest('hex');
}
