/**
 * Character classes and case folding shared by the highlight algorithms. Folding must keep every
 * string's length so that an offset found in folded text is the same offset in the original.
 */

/** A text range [start, end) in UTF-16 units. */
export interface Range {
  readonly start: number;
  readonly end: number;
}

/** Whether the UTF-16 unit is whitespace (the set of JavaScript's `\s`). */
export function isSpace(c: number): boolean {
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13);
  if (c < 160) return false;
  return (
    c === 160 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 ||
    c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff
  );
}

const WORD = /[\p{L}\p{N}\p{M}]/u;

/** Whether the code point is part of a word (letter, digit or combining mark). */
export function isWordCodePoint(cp: number): boolean {
  if (cp < 128) return (cp >= 48 && cp <= 57) || (cp >= 65 && cp <= 90) || (cp >= 97 && cp <= 122);
  return WORD.test(String.fromCodePoint(cp));
}

/** Whether the character ending just before `i` is a word character (false at the start). */
export function wordCharBefore(s: string, i: number): boolean {
  if (i <= 0) return false;
  const c = s.charCodeAt(i - 1);
  // A low surrogate belongs to the astral character starting one unit earlier.
  if (c >= 0xdc00 && c <= 0xdfff && i >= 2) return isWordCodePoint(s.codePointAt(i - 2)!);
  return isWordCodePoint(c);
}

/** Whether the character starting at `i` is a word character (false at the end). */
export function wordCharAt(s: string, i: number): boolean {
  return i < s.length && isWordCodePoint(s.codePointAt(i)!);
}

/**
 * Lowercase with the length kept: a character whose lowercase form has another length (`İ`)
 * stays as it is, so folded offsets equal original offsets.
 */
export function foldCase(s: string): string {
  const lower = s.toLowerCase();
  // Lowercasing never shortens a character, so equal total length means every character kept its length.
  if (lower.length === s.length) return lower;
  let out = '';
  for (const ch of s) {
    const l = ch.toLowerCase();
    out += l.length === ch.length ? l : ch;
  }
  return out;
}

/** The text with each whitespace run turned into one space and the ends trimmed. */
export function collapseSpace(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}
