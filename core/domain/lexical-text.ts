/** The text a chunk's lexical indexes (bm25, fulltext, SPLADE) are built from. */
import type { ChunkRecord } from './chunk.js';
import { htmlToText } from './html-text.js';

/** fulltext_content when given, else chunk_html (as text unless told not to convert). */
export function lexicalText(c: Pick<ChunkRecord, 'fulltextContent' | 'chunkHtml' | 'convertHtmlToText'>): string {
  if (c.fulltextContent != null) return c.fulltextContent;
  const html = c.chunkHtml ?? '';
  return c.convertHtmlToText ? htmlToText(html) : html;
}

/** Words of a chunk the cross-encoder scores: models of its kind read ~512 tokens at most. */
const RERANK_WORDS = 100;

/** The text a cross-encoder scores for a chunk: the first {@link RERANK_WORDS} words of its lexical text. */
export function rerankText(c: ChunkRecord): string {
  return lexicalText(c).split(/\s+/).slice(0, RERANK_WORDS).join(' ');
}
