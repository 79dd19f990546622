/**
 * Sentence splitting for the extractive answerer: one linear scan, no regular expression over
 * the text, bounded output. A sentence ends at `.`, `!` or `?` (with closing quotes or brackets)
 * followed by white space and then something that can start a sentence (not a lowercase letter:
 * "e.g. this", "et al. showed"), unless the word before the period is an abbreviation or an
 * initial; a line break always ends one. A run-on longer than the cap is cut at a space.
 */

/** One sentence of a text. */
export interface Sentence {
  /** Trimmed text. */
  readonly text: string;
  /** Offset of its first character in the source text. */
  readonly start: number;
}

/** Bounds of one split. */
export interface SplitLimits {
  /** Sentences returned at most; the scan stops there. */
  readonly maxSentences: number;
  /** A sentence longer than this is cut (at the last space before the cap when there is one). */
  readonly maxChars: number;
}

/** Words (lowercase, without their period) after which a period does not end a sentence. */
const ABBREVIATIONS: ReadonlySet<string> = new Set([
  'mr', 'mrs', 'ms', 'dr', 'prof', 'sr', 'jr', 'st', 'vs', 'etc', 'al', 'fig', 'figs', 'eq', 'eqs', 'ref', 'refs',
  'no', 'nos', 'vol', 'pp', 'ch', 'sec', 'approx', 'ca', 'cf', 'e.g', 'i.e', 'inc', 'ltd', 'co', 'corp', 'jan', 'feb',
  'mar', 'apr', 'jun', 'jul', 'aug', 'sep', 'sept', 'oct', 'nov', 'dec', 'u.s', 'u.k', 'resp', 'incl', 'est',
]);

// Character tests on UTF-16 code units: the scan reads each unit once without making strings.
const isSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0c || c === 0x0b || c === 0xa0;
const NEWLINE = 0x0a;
const isTerminal = (c: number): boolean => c === 0x2e || c === 0x21 || c === 0x3f;
/** `"` `'` `)` `]` `”` `’`. */
const isCloser = (c: number): boolean => c === 0x22 || c === 0x27 || c === 0x29 || c === 0x5d || c === 0x201d || c === 0x2019;
const isLower = (text: string, i: number): boolean => {
  const c = text.charCodeAt(i);
  if (c < 0x80) return c >= 0x61 && c <= 0x7a;
  const ch = text[i]!;
  return ch !== ch.toUpperCase() && ch === ch.toLowerCase();
};

/** Whether `text` holds at least one letter or digit (a sentence worth scoring). */
function hasWordChar(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c >= 0xc0) return true;
  }
  return false;
}

/**
 * Whether the period at `dot` follows an abbreviation or a one-letter initial. Looks back over
 * at most 8 characters, so the scan stays linear.
 */
function afterAbbreviation(text: string, dot: number): boolean {
  let i = dot - 1;
  const stop = Math.max(0, dot - 8);
  while (i >= stop) {
    const c = text.charCodeAt(i);
    if (isSpace(c) || c === NEWLINE || c === 0x28) break;
    i--;
  }
  if (i < stop && stop > 0) return false;
  const word = text.slice(i + 1, dot).toLowerCase();
  if (word.length === 1 && word >= 'a' && word <= 'z') return true;
  return ABBREVIATIONS.has(word);
}

/** The sentences of `text`, in order, within `limits`. */
export function splitSentences(text: string, limits: SplitLimits): Sentence[] {
  const out: Sentence[] = [];
  let start = 0;
  let lastSpace = -1;

  const emit = (end: number): void => {
    const raw = text.slice(start, end);
    const lead = raw.length - raw.trimStart().length;
    const trimmed = raw.trim();
    if (trimmed !== '' && hasWordChar(trimmed)) out.push({ text: trimmed, start: start + lead });
  };

  for (let i = 0; i < text.length && out.length < limits.maxSentences; i++) {
    const c = text.charCodeAt(i);
    if (c === NEWLINE) {
      emit(i);
      start = i + 1;
      lastSpace = -1;
      continue;
    }
    if (isSpace(c)) lastSpace = i;
    if (i - start + 1 >= limits.maxChars) {
      // A run-on: cut at its last space, or at the cap when it has none (a skipped run of dots
      // may have carried i past it; the scan resumes at the cut).
      const cut = lastSpace > start ? lastSpace : Math.min(i + 1, start + limits.maxChars);
      emit(cut);
      start = cut;
      lastSpace = -1;
      i = cut - 1;
      continue;
    }
    if (!isTerminal(c)) continue;
    // The run of terminals and closers, bounded by the sentence cap. When it does not end the
    // sentence, none of its later terminals does either (they see the same text after the run):
    // the scan resumes after it, so that a run of n dots costs n, not n squared.
    let end = i + 1;
    const limit = Math.min(text.length, start + limits.maxChars);
    while (end < limit && (isTerminal(text.charCodeAt(end)) || isCloser(text.charCodeAt(end)))) end++;
    if (end < text.length && !isSpace(text.charCodeAt(end)) && text.charCodeAt(end) !== NEWLINE) {
      i = end - 1;
      continue;
    }
    let next = end;
    while (next < text.length && isSpace(text.charCodeAt(next))) next++;
    if (next < text.length && text.charCodeAt(next) !== NEWLINE && isLower(text, next)) {
      i = end - 1;
      continue;
    }
    if (c === 0x2e && afterAbbreviation(text, i)) continue;
    emit(end);
    start = end;
    lastSpace = -1;
    i = end - 1;
  }
  if (out.length < limits.maxSentences) emit(text.length);
  return out;
}
