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
 * 200 KB `<a<a<a...` chunk took 44 s); here each search remembers its answer (text-scan.ts).
 */
import { decodeHTML } from 'entities';
import { CloseTagFinder, ForwardIndexOf, isAsciiLetter, isWordChar, startsWithIgnoreCase } from './text-scan.js';

/** Elements whose content is not visible text. */
export const DROPPED_ELEMENTS: readonly string[] = ['script', 'style', 'noscript', 'template'];

/** Tags that stand for a line break. */
export const BLOCK_TAGS: ReadonlySet<string> = new Set([
  'p', 'div', 'br', 'li', 'ul', 'ol', 'tr', 'td', 'th', 'table', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
  'section', 'article', 'header', 'footer', 'blockquote', 'pre', 'hr',
]);
/** Longest name in BLOCK_TAGS: a longer word cannot be one, so name reads stop there. */
const LONGEST_BLOCK = 10;

/**
 * The skeleton of every pass: each match that starts at a `<` and ends before `endOf(i)` (-1:
 * no match there) becomes `replacement`; scanning resumes after the match, or at the next `<`.
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

/** Pass 2: block-level tags become a line break. */
function breakBlocks(html: string): string {
  const gt = new ForwardIndexOf(html, '>');
  return replaceAtOpeners(html, '\n', (i) => {
    const from = html.charCodeAt(i + 1) === 47 /* / */ ? i + 2 : i + 1;
    let to = from;
    while (to < html.length && to - from <= LONGEST_BLOCK && isWordChar(html.charCodeAt(to))) to++;
    const isBlock = to > from && to < html.length && !isWordChar(html.charCodeAt(to)) && BLOCK_TAGS.has(html.slice(from, to).toLowerCase());
    const close = isBlock ? gt.find(to) : -1;
    return close < 0 ? -1 : close + 1;
  });
}

/** Pass 3: every other tag (`<` or `</` then a letter, up to the next `>`) disappears. */
function dropTags(html: string): string {
  const gt = new ForwardIndexOf(html, '>');
  return replaceAtOpeners(html, '', (i) => {
    const name = html.charCodeAt(i + 1) === 47 /* / */ ? i + 2 : i + 1;
    const close = isAsciiLetter(html.charCodeAt(name)) ? gt.find(name + 1) : -1;
    return close < 0 ? -1 : close + 1;
  });
}

/**
 * Collapses each run of ` \t\f\v\r\n` to one line break when it holds one, else to one space:
 * what `.replace(/[ \t\f\v\r]+/g, ' ').replace(/ *\n[\n ]*\/g, '\n')` did, in one pass.
 */
function collapseWhitespace(text: string): string {
  const out: string[] = [];
  let copied = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (!(c === 32 || (c >= 9 && c <= 13))) {
      i++;
      continue;
    }
    let j = i;
    let newline = false;
    for (; j < text.length; j++) {
      const d = text.charCodeAt(j);
      if (d === 10) newline = true;
      else if (!(d === 32 || d === 9 || d === 11 || d === 12 || d === 13)) break;
    }
    const replacement = newline ? '\n' : ' ';
    // Leave a lone character that is already its own replacement in place.
    if (j - i !== 1 || text[i] !== replacement) {
      out.push(text.slice(copied, i), replacement);
      copied = j;
    }
    i = j;
  }
  if (copied === 0) return text;
  out.push(text.slice(copied));
  return out.join('');
}

/**
 * Whether a pass can change anything: a native regex scan, far cheaper than the pass's own walk
 * over every `<` (which costs a few hundred ns each: a 200 KB run of `<a` openers took ~50 ms of
 * an event loop before these checks, now a few ms).
 */
const MAY_HIDE = new RegExp(`<(?:!--|${DROPPED_ELEMENTS.join('|')})`, 'i');
const MAY_BREAK = new RegExp(`</?(?:${[...BLOCK_TAGS].join('|')})\\b`, 'i');

/** Plain text of an HTML fragment (or of plain text, unchanged but for entities). */
export function htmlToText(html: string): string {
  if (!html.includes('<') && !html.includes('&')) return html;
  let text = html;
  if (MAY_HIDE.test(text)) text = dropHidden(text);
  if (MAY_BREAK.test(text)) text = breakBlocks(text);
  return collapseWhitespace(decodeHTML(dropTags(text))).trim();
}
