/**
 * HTML to plain text, shared by indexing, highlighting and responses. Deliberately small and
 * fast (it runs on every chunk write): drop comments, scripts and styles, turn block-level tags
 * into line breaks, drop the other tags, then decode entities with the `entities` package.
 */
import { decodeHTML } from 'entities';

const DROP = /<!--[\s\S]*?-->|<(script|style|noscript|template)\b[^>]*>[\s\S]*?<\/\1\s*>/gi;
const BLOCK = /<\/?(p|div|br|li|ul|ol|tr|td|th|table|h[1-6]|section|article|header|footer|blockquote|pre|hr)\b[^>]*>/gi;
const TAG = /<\/?[a-zA-Z][^>]*>/g;

/** Plain text of an HTML fragment (or of plain text, unchanged but for entities). */
export function htmlToText(html: string): string {
  if (!html.includes('<') && !html.includes('&')) return html;
  return decodeHTML(html.replace(DROP, ' ').replace(BLOCK, '\n').replace(TAG, ''))
    .replace(/[ \t\f\v\r]+/g, ' ')
    .replace(/ *\n[\n ]*/g, '\n')
    .trim();
}
