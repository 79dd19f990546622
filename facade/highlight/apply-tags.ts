/**
 * Puts pre/post tags around text ranges in the original html. A range is tagged piecewise, once
 * per stretch of html that holds its text without any markup in between, so `foo <i>bar</i>`
 * becomes `<m>foo</m> <i><m>bar</m></i>` and the result stays well-formed whatever the elements.
 * Tags go only between characters of text nodes (never inside a tag, attribute or entity);
 * everything else is copied byte for byte. Whitespace at the ends of a stretch is left outside
 * the tags, so a stretch of whitespace alone (between two paragraphs) gets none.
 */
import { isSpace, type Range } from './chars.js';
import type { TextMap } from './text-map.js';

/**
 * The html with `pre`/`post` around each range.
 * @param ranges text ranges (in map.text), sorted and non-overlapping
 */
export function applyTags(html: string, map: TextMap, ranges: readonly Range[], pre: string, post: string): string {
  if (ranges.length === 0) return html;
  const { text } = map;
  // Identity map (plain text): html offset = text offset, every range is one stretch.
  const start = (i: number): number => (map.start === null ? i : map.start[i]!);
  const end = (i: number): number => (map.end === null ? i + 1 : map.end[i]!);
  const out: string[] = [];
  let copied = 0;
  const tag = (from: number, to: number): void => {
    // Trim whitespace at the stretch's ends (in text units), then wrap what is left.
    while (from < to && isSpace(text.charCodeAt(from))) from++;
    while (to > from && isSpace(text.charCodeAt(to - 1))) to--;
    if (from >= to) return;
    const a = start(from);
    const b = end(to - 1);
    out.push(html.slice(copied, a), pre, html.slice(a, b), post);
    copied = b;
  };
  for (const r of ranges) {
    let from = -1;
    for (let i = r.start; i < r.end; i++) {
      if (start(i) < 0) {
        // A block tag's line break: no html text behind it, so the stretch ends here.
        if (from >= 0) tag(from, i);
        from = -1;
        continue;
      }
      if (from < 0) {
        from = i;
      } else if (start(i) !== end(i - 1) && start(i) !== start(i - 1)) {
        // Markup between text[i-1] and text[i] (both units of one entity share a start).
        tag(from, i);
        from = i;
      }
    }
    if (from >= 0) tag(from, r.end);
  }
  out.push(html.slice(copied));
  return out.join('');
}
