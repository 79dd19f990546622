/**
 * The visible text of a chunk_html together with where each text character came from in the
 * html. Highlighting matches on the text and inserts tags through this map, so tags land only in
 * text nodes: never inside a tag, an attribute, an entity or a script/style element.
 *
 * The text follows `htmlToText` (core/domain/html-text.ts): comments and script, style, noscript
 * and template elements are dropped, block-level tags stand for a line break, other tags vanish,
 * entities are decoded. Unlike `htmlToText`, whitespace is kept as written (matching treats any
 * whitespace run as one space) so that offsets stay one-to-one.
 */
import { DecodingMode, HtmlEntityDecoder } from 'entities';
import { CloseTagFinder, isAsciiLetter, isRegexSpace } from '../../core/domain/text-scan.js';
import { BLOCK_TAGS, DROPPED_ELEMENTS } from '../../core/domain/html-text.js';

/** Visible text plus, per UTF-16 unit, its source range in the html. */
export interface TextMap {
  /** Decoded visible text. */
  readonly text: string;
  /**
   * html offset where the source of `text[i]` starts, or -1 when `text[i]` is the line break a
   * block-level tag stands for. Null when the html has no markup and text === html.
   */
  readonly start: Int32Array | null;
  /** html offset just past the source of `text[i]` (an entity's whole `&...;`), -1 as above. */
  readonly end: Int32Array | null;
}

const DROPPED = new Set(DROPPED_ELEMENTS);

/**
 * Index just past the `>` closing the tag whose name starts at `from`, honouring quoted values
 * (a quote opens a value only after `=`, so `<a b'c>` is just characters); -1 if none.
 *
 * The scan is an automaton over (outside | in "..." | in '...') whose steps do not depend on
 * where it started, so once one scan runs off the end (an unterminated tag) the answer for every
 * start is computed backwards in one pass: `<a<a<a...` without `>` stays linear.
 */
class TagEnds {
  private outside: Int32Array | null = null;

  constructor(private readonly html: string) {}

  /** The tag end for a name starting at `from` (positions only move forward between calls). */
  find(from: number): number {
    if (this.outside) return this.outside[from]!;
    const html = this.html;
    let quote = 0;
    for (let i = from; i < html.length; i++) {
      const c = html.charCodeAt(i);
      if (quote !== 0) {
        if (c === quote) quote = 0;
      } else if (c === 62 /* > */) {
        return i + 1;
      } else if ((c === 34 || c === 39) && this.afterEquals(i)) {
        quote = c;
      }
    }
    this.outside = this.allEnds();
    return this.outside[from]!;
  }

  /** Whether the last non-space unit before `i` is `=` (then a quote opens a value). */
  private afterEquals(i: number): boolean {
    let k = i - 1;
    while (k >= 0 && isRegexSpace(this.html.charCodeAt(k))) k--;
    return k >= 0 && this.html.charCodeAt(k) === 61;
  }

  /** Tag ends from every position in the "outside" state, filled from the end. */
  private allEnds(): Int32Array {
    const html = this.html;
    const n = html.length;
    const afterEq = new Uint8Array(n);
    let lastNonSpace = -1;
    for (let i = 0; i < n; i++) {
      afterEq[i] = lastNonSpace === 61 ? 1 : 0;
      const c = html.charCodeAt(i);
      if (!isRegexSpace(c)) lastNonSpace = c;
    }
    const outside = new Int32Array(n + 1).fill(-1);
    const inDouble = new Int32Array(n + 1).fill(-1);
    const inSingle = new Int32Array(n + 1).fill(-1);
    for (let i = n - 1; i >= 0; i--) {
      const c = html.charCodeAt(i);
      inDouble[i] = c === 34 ? outside[i + 1]! : inDouble[i + 1]!;
      inSingle[i] = c === 39 ? outside[i + 1]! : inSingle[i + 1]!;
      if (c === 62) outside[i] = i + 1;
      else if (c === 34 && afterEq[i]) outside[i] = inDouble[i + 1]!;
      else if (c === 39 && afterEq[i]) outside[i] = inSingle[i + 1]!;
      else outside[i] = outside[i + 1]!;
    }
    return outside;
  }
}

/** Lowercase name of the tag whose name starts at `from` (up to whitespace, `/` or `>`). */
function tagName(html: string, from: number): string {
  let i = from;
  while (i < html.length) {
    const c = html.charCodeAt(i);
    if (c === 47 || c === 62 || isRegexSpace(c)) break;
    i++;
  }
  return html.slice(from, i).toLowerCase();
}

/** Builds the text map of an html fragment; plain text (no `<` or `&`) maps to itself. */
export function buildTextMap(html: string): TextMap {
  if (!html.includes('<') && !html.includes('&')) return { text: html, start: null, end: null };
  // Every markup construct is at least as long as the text it yields, so html.length bounds the text.
  const start = new Int32Array(html.length);
  const end = new Int32Array(html.length);
  const parts: string[] = [];
  let n = 0;
  const emit = (s: string, from: number, to: number): void => {
    parts.push(s);
    for (let k = 0; k < s.length; k++) {
      start[n] = from;
      end[n] = to;
      n++;
    }
  };
  const decoded: number[] = [];
  const tagEnds = new TagEnds(html);
  const closes = new CloseTagFinder(html);
  const decoder = new HtmlEntityDecoder((cp) => decoded.push(cp));

  let i = 0;
  while (i < html.length) {
    const c = html.charCodeAt(i);
    if (c === 60 /* < */) {
      const next = html.charCodeAt(i + 1);
      if (html.startsWith('<!--', i)) {
        const close = html.indexOf('-->', i + 4);
        i = close < 0 ? html.length : close + 3;
        continue;
      }
      const closing = next === 47; /* / */
      const nameAt = closing ? i + 2 : i + 1;
      if (isAsciiLetter(html.charCodeAt(nameAt)) || next === 33 /* ! */ || next === 63 /* ? */) {
        const after = tagEnds.find(nameAt);
        if (after > 0) {
          const name = tagName(html, nameAt);
          if (!closing && DROPPED.has(name)) {
            const close = closes.find(name, after);
            if (close) {
              i = close.end;
              continue;
            }
          }
          if (BLOCK_TAGS.has(name)) {
            parts.push('\n');
            start[n] = -1;
            end[n] = -1;
            n++;
          }
          i = after;
          continue;
        }
      }
      emit('<', i, i + 1);
      i++;
    } else if (c === 38 /* & */) {
      decoded.length = 0;
      decoder.startEntity(DecodingMode.Legacy);
      let used = decoder.write(html, i + 1);
      if (used < 0) used = decoder.end();
      if (used > 0 && decoded.length > 0) {
        emit(String.fromCodePoint(...decoded), i, i + used);
        i += used;
      } else {
        emit('&', i, i + 1);
        i++;
      }
    } else {
      // A run of plain characters up to the next markup character.
      let j = i + 1;
      while (j < html.length) {
        const d = html.charCodeAt(j);
        if (d === 60 || d === 38) break;
        j++;
      }
      parts.push(html.slice(i, j));
      for (let k = i; k < j; k++) {
        start[n] = k;
        end[n] = k + 1;
        n++;
      }
      i = j;
    }
  }
  return { text: parts.join(''), start: start.subarray(0, n), end: end.subarray(0, n) };
}

/** Whether text position i is the line break of a block-level tag (no html text behind it). */
export function isBlockBreak(map: TextMap, i: number): boolean {
  return map.start !== null && map.start[i] === -1;
}
