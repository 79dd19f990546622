/**
 * HTML to plain text, shared by indexing, highlighting and responses. Deliberately small and
 * fast (it runs on every chunk write): drop comments, scripts and styles, turn block-level tags
 * into line breaks, drop the other tags, then decode entities with the `entities` package.
 *
 * Three linear passes, each the exact equivalent of one global regex replace of the first
 * version (kept as the oracle in test/unit/html-text.test.ts):
 * 1. `<!--[\s\S]*?-->|<(script|style|noscript|template)\b[^>]*>[\s\S]*?<\/\1\s*>` (gi) → ' '
 * 2. `<\/?(p|div|...|hr)\b[^>]*>` (gi) → '\n'
 * 3. `<\/?[a-zA-Z][^>]*>` → ''
 * Those regexes rescanned the rest of the text for every unterminated opener (quadratic: a
 * 200 KB `<a<a<a...` chunk took 44 s). Pass 1 is a scanner whose every search remembers its
 * answer (text-scan.ts); passes 2 and 3 keep their native regexes but run them only up to the
 * last `>`, where they are linear (see replaceTagsBeforeLastGt). A chunk is converted on an
 * event loop several times per write, so this is on the hot path of ingest.
 */
import { decodeHTML } from 'entities';
import { CloseTagFinder, ForwardIndexOf, isWordChar, startsWithIgnoreCase } from './text-scan.js';

/** Elements whose content is not visible text. */
export const DROPPED_ELEMENTS: readonly string[] = ['script', 'style', 'noscript', 'template'];

/** Tags that stand for a line break. */
export const BLOCK_TAGS: ReadonlySet<string> = new Set([
  'p', 'div', 'br', 'li', 'ul', 'ol', 'tr', 'td', 'th', 'table', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
  'section', 'article', 'header', 'footer', 'blockquote', 'pre', 'hr',
]);

/**
 * The skeleton of pass 1: each match that starts at a `<` and ends before `endOf(i)` (-1: no
 * match there) becomes `replacement`; scanning resumes after the match, or at the next `<`.
 */
function replaceAtOpeners(html: string, replacement: string, endOf: (i: number) => number): string {
  const out: string[] = [];
  const lt = new ForwardIndexOf(html, '<');
  let copied = 0;
  let i = lt.find(0);
  while (i >= 0) {
    const end = endOf(i);
    if (end < 0) {
      i = lt.find(i + 1);
      continue;
    }
    out.push(html.slice(copied, i), replacement);
    copied = end;
    i = lt.find(end);
  }
  if (copied === 0) return html;
  out.push(html.slice(copied));
  return out.join('');
}

/** Pass 1: comments and dropped elements become one space each. */
function dropHidden(html: string): string {
  const commentEnd = new ForwardIndexOf(html, '-->');
  const gt = new ForwardIndexOf(html, '>');
  const closes = new CloseTagFinder(html);
  return replaceAtOpeners(html, ' ', (i) => {
    if (html.startsWith('<!--', i)) {
      const close = commentEnd.find(i + 4);
      return close >= 0 ? close + 3 : -1;
    }
    for (const name of DROPPED_ELEMENTS) {
      const after = i + 1 + name.length;
      // `\b`: the name is a whole word (and something follows it).
      if (!startsWithIgnoreCase(html, name, i + 1) || after >= html.length || isWordChar(html.charCodeAt(after))) continue;
      const openEnd = gt.find(after);
      const close = openEnd < 0 ? null : closes.find(name, openEnd + 1);
      return close ? close.end : -1;
    }
    return -1;
  });
}

/**
 * Applies a global regex whose every match is `<`, a bounded head, then `[^>]*>`, to the text up
 * to its last `>` only. There each opener the head accepts finds a `>` and the match consumes
 * what it scanned, so the native engine runs in linear time; after the last `>` no such match can
 * end, so that tail is copied as is (running the regex over it would rescan the rest of the text
 * for every opener there: quadratic).
 */
function replaceTagsBeforeLastGt(html: string, tag: RegExp, replacement: string): string {
  const lastGt = html.lastIndexOf('>');
  if (lastGt < 0) return html;
  if (lastGt === html.length - 1) return html.replace(tag, replacement);
  return html.slice(0, lastGt + 1).replace(tag, replacement) + html.slice(lastGt + 1);
}

/** Block-level tags (regex `\b` after the name, then up to the next `>`). */
const BLOCK_TAG = new RegExp(`<\\/?(?:${[...BLOCK_TAGS].join('|')})\\b[^>]*>`, 'gi');
/** Any other tag: `<` or `</` then a letter, up to the next `>`. */
const ANY_TAG = /<\/?[a-zA-Z][^>]*>/g;
/** Whitespace that changes: a run of two or more (tried first: it must win over its first unit), or a lone tab, vertical tab, form feed or CR. */
const WHITESPACE_TO_COLLAPSE = /[ \t\n\v\f\r]{2,}|[\t\v\f\r]/g;

/** Pass 2: block-level tags become a line break. */
function breakBlocks(html: string): string {
  return replaceTagsBeforeLastGt(html, BLOCK_TAG, '\n');
}

/** Pass 3: every other tag disappears. */
function dropTags(html: string): string {
  return replaceTagsBeforeLastGt(html, ANY_TAG, '');
}

/**
 * Collapses each run of ` \t\f\v\r\n` to one line break when it holds one, else to one space:
 * what `.replace(/[ \t\f\v\r]+/g, ' ').replace(/ *\n[\n ]*\/g, '\n')` did, in one native pass
 * that touches only the runs that change.
 */
function collapseWhitespace(text: string): string {
  return text.replace(WHITESPACE_TO_COLLAPSE, (run) => (run.includes('\n') ? '\n' : ' '));
}

/**
 * Whether pass 1 can change anything: a native regex scan, far cheaper than the pass's own walk
 * over every `<` (a few hundred ns each).
 */
const MAY_HIDE = new RegExp(`<(?:!--|${DROPPED_ELEMENTS.join('|')})`, 'i');

/** Inputs at least this long are remembered (see {@link htmlToText}). */
const REMEMBER_FROM = 16_384;
/** Total length of the inputs remembered, in UTF-16 units (a full batch of long chunks fits). */
const REMEMBER_UNITS = 4_000_000;
/** Long inputs converted lately and their text, oldest first. */
const recent = new Map<string, string>();
let recentUnits = 0;

/**
 * Plain text of an HTML fragment (or of plain text, unchanged but for entities). Long
 * conversions done lately are remembered: one write converts each chunk_html for its semantic
 * hash and again for its response (milliseconds per 200 KB of an event loop every tenant shares).
 */
export function htmlToText(html: string): string {
  if (!html.includes('<') && !html.includes('&')) return html;
  if (html.length < REMEMBER_FROM) return convert(html);
  const known = recent.get(html);
  if (known !== undefined) return known;
  const text = convert(html);
  recent.set(html, text);
  recentUnits += html.length;
  for (const old of recent.keys()) {
    if (recentUnits <= REMEMBER_UNITS) break;
    recent.delete(old);
    recentUnits -= old.length;
  }
  return text;
}

function convert(html: string): string {
  let text = html;
  if (MAY_HIDE.test(text)) text = dropHidden(text);
  text = dropTags(breakBlocks(text));
  if (text.includes('&')) text = decodeHTML(text);
  return collapseWhitespace(text).trim();
}
