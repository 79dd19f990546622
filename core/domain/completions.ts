/**
 * Autocomplete's completions of the word being typed: the word is found by the HTTP API and the
 * shards, its completions listed per shard, merged by the core, and searched as extra query words.
 */

/** Completions of a word being typed that an autocomplete query also searches for. */
export const MAX_COMPLETIONS = 64;

/** The lowercased last word of a query still being typed (no whitespace after it), else null. */
export function lastWordBeingTyped(text: string): string | null {
  const m = /([\p{L}\p{N}\p{M}]+)$/u.exec(text.normalize('NFKC').toLowerCase());
  return m ? m[1]! : null;
}

/** Query statistics as a shard reports them, with the completions it found. */
interface StatsWithCompletions {
  readonly terms: string[];
  readonly docFreqs: number[];
  readonly completions?: string[];
  readonly completionDocFreqs?: number[];
}

/** Stats whose terms include the completions (each completion is one more query word). */
export function withCompletions<S extends StatsWithCompletions>(s: S): S {
  if (!s.completions || s.completions.length === 0) return s;
  const extra = s.completions.filter((c) => !s.terms.includes(c));
  const dfs = extra.map((c) => s.completionDocFreqs![s.completions!.indexOf(c)]!);
  return { ...s, terms: [...s.terms, ...extra], docFreqs: [...s.docFreqs, ...dfs] };
}
