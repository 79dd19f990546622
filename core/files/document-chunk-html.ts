/**
 * A document chunk as the `chunk_html` of the chunk it becomes. The text is escaped, never
 * markup: a document's `<script>` is words of the chunk, shown as such. The heading path comes
 * first, so that the chunk's words (searched and embedded from htmlToText of this HTML) carry
 * the context of where it stood in the document.
 */
import { escapeUTF8 } from 'entities';
import type { DocumentChunk } from './split-document.js';

/** What joins the headings of the path on its line. */
const PATH_SEPARATOR = ' > ';

/** One paragraph: its lines escaped and joined by `<br>`. */
function paragraphHtml(paragraph: string): string {
  return `<p>${paragraph.split('\n').map(escapeUTF8).join('<br>')}</p>`;
}

/** The chunk as safe `chunk_html`: the heading path as a first line, then each paragraph (text between blank lines) as `<p>`. */
export function documentChunkHtml(chunk: DocumentChunk): string {
  const parts: string[] = [];
  const path = chunk.headings.filter((h) => h.trim() !== '').join(PATH_SEPARATOR);
  if (path !== '') parts.push(`<p><strong>${escapeUTF8(path)}</strong></p>`);
  for (const paragraph of chunk.text.split(/\n[ \t]*\n/)) {
    const trimmed = paragraph.trim();
    if (trimmed !== '') parts.push(paragraphHtml(trimmed));
  }
  return parts.join('');
}
