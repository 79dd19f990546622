/**
 * `typo_options` of a search request, checked once and resolved against the defaults. The wire
 * names are Trieve's, including its misspelled `prioritize_domain_specifc_words`.
 */
import { badRequest } from '../domain/errors.js';
import { LIMITS } from '../domain/limits.js';

/** Word lengths (in characters) a number of typos applies to; `max` null = no upper bound. */
export interface TypoRange {
  readonly min: number;
  readonly max: number | null;
}

/** Resolved typo options of a request that asked for correction. */
export interface TypoOptions {
  /** Lengths whose words may be corrected by 1 edit. @defaultValue { min: 5, max: 8 } */
  readonly oneTypoWordRange: TypoRange;
  /** Lengths whose words may be corrected by up to 2 edits; wins where it overlaps the one-typo range. @defaultValue { min: 5, max: 8 } */
  readonly twoTypoWordRange: TypoRange;
  /** Words never corrected, lowercased (matching is case-insensitive). @defaultValue [] */
  readonly disableOnWord: readonly string[];
  /** Whether a query word found verbatim in the dataset is quoted and required. @defaultValue true */
  readonly prioritizeDomainSpecificWords: boolean;
}

/** Defaults of every typo option (the product spec's, decided). */
export const DEFAULT_TYPO_OPTIONS: TypoOptions = Object.freeze({
  oneTypoWordRange: Object.freeze({ min: 5, max: 8 }),
  twoTypoWordRange: Object.freeze({ min: 5, max: 8 }),
  disableOnWord: Object.freeze([]),
  prioritizeDomainSpecificWords: true,
});

const U32_MAX = 0xffffffff;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Absent and JSON null both mean "not given", as with Trieve's optional fields. */
const given = (v: unknown): boolean => v !== undefined && v !== null;

function bool(v: unknown, field: string, fallback: boolean): boolean {
  if (!given(v)) return fallback;
  if (typeof v !== 'boolean') throw badRequest(`typo_options.${field} must be a boolean`);
  return v;
}

function count(v: unknown, field: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > U32_MAX) {
    throw badRequest(`typo_options.${field} must be a non-negative integer`);
  }
  return v;
}

function range(v: unknown, field: string, fallback: TypoRange): TypoRange {
  if (!given(v)) return fallback;
  if (!isObject(v)) throw badRequest(`typo_options.${field} must be an object {min, max?}`);
  if (!given(v.min)) throw badRequest(`typo_options.${field}.min is required`);
  const min = count(v.min, `${field}.min`);
  // A range that is sent without max has no upper bound (Trieve's `max: Option<u32>`).
  const max = given(v.max) ? count(v.max, `${field}.max`) : null;
  if (max !== null && min > max) throw badRequest(`typo_options.${field}: min (${min}) must not exceed max (${max})`);
  return Object.freeze({ min, max });
}

function words(v: unknown, field: string): readonly string[] {
  if (!given(v)) return DEFAULT_TYPO_OPTIONS.disableOnWord;
  if (!Array.isArray(v) || !v.every((w) => typeof w === 'string')) throw badRequest(`typo_options.${field} must be an array of strings`);
  if (v.length > LIMITS.typoDisabledWords) throw badRequest(`typo_options.${field}: at most ${LIMITS.typoDisabledWords} words allowed, got ${v.length}`);
  if (v.some((w: string) => w.length > LIMITS.typoWordLength)) throw badRequest(`typo_options.${field}: each word must be at most ${LIMITS.typoWordLength} characters long`);
  return Object.freeze((v).map((w) => w.toLowerCase()));
}

/**
 * Validates the `typo_options` value of a request body (pass `body.typo_options`, not the body).
 * Returns null when it is absent or `correct_typos` is not true; every field is validated either
 * way, so a malformed value is a 400 even when correction is off. Throws `badRequest` naming the
 * offending field.
 */
export function resolveTypoOptions(raw: unknown): TypoOptions | null {
  if (!given(raw)) return null;
  if (!isObject(raw)) throw badRequest('typo_options must be an object');
  const correct = bool(raw.correct_typos, 'correct_typos', false);
  const options: TypoOptions = Object.freeze({
    oneTypoWordRange: range(raw.one_typo_word_range, 'one_typo_word_range', DEFAULT_TYPO_OPTIONS.oneTypoWordRange),
    twoTypoWordRange: range(raw.two_typo_word_range, 'two_typo_word_range', DEFAULT_TYPO_OPTIONS.twoTypoWordRange),
    disableOnWord: words(raw.disable_on_word, 'disable_on_word'),
    prioritizeDomainSpecificWords: bool(raw.prioritize_domain_specifc_words, 'prioritize_domain_specifc_words', true),
  });
  return correct ? options : null;
}
