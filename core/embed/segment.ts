/**
 * Cutting texts into pieces USE-Lite can read. The model silently keeps only the first 128
 * sentence pieces (~63 words) of an input, so a long document is embedded as the mean of its
 * sentence vectors (measured on SciFact: nDCG@10 0.25 against 0.21 for the truncated whole
 * document), and a sentence longer than the limit is cut into windows of whole words.
 */

/** Counts the model's sentence pieces of a text (the tokenizer lives in the worker thread). */
export type PieceCounter = (text: string) => number;

/** Sentences shorter than this many words are glued to a neighbour ("Fig. 2.", "(n = 3)."). */
const MIN_SENTENCE_WORDS = 3;

/** What an empty or whitespace-only text is embedded as: the model needs at least one piece. */
export const EMPTY_TEXT_STANDIN = ' ';

// A sentence ends at . ! ? (optionally followed by closing quotes or brackets) before whitespace
// and a capital, digit or opening quote/bracket; newlines always end one. Abbreviations such as
// "e.g. the" stay whole because a lowercase word follows.
const CLOSERS = new Set(['"', "'", '\u201d', '\u2019', ')', ']']);
const OPENERS = new Set(['"', "'", '\u201c', '\u2018', '(', '[']);
const CAPITAL_OR_DIGIT = /^[\p{Lu}\p{N}]$/u;

/**
 * Splits a whitespace-collapsed line at its sentence ends, in one pass. The lookbehind regex this
 * replaces (`(?<=[.!?]["')\]]*)\s+(?=...)`) re-read a run of quotes or brackets backwards from
 * each of its characters: quadratic on a long run, on every embedding of such a text.
 */
function splitAtSentenceEnds(line: string): string[] {
  const out: string[] = [];
  let from = 0;
  for (let i = line.indexOf(' '); i >= 0; i = line.indexOf(' ', i + 1)) {
    let next = i + 1;
    if (OPENERS.has(line[next] ?? '')) next++;
    const cp = line.codePointAt(next);
    if (cp === undefined || !CAPITAL_OR_DIGIT.test(String.fromCodePoint(cp))) continue;
    // Back over closing quotes and brackets; this run stops at the previous space at the latest.
    let k = i - 1;
    while (k >= 0 && CLOSERS.has(line[k]!)) k--;
    const end = k >= 0 ? line[k] : undefined;
    if (end !== '.' && end !== '!' && end !== '?') continue;
    out.push(line.slice(from, i));
    from = i + 1;
  }
  out.push(line.slice(from));
  return out;
}

/** Splits a text into sentences (whitespace collapsed), gluing very short fragments. */
export function splitSentences(text: string): string[] {
  const raw: string[] = [];
  for (const line of text.split(/\r?\n+/)) {
    const collapsed = line.replace(/\s+/g, ' ').trim();
    if (collapsed === '') continue;
    for (const s of splitAtSentenceEnds(collapsed)) if (s !== '') raw.push(s);
  }
  const out: string[] = [];
  let pending = '';
  for (const s of raw) {
    const joined = pending === '' ? s : `${pending} ${s}`;
    if (wordCount(joined) < MIN_SENTENCE_WORDS) {
      pending = joined;
      continue;
    }
    out.push(joined);
    pending = '';
  }
  if (pending !== '') {
    // A short tail belongs to the sentence before it, when there is one.
    if (out.length > 0) out[out.length - 1] = `${out[out.length - 1]!} ${pending}`;
    else out.push(pending);
  }
  return out;
}

function wordCount(s: string): number {
  let n = 0;
  for (const w of s.split(' ')) if (w !== '') n++;
  return n;
}

/**
 * Cuts one sentence into consecutive windows of whole words of at most `maxPieces` pieces. Words
 * never share a piece (each starts with the "▁" boundary), so per-word counts add up exactly. A
 * single word above the limit becomes a window of its own and the model truncates it.
 */
export function windowByPieces(sentence: string, countPieces: PieceCounter, maxPieces: number): string[] {
  const windows: string[] = [];
  let words: string[] = [];
  let pieces = 0;
  for (const word of sentence.split(' ')) {
    if (word === '') continue;
    const n = countPieces(word);
    if (words.length > 0 && pieces + n > maxPieces) {
      windows.push(words.join(' '));
      words = [];
      pieces = 0;
    }
    words.push(word);
    pieces += n;
  }
  if (words.length > 0) windows.push(words.join(' '));
  return windows;
}

/**
 * The inputs whose vectors are averaged into one text's vector: for a document its sentences
 * (long ones windowed); for a query the whole text when it fits, else the same split as a
 * document. Never empty; never an empty string.
 */
export function segmentText(text: string, kind: 'query' | 'doc', countPieces: PieceCounter, maxPieces: number): string[] {
  const whole = text.replace(/\s+/g, ' ').trim();
  if (whole === '') return [EMPTY_TEXT_STANDIN];
  if (kind === 'query' && countPieces(whole) <= maxPieces) return [whole];
  const segments: string[] = [];
  for (const sentence of splitSentences(text)) {
    if (countPieces(sentence) <= maxPieces) segments.push(sentence);
    else segments.push(...windowByPieces(sentence, countPieces, maxPieces));
  }
  return segments.length > 0 ? segments : [whole];
}
