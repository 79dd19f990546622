/**
 * A token estimate for providers that report no usage (and for the extractive answerer): one
 * token per started 8 characters of a word, one per punctuation or symbol character, none for
 * whitespace. Close to BPE tokenizers on English prose (they split rare long words and every
 * punctuation mark) without shipping a vocabulary.
 */

/** Characters of a word counted as one token at most. */
const WORD_CHARS_PER_TOKEN = 8;

/** Whether the UTF-16 unit `c` belongs to a word (letters, digits, marks, any non-ASCII unit). */
function isWordUnit(c: number): boolean {
  if (c >= 0x80) return true;
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
}

/** Whether `c` is ASCII whitespace or a control character. */
function isSpaceUnit(c: number): boolean {
  return c <= 0x20 || c === 0x7f;
}

/** Estimated tokens of `text`, in one pass. */
export function countTokens(text: string): number {
  let tokens = 0;
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (isWordUnit(c)) {
      if (run % WORD_CHARS_PER_TOKEN === 0) tokens++;
      run++;
      continue;
    }
    run = 0;
    if (!isSpaceUnit(c)) tokens++;
  }
  return tokens;
}
