/**
 * Search-result highlighting (`highlight_options`): tags the query's best matches in a chunk's
 * html and returns them as strings. Pure and synchronous; the caller decides when it runs (not
 * for slim_chunks or multi-query searches) and resolves options with resolveHighlightOptions.
 *
 * Flow: html -> visible text with an offset map (text-map.ts); `exactmatch` looks for query
 * phrases (exactmatch.ts) and, when none occurs and the threshold is below 1, falls back to the
 * fuzzy `v1` windows (v1.ts); the chosen text ranges are tagged in the html (apply-tags.ts) and
 * returned plain or with context words (context-window.ts).
 */
import { applyTags } from './apply-tags.js';
import { collapseSpace, foldCase, type Range } from './chars.js';
import { windowedHighlights } from './context-window.js';
import { exactMatch } from './exactmatch.js';
import type { HighlightOptions } from './options.js';
import { buildTextMap, isBlockBreak } from './text-map.js';
import { v1Windows } from './v1.js';

export { DEFAULT_HIGHLIGHT_OPTIONS, resolveHighlightOptions, type HighlightOptions, type HighlightStrategy } from './options.js';

/** Queries with more words than this get no highlights (reference HIGHLIGHT_QUERY_MAX_WORD_LENGTH). */
export const HIGHLIGHT_QUERY_MAX_WORDS = 20;

/** A highlighted chunk. */
export interface HighlightResult {
  /** chunk_html with the tags inserted (unchanged when nothing matched). */
  readonly html: string;
  /** The highlighted texts (with context and inner tags when a window is set). */
  readonly highlights: string[];
}

/** Sorts ranges and merges overlapping ones, so tags never nest. */
function mergeRanges(ranges: Range[]): Range[] {
  ranges.sort((a, b) => a.start - b.start || a.end - b.end);
  const out: Range[] = [];
  for (const r of ranges) {
    const last = out[out.length - 1];
    if (last !== undefined && r.start < last.end) {
      if (r.end > last.end) out[out.length - 1] = { start: last.start, end: r.end };
    } else {
      out.push(r);
    }
  }
  return out;
}

/** Delimiter code points: every character of every delimiter string. */
function delimiterSet(delimiters: readonly string[]): Set<number> {
  const set = new Set<number>();
  for (const d of delimiters) for (const ch of d) set.add(ch.codePointAt(0)!);
  return set;
}

/** Highlights the query in one chunk's html (see the module comment and options.ts). */
export function highlightChunk(chunkHtml: string, query: string, options: HighlightOptions): HighlightResult {
  const words = query.split(/\s+/).filter((w) => w !== '');
  if (words.length === 0 || words.length > HIGHLIGHT_QUERY_MAX_WORDS || options.maxNum === 0 || chunkHtml === '') {
    return { html: chunkHtml, highlights: [] };
  }
  const map = buildTextMap(chunkHtml);
  const folded = foldCase(map.text);
  const delimiters = delimiterSet(options.delimiters);
  const isBreak = (i: number): boolean => isBlockBreak(map, i);
  const { maxNum, window, preTag, postTag } = options;
  const finish = (tagged: Range[], plain: string[]): HighlightResult => ({
    html: applyTags(chunkHtml, map, tagged, preTag, postTag),
    highlights: window > 0 ? windowedHighlights(map.text, tagged, window, maxNum, preTag, postTag) : plain,
  });

  if (options.strategy === 'exactmatch') {
    const accepted = exactMatch(folded, query, delimiters, maxNum, isBreak);
    if (accepted.length > 0) {
      // Highlights: up to maxNum occurrences per phrase, distinct texts (case variants differ).
      const plain: string[] = [];
      for (const p of accepted) {
        for (const o of p.occurrences.slice(0, maxNum)) {
          const s = collapseSpace(map.text.slice(o.start, o.end));
          if (plain.length < maxNum && !plain.includes(s)) plain.push(s);
        }
      }
      // Tags: every occurrence of every accepted phrase.
      return finish(mergeRanges(accepted.flatMap((p) => [...p.occurrences])), plain);
    }
    if (options.threshold >= 1) return { html: chunkHtml, highlights: [] };
  }

  const windows = v1Windows(folded, query, { delimiters, maxLength: options.maxLength, maxNum, threshold: options.threshold, isBreak });
  if (windows.length === 0) return { html: chunkHtml, highlights: [] };
  return finish(windows, windows.map((w) => collapseSpace(map.text.slice(w.start, w.end))));
}
