/**
 * Autocomplete's completions of the word being typed: found per shard, merged by the core, and
 * searched as extra query words. Shared by the shard thread and the core (pure functions).
 */
import type { TermStatsReply } from './protocol.js';

/** Completions of a word being typed that an autocomplete query also searches for. */
export const MAX_COMPLETIONS = 64;

/** The lowercased last word of a query still being typed (no whitespace after it), else null. */
export function lastWordBeingTyped(text: string): string | null {
  const m = /([\p{L}\p{N}\p{M}]+)$/u.exec(text.normalize('NFKC').toLowerCase());
  return m ? m[1]! : null;
}

/** Stats whose terms include the completions (each completion is one more query word). */
export function withCompletions(s: TermStatsReply): TermStatsReply {
  if (!s.completions || s.completions.length === 0) return s;
  const extra = s.completions.filter((c) => !s.terms.includes(c));
  const dfs = extra.map((c) => s.completionDocFreqs![s.completions!.indexOf(c)]!);
  return { ...s, terms: [...s.terms, ...extra], docFreqs: [...s.docFreqs, ...dfs] };
}
