/**
 * Splits an HTML page into chunks at its headings, by the rules of the reference implementation's
 * `POST /api/chunk/split` (its crawl splitter):
 *
 * 1. Every opening heading tag (`<h1`..`<h6`, any case, up to the first `>` on the same line)
 *    starts a new piece; the piece runs to the next one.
 * 2. A piece whose text has at most 5 words, or whose text is nothing but its headings' text, is
 *    not a chunk on its own: it is carried, joined by one space, to the front of the next piece.
 * 3. The last piece is always a chunk (with whatever was carried), or the carried piece is.
 * 4. A chunk's heading is the text of every heading element in it, joined by newlines; its body
 *    is the piece's HTML, trimmed. `heading_remove_strings` / `body_remove_strings` are removed
 *    (every occurrence, in order) from those; chunks left without a heading or a body are dropped.
 *
 * Every scan is linear in the input (no backtracking over untrusted text).
 */
import { decodeHTML } from 'entities';
import { htmlToText } from './html-text.js';

/** One chunk of a split page. */
export interface SplitChunk {
  /** Text of the chunk's heading elements, one per line. */
  readonly headings: string;
  /** The chunk's HTML. */
  readonly body: string;
}

/** Words a piece's text must exceed to stand as a chunk of its own. */
const MIN_WORDS = 5;

const isDigit1to6 = (c: string | undefined): boolean => c !== undefined && c >= '1' && c <= '6';
const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const isLetter = (c: string | undefined): boolean => c !== undefined && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'));

/**
 * Finds the next `>` or newline at or after a position, remembering the last answer so that
 * many candidates before the same stop cost one scan (the input is untrusted: no quadratic rescans).
 */
function stopFinder(html: string, stops: string): (from: number) => number {
  let cachedFrom = -1;
  let cachedAt = -1;
  return (from: number): number => {
    if (from > cachedFrom && from <= cachedAt) return cachedAt;
    let i = from;
    while (i < html.length && !stops.includes(html[i]!)) i++;
    cachedFrom = from;
    cachedAt = i;
    return i;
  };
}

/** Spans [start, end) of the opening heading tags: `<h[1-6]` up to the first `>` on the same line. */
export function headingTagSpans(html: string): [number, number][] {
  const spans: [number, number][] = [];
  const next = stopFinder(html, '>\n');
  for (let i = html.indexOf('<'); i !== -1 && i < html.length; i = html.indexOf('<', i + 1)) {
    const h = html[i + 1];
    if ((h !== 'h' && h !== 'H') || !isDigit1to6(html[i + 2])) continue;
    const stop = next(i + 3);
    if (stop < html.length && html[stop] === '>') {
      spans.push([i, stop + 1]);
      i = stop;
    }
  }
  return spans;
}

/** The text of every heading element (h1-h6) of a fragment, one per line. */
export function headingsText(html: string): string {
  const out: string[] = [];
  let current: string[] | null = null;
  const next = stopFinder(html, '>');
  let i = 0;
  while (i < html.length) {
    const lt = html.indexOf('<', i);
    const textEnd = lt === -1 ? html.length : lt;
    if (current && textEnd > i) current.push(html.slice(i, textEnd));
    if (lt === -1) break;
    const closing = html[lt + 1] === '/';
    const nameAt = closing ? lt + 2 : lt + 1;
    if (!isLetter(html[nameAt])) {
      // Not a tag: a lone '<' is text.
      if (current) current.push('<');
      i = lt + 1;
      continue;
    }
    const gt = next(nameAt);
    if (gt >= html.length) {
      if (current) current.push(html.slice(lt));
      break;
    }
    const heading = (html[nameAt] === 'h' || html[nameAt] === 'H') && isDigit1to6(html[nameAt + 1]) && !isLetter(html[nameAt + 2]) && !isDigit(html[nameAt + 2]);
    if (heading) {
      // A heading opened inside another closes it, as HTML parsers do.
      if (current) out.push(decodeHTML(current.join('')));
      current = closing ? null : [];
    }
    i = gt + 1;
  }
  if (current) out.push(decodeHTML(current.join('')));
  return out.join('\n');
}

const wordCount = (text: string): number => text.split(/\s+/).filter((w) => w.length > 0).length;

/** Removes every occurrence of each string, in order. */
function removeAll(s: string, strings: readonly string[]): string {
  let out = s;
  for (const r of strings) if (r.length > 0) out = out.split(r).join('');
  return out;
}

/** Splits `html` into chunks at its headings (see the module comment for the rules). */
export function splitHtml(html: string, headingRemove: readonly string[] = [], bodyRemove: readonly string[] = []): SplitChunk[] {
  const pieces: { headings: string; body: string }[] = [];
  let carried: string | null = null;
  /** Joins what was carried to the front of a finished piece. */
  const withCarried = (piece: string): string => {
    const trimmed = piece.trim();
    const joined: string = carried === null ? trimmed : `${carried} ${trimmed}`;
    carried = null;
    return joined;
  };
  let current = '';
  let lastEnd = 0;
  for (const [start, end] of headingTagSpans(html)) {
    current += html.slice(lastEnd, start);
    if (current.length > 0) {
      const piece = withCarried(current);
      const text = htmlToText(piece);
      const headings = headingsText(piece);
      if (wordCount(text) > MIN_WORDS && text.split(headings).join('').trim() !== '') pieces.push({ headings, body: piece });
      else carried = piece;
    }
    current = html.slice(start, end);
    lastEnd = end;
  }
  current += html.slice(lastEnd);
  if (current.length > 0) {
    const piece = withCarried(current);
    pieces.push({ headings: headingsText(piece), body: piece });
  } else if (carried !== null) {
    pieces.push({ headings: headingsText(carried), body: carried });
  }
  return pieces
    .map((p) => ({ headings: removeAll(p.headings, headingRemove), body: removeAll(p.body, bodyRemove) }))
    .filter((p) => p.headings.trim() !== '' && p.body.trim() !== '');
}
