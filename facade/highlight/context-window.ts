/**
 * `highlight_window`: highlights returned with words of context. Each highlighted range grows by
 * half = max(window/2, 1) words on each side; at a text edge the missing words are taken from the
 * other side, so a highlight gets 2*half words of context when the text has them (as in the
 * reference). Grown ranges that overlap merge, so a word is returned once. Each entry is the
 * context text (whitespace runs shown as one space) with the highlighted ranges inside tagged.
 */
import { isSpace, type Range } from './chars.js';

/** Word (maximal non-whitespace run) boundaries of a text. */
function wordBounds(text: string): { starts: number[]; ends: number[] } {
  const starts: number[] = [];
  const ends: number[] = [];
  let i = 0;
  while (i < text.length) {
    while (i < text.length && isSpace(text.charCodeAt(i))) i++;
    if (i >= text.length) break;
    starts.push(i);
    while (i < text.length && !isSpace(text.charCodeAt(i))) i++;
    ends.push(i);
  }
  return { starts, ends };
}

/** Index of the first word ending after `pos` (ends is ascending). */
function firstEndingAfter(ends: readonly number[], pos: number): number {
  let lo = 0;
  let hi = ends.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ends[mid]! > pos) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * The windowed highlight strings, in text order, at most `maxNum`.
 * @param cores highlighted ranges, sorted and non-overlapping
 */
export function windowedHighlights(
  text: string,
  cores: readonly Range[],
  window: number,
  maxNum: number,
  preTag: string,
  postTag: string,
): string[] {
  const { starts, ends } = wordBounds(text);
  const half = Math.max(Math.floor(window / 2), 1);
  const groups: { start: number; end: number; cores: Range[] }[] = [];
  for (const c of cores) {
    const first = firstEndingAfter(ends, c.start);
    const last = Math.max(first, firstEndingAfter(ends, c.end - 1));
    const roomBefore = first;
    const roomAfter = ends.length - 1 - last;
    // Words missing on one side (at a text edge) are taken from the other.
    const before = Math.min(roomBefore, half + Math.max(0, half - roomAfter));
    const after = Math.min(roomAfter, half + Math.max(0, half - roomBefore));
    const start = Math.min(c.start, starts[first - before] ?? c.start);
    const end = Math.max(c.end, ends[last + after] ?? c.end);
    const prev = groups[groups.length - 1];
    if (prev !== undefined && start < prev.end) {
      prev.end = Math.max(prev.end, end);
      prev.cores.push(c);
    } else {
      if (groups.length === maxNum) break;
      groups.push({ start, end, cores: [c] });
    }
  }
  // Whitespace is collapsed in the text slices only, never inside the caller's tags; groups start
  // and end on word boundaries, so nothing needs trimming.
  const flat = (from: number, to: number): string => text.slice(from, to).replace(/\s+/g, ' ');
  return groups.map((g) => {
    let out = '';
    let at = g.start;
    for (const c of g.cores) {
      out += flat(at, c.start) + preTag + flat(c.start, c.end) + postTag;
      at = c.end;
    }
    return out + flat(at, g.end);
  });
}
