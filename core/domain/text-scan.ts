/**
 * Linear-time building blocks for scanning untrusted text (HTML, scopes). Every search here
 * remembers its last answer, so a document full of unterminated openers (`<a<a<a...`, `<script`
 * without a close) costs one pass, not one pass per opener: the regexes these replace rescanned
 * the rest of the text for every opener, which made a 200 KB chunk take tens of seconds.
 */

/** Whether a UTF-16 unit is one JavaScript's regex `\s` matches. */
export function isRegexSpace(c: number): boolean {
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** Whether a UTF-16 unit is an ASCII word character (what regex `\b` looks at without the `u` flag). */
export function isWordChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}

/** Whether a UTF-16 unit is an ASCII letter. */
export function isAsciiLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/** Whether `text` has `word` (lowercase ASCII) at `at`, compared case-insensitively. */
export function startsWithIgnoreCase(text: string, word: string, at: number): boolean {
  if (at + word.length > text.length) return false;
  for (let k = 0; k < word.length; k++) {
    // ASCII lower-casing: `| 32` maps A-Z onto a-z and leaves a-z alone; other units must be equal.
    const c = text.charCodeAt(at + k);
    const w = word.charCodeAt(k);
    if (c !== w && !(c >= 65 && c <= 90 && (c | 32) === w)) return false;
  }
  return true;
}

/**
 * `text.indexOf(needle, from)` for queries whose `from` never decreases: an answer at or after
 * the new `from` is reused, and "not found" stays not found, so the text is read once overall.
 */
export class ForwardIndexOf {
  private from = -1;
  private at = -1;

  /** A finder of `needle` in `text`. */
  constructor(
    private readonly text: string,
    private readonly needle: string,
  ) {}

  /** First index of the needle at or after `from` (which must not decrease between calls), or -1. */
  find(from: number): number {
    if (this.from >= 0 && from >= this.from && (this.at < 0 || this.at >= from)) return this.at;
    this.from = from;
    this.at = this.text.indexOf(this.needle, from);
    return this.at;
  }
}

/** Where a closing tag was found: `start` at its `<`, `end` just past its `>`. */
export interface CloseTag {
  readonly start: number;
  readonly end: number;
}

/**
 * Finds `</name\s*>` (name compared case-insensitively) for queries whose `from` never decreases,
 * remembering the last answer per name: what `<\/name\s*>` found from the same position.
 */
export class CloseTagFinder {
  private readonly memo = new Map<string, { from: number; close: CloseTag | null }>();
  private readonly slash: ForwardIndexOf;

  /** A finder over `text`. */
  constructor(private readonly text: string) {
    this.slash = new ForwardIndexOf(text, '</');
  }

  /** The first `</name\s*>` starting at or after `from` (non-decreasing per name), or null. */
  find(name: string, from: number): CloseTag | null {
    const m = this.memo.get(name);
    if (m && from >= m.from && (m.close === null || m.close.start >= from)) return m.close;
    const close = this.scan(name, from);
    this.memo.set(name, { from, close });
    return close;
  }

  private scan(name: string, from: number): CloseTag | null {
    const text = this.text;
    let at = from;
    for (;;) {
      // A fresh indexOf: the shared ForwardIndexOf serves increasing positions only.
      const lt = at === from ? this.slash.find(from) : text.indexOf('</', at);
      if (lt < 0) return null;
      if (startsWithIgnoreCase(text, name, lt + 2)) {
        let k = lt + 2 + name.length;
        while (k < text.length && isRegexSpace(text.charCodeAt(k))) k++;
        if (text.charCodeAt(k) === 62 /* > */) return { start: lt, end: k + 1 };
      }
      at = lt + 1;
    }
  }
}
