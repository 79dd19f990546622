/**
 * Typo correction of a search query, independent of where the vocabulary lives. Three steps so
 * that a sharded dataset answers all words of a query in one round trip:
 *
 *   const plan = planTypoLookups(query, options);          // which words, how far (pure, core)
 *   const perShard = await Promise.all(shards.map((s) => s.answer(plan.lookups)));   // Vocabulary.answer
 *   const result = decideCorrections(plan, mergeTypoAnswers(perShard));               // pure, core
 *
 * Rules (Trieve's typo_operator, docs in /work/shared/reference/trieve-wire-format.md 5.4):
 * each distinct query word (split on whitespace, compared lowercase) is skipped when it is in
 * `disable_on_word`, has a non-alphabetic character or is likely English. A word found verbatim
 * in the dataset is never corrected; with `prioritize_domain_specifc_words` it is also quoted and
 * required. Any other word may be replaced by the best vocabulary word within its allowed
 * distance that passes {@link passesCandidateFilter}; score = (maxDistance - distance) * 1000 +
 * document count, ties to the smaller word in code-unit order.
 */
import { isLikelyEnglish } from './english.js';
import type { TypoOptions, TypoRange } from './options.js';

/** A vocabulary word near a query word (shape of the shard's `VocabularyMatch`). */
export interface TypoCandidate {
  readonly word: string;
  /** Levenshtein distance to the query word. */
  readonly distance: number;
  /** Documents containing the word. */
  readonly count: number;
}

/** One word for the vocabularies to look up (shape of the shard's `VocabularyLookup`). */
export interface TypoLookup {
  /** The query word, lowercased (vocabulary words are lowercase). */
  readonly word: string;
  /** 0: exact count only; 1 or 2: also the words within that distance. */
  readonly maxDistance: 0 | 1 | 2;
}

/** Answer to one {@link TypoLookup} (shape of the shard's `VocabularyAnswer`). */
export interface TypoAnswer {
  /** Documents containing exactly the word; 0 when absent. */
  readonly exact: number;
  /** Words at distance 1..maxDistance (distance-0 entries are ignored). */
  readonly candidates: readonly TypoCandidate[];
}

/** What {@link planTypoLookups} decided to ask; pass it back to {@link decideCorrections}. */
export interface TypoPlan {
  readonly query: string;
  readonly options: TypoOptions;
  /** Distinct words to look up, in query order; empty means nothing to ask (and nothing to correct). */
  readonly lookups: readonly TypoLookup[];
}

/** Outcome of typo correction. */
export interface TypoCorrection {
  /**
   * The query with corrected words replaced and required words wrapped in double quotes, all
   * other text (spacing included) untouched; null when that is the query unchanged.
   */
  correctedQuery: string | null;
  /** Lowercased words found verbatim in the dataset that the search must require (prioritize on). */
  requiredWords: string[];
  /** Spelling corrections made (lowercased query word -> vocabulary word), in query order. */
  corrections: { from: string; to: string }[];
}

const ALPHABETIC = /^\p{Alphabetic}+$/u;
const WHITESPACE = /\s+/;
const WHITESPACE_KEPT = /(\s+)/;

const inRange = (n: number, r: TypoRange): boolean => n >= r.min && (r.max === null || n <= r.max);

/**
 * Edits allowed for a word of `length` characters: 2 when the length is in the two-typo range
 * (it wins where the ranges overlap), else 1 when in the one-typo range, else 0.
 */
export function typoDistanceFor(length: number, options: TypoOptions): 0 | 1 | 2 {
  if (inRange(length, options.twoTypoWordRange)) return 2;
  if (inRange(length, options.oneTypoWordRange)) return 1;
  return 0;
}

/**
 * Whether `candidate` may replace `word` (both lowercase): lengths in characters differ by at most
 * 2, same first character, and the character sets A, B overlap with |A ∩ B| / max(|A|, |B|) >= 0.8.
 */
export function passesCandidateFilter(word: string, candidate: string): boolean {
  const a = Array.from(word);
  const b = Array.from(candidate);
  if (a.length === 0 || b.length === 0 || Math.abs(a.length - b.length) > 2 || a[0] !== b[0]) return false;
  const setA = new Set(a);
  const setB = new Set(b);
  let common = 0;
  for (const c of setA) if (setB.has(c)) common++;
  // Integer form of common / max >= 0.8, free of rounding.
  return common * 5 >= Math.max(setA.size, setB.size) * 4;
}

/** The distinct query words worth looking up, each with the distance it may be corrected by. */
export function planTypoLookups(query: string, options: TypoOptions): TypoPlan {
  const disabled = new Set(options.disableOnWord);
  const seen = new Set<string>();
  const lookups: TypoLookup[] = [];
  for (const token of query.split(WHITESPACE)) {
    if (token === '') continue;
    const word = token.toLowerCase();
    if (seen.has(word)) continue;
    seen.add(word);
    if (disabled.has(word) || !ALPHABETIC.test(token) || isLikelyEnglish(word)) continue;
    const maxDistance = typoDistanceFor(Array.from(word).length, options);
    // Without prioritization an exact hit changes nothing, so a word that cannot be corrected
    // needs no lookup at all.
    if (maxDistance === 0 && !options.prioritizeDomainSpecificWords) continue;
    lookups.push({ word, maxDistance });
  }
  return Object.freeze({ query, options, lookups: Object.freeze(lookups) });
}

/**
 * Merges several vocabularies' answers to the same lookups (one array per shard, each aligned
 * with the plan): exact counts add up, and so do the counts of a candidate several shards know.
 */
export function mergeTypoAnswers(perShard: readonly (readonly TypoAnswer[])[]): TypoAnswer[] {
  if (perShard.length === 1) return [...perShard[0]!];
  const n = perShard[0]?.length ?? 0;
  const merged: TypoAnswer[] = [];
  for (let i = 0; i < n; i++) {
    let exact = 0;
    const byWord = new Map<string, { word: string; distance: number; count: number }>();
    for (const answers of perShard) {
      const a = answers[i];
      if (a === undefined) throw new RangeError(`typo answers are not aligned: shard answered ${answers.length} lookups, expected ${n}`);
      exact += a.exact;
      for (const c of a.candidates) {
        const had = byWord.get(c.word);
        if (had === undefined) byWord.set(c.word, { word: c.word, distance: c.distance, count: c.count });
        else had.count += c.count;
      }
    }
    const candidates = [...byWord.values()].sort((x, y) => x.distance - y.distance || (x.word < y.word ? -1 : x.word > y.word ? 1 : 0));
    merged.push({ exact, candidates });
  }
  return merged;
}

/** Applies the rules to the (merged) answers of `plan.lookups`, aligned by index. */
export function decideCorrections(plan: TypoPlan, answers: readonly TypoAnswer[]): TypoCorrection {
  if (answers.length !== plan.lookups.length) {
    throw new RangeError(`decideCorrections got ${answers.length} answers for ${plan.lookups.length} lookups`);
  }
  const replace = new Map<string, string>();
  const quote = new Set<string>();
  const requiredWords: string[] = [];
  const corrections: { from: string; to: string }[] = [];
  plan.lookups.forEach(({ word, maxDistance }, i) => {
    const answer = answers[i]!;
    if (answer.exact > 0) {
      // A word the dataset contains is never "corrected", prioritized or not.
      if (plan.options.prioritizeDomainSpecificWords) {
        quote.add(word);
        requiredWords.push(word);
      }
      return;
    }
    let best: TypoCandidate | undefined;
    let bestScore = -Infinity;
    for (const c of answer.candidates) {
      if (c.distance < 1 || c.distance > maxDistance || c.word === word || !passesCandidateFilter(word, c.word)) continue;
      const score = (maxDistance - c.distance) * 1000 + c.count;
      if (score > bestScore || (score === bestScore && best !== undefined && c.word < best.word)) {
        best = c;
        bestScore = score;
      }
    }
    if (best !== undefined) {
      replace.set(word, best.word);
      corrections.push({ from: word, to: best.word });
    }
  });
  if (replace.size === 0 && quote.size === 0) return { correctedQuery: null, requiredWords, corrections };
  // Whole tokens only (the reference's substring replace could also hit inside other words).
  const parts = plan.query.split(WHITESPACE_KEPT);
  for (let i = 0; i < parts.length; i += 2) {
    const token = parts[i]!;
    if (token === '' || !ALPHABETIC.test(token)) continue;
    const word = token.toLowerCase();
    const to = replace.get(word);
    if (to !== undefined) parts[i] = to;
    else if (quote.has(word)) parts[i] = `"${token}"`;
  }
  const correctedQuery = parts.join('');
  return { correctedQuery: correctedQuery === plan.query ? null : correctedQuery, requiredWords, corrections };
}

/**
 * Plans, looks up and decides in one call, for a vocabulary answering synchronously (one shard,
 * tests). `lookup` receives each planned word once.
 */
export function correctQuery(query: string, options: TypoOptions, lookup: (word: string, maxDistance: 0 | 1 | 2) => TypoAnswer): TypoCorrection {
  const plan = planTypoLookups(query, options);
  return decideCorrections(
    plan,
    plan.lookups.map((l) => lookup(l.word, l.maxDistance)),
  );
}
