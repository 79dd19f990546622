/**
 * A document's sections split into chunks of about a target size, the way a recursive character
 * splitter does (paragraph, then line, then sentence, then word boundaries), written here rather
 * than taken from a library: `@langchain/textsplitters` needs `@langchain/core` (a large tree)
 * as a peer, and the small splitters on npm are unmaintained.
 *
 * The text is read as tokens (runs of non-space) with a boundary strength for each gap between
 * two. A chunk ends at the strongest gap whose chunk length falls in [targetChars / 2,
 * targetChars × 1.25], the one closest to the target among equals, so a paragraph end is taken
 * over a sentence end nearer the target. The next chunk starts at the first token within
 * overlapChars before that end. A chunk is a slice of its section's text, so it keeps the
 * section's line breaks and never spans two sections.
 *
 * A token longer than the largest chunk (text without spaces: Chinese, Japanese, Thai) is cut at
 * its words by `Intl.Segmenter`, punctuation kept with the word before it; a word longer than
 * that is a chunk of its own.
 */
import type { DocumentSplitOptions } from '../domain/files.js';
import type { DocumentSection } from './document-text.js';

/** A document chunk: its text and the headings above it. */
export interface DocumentChunk {
  readonly text: string;
  readonly headings: readonly string[];
}

/** Gap strengths, strongest first: the order in which boundaries are preferred. */
const PARAGRAPH = 0;
const LINE = 1;
const SENTENCE = 2;
const WORD = 3;
/** Between two segments of one spaceless token. */
const INSIDE_TOKEN = 4;

/** The largest chunk, as a multiple of the target. */
const MAX_FACTOR = 1.25;
/** The smallest chunk that may end at a chosen boundary (only a section's last chunk is shorter, or one cut before a long word). */
const MIN_FACTOR = 0.5;

/** Characters that end a sentence, and those that may follow its end (closing quotes and brackets). */
const SENTENCE_ENDS = new Set(['.', '!', '?', '…', '。', '！', '？']);
const CLOSERS = new Set(['"', "'", ')', ']', '}', '’', '”', '»', '」', '』']);

/** Whether a token ends a sentence: a sentence end, then only closing quotes or brackets. */
function endsSentence(text: string, start: number, end: number): boolean {
  let i = end - 1;
  while (i > start && CLOSERS.has(text[i]!)) i--;
  return SENTENCE_ENDS.has(text[i]!);
}

/** The strength of the gap text[from, to) after a token that starts at `tokenStart` and ends at `from`. */
function gapStrength(text: string, tokenStart: number, from: number, to: number): number {
  let newlines = 0;
  for (let i = from; i < to; i++) if (text[i] === '\n') newlines++;
  if (newlines >= 2) return PARAGRAPH;
  if (newlines === 1) return LINE;
  if (endsSentence(text, tokenStart, from)) return SENTENCE;
  return to > from ? WORD : INSIDE_TOKEN;
}

let segmenter: Intl.Segmenter | undefined;

/** Tokens kept behind the oldest one still needed before the window is compacted. */
const COMPACT_AFTER = 4096;

/**
 * The tokens of a text (runs of non-space; a run longer than `maxChars` cut at its word
 * boundaries), read on demand and forgotten once no chunk can reach back to them: a chunk looks
 * only a chunk's length around its end, so a 100 MB text never holds all its tokens at once.
 * Tokens are numbered from 0 in text order.
 */
class TokenWindow {
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];
  /** Strength of the gap before each token (the first token's is unused). */
  private readonly gaps: number[] = [];
  /** Number of the first token held. */
  private base = 0;
  private readonly words = /\S+/g;
  private done = false;

  constructor(
    private readonly text: string,
    private readonly maxChars: number,
  ) {}

  /** Whether token i exists (reading up to it). */
  has(i: number): boolean {
    while (!this.done && i - this.base >= this.ends.length) this.read();
    return i - this.base < this.ends.length;
  }

  /** Start offset of a token read already. */
  start(i: number): number {
    return this.starts[i - this.base]!;
  }

  /** End offset of a token read already. */
  end(i: number): number {
    return this.ends[i - this.base]!;
  }

  /** Strength of the gap before a token read already. */
  gapBefore(i: number): number {
    return this.gaps[i - this.base]!;
  }

  /** Forgets the tokens before token i. */
  dropBefore(i: number): void {
    const drop = i - this.base;
    if (drop < COMPACT_AFTER) return;
    this.starts.splice(0, drop);
    this.ends.splice(0, drop);
    this.gaps.splice(0, drop);
    this.base = i;
  }

  private push(start: number, end: number): void {
    const n = this.ends.length;
    this.gaps.push(n === 0 ? PARAGRAPH : gapStrength(this.text, this.starts[n - 1]!, this.ends[n - 1]!, start));
    this.starts.push(start);
    this.ends.push(end);
  }

  private read(): void {
    const match = this.words.exec(this.text);
    if (!match) {
      this.done = true;
      return;
    }
    const start = match.index;
    const end = start + match[0].length;
    if (end - start <= this.maxChars) {
      this.push(start, end);
      return;
    }
    segmenter ??= new Intl.Segmenter(undefined, { granularity: 'word' });
    let words = 0;
    for (const segment of segmenter.segment(match[0])) {
      const end = start + segment.index + segment.segment.length;
      // Punctuation stays with the word before it: no chunk of a lone "." or "。".
      if (segment.isWordLike || words === 0) {
        this.push(start + segment.index, end);
        words++;
      } else {
        this.ends[this.ends.length - 1] = end;
      }
    }
  }
}

/** One section's text split into chunks (see the module comment). */
function splitText(text: string, targetChars: number, overlapChars: number): string[] {
  const maxChars = Math.floor(targetChars * MAX_FACTOR);
  const minChars = Math.ceil(targetChars * MIN_FACTOR);
  const tokens = new TokenWindow(text, maxChars);
  const chunks: string[] = [];
  let first = 0;
  /** The last token of the previous chunk: every chunk adds at least the token after it. */
  let previousLast = -1;
  while (tokens.has(previousLast + 1)) {
    const fresh = previousLast + 1;
    // Overlap gives way rather than push a chunk over the bound (a long word after it stands alone).
    while (first < fresh && tokens.end(fresh) - tokens.start(first) > maxChars) first++;
    const from = tokens.start(first);
    let last = -1;
    let best = -1;
    let bestStrength = Number.POSITIVE_INFINITY;
    let bestDistance = Number.POSITIVE_INFINITY;
    let shorter = -1;
    for (let j = fresh; tokens.has(j) && tokens.end(j) - from <= maxChars; j++) {
      // The rest of the section fits: it is the last chunk.
      if (!tokens.has(j + 1)) {
        last = j;
        break;
      }
      const length = tokens.end(j) - from;
      if (length < minChars) {
        shorter = j;
        continue;
      }
      const strength = tokens.gapBefore(j + 1);
      const distance = Math.abs(length - targetChars);
      if (strength < bestStrength || (strength === bestStrength && distance < bestDistance)) {
        best = j;
        bestStrength = strength;
        bestDistance = distance;
      }
    }
    // No boundary in the window: the text before the next long token, or that token alone.
    if (last < 0) last = best >= 0 ? best : shorter >= 0 ? shorter : fresh;
    chunks.push(text.slice(from, tokens.end(last)));
    previousLast = last;
    // The next chunk starts at the first token within overlapChars of this one's end, after this one's start.
    const end = tokens.end(last);
    let next = last + 1;
    while (next - 1 > first && tokens.start(next - 1) >= end - overlapChars) next--;
    first = next;
    tokens.dropBefore(first);
  }
  return chunks;
}

/**
 * Splits sections into chunks of about targetChars characters (at most 1.25x unless one word is
 * longer), preferring paragraph, then line, then sentence, then word boundaries, with about
 * overlapChars of shared text between consecutive chunks of one section; a chunk never spans two
 * sections. An overlap above half the target is taken as half the target: more would leave too
 * little new text per chunk to keep within the bound.
 */
export function splitDocument(sections: readonly DocumentSection[], options: DocumentSplitOptions): DocumentChunk[] {
  const targetChars = Math.max(1, Math.floor(options.targetChars));
  const overlapChars = Math.max(0, Math.min(Math.floor(options.overlapChars), Math.floor(targetChars / 2)));
  const chunks: DocumentChunk[] = [];
  for (const section of sections) {
    for (const text of splitText(section.text, targetChars, overlapChars)) chunks.push({ text, headings: section.headings });
  }
  return chunks;
}
