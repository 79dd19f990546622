/** The text a chunk's lexical indexes (bm25, fulltext, SPLADE) are built from. */
import type { ChunkRecord } from './chunk.js';
import { htmlToText } from './html-text.js';

/** fulltext_content when given, else chunk_html (as text unless told not to convert). */
export function lexicalText(c: ChunkRecord): string {
  if (c.fulltextContent != null) return c.fulltextContent;
  const html = c.chunkHtml ?? '';
  return c.convertHtmlToText ? htmlToText(html) : html;
}
