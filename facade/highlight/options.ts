/**
 * Highlight options: the typed, defaulted form of the wire's `highlight_options` (or of the
 * legacy flat `highlight_*` body keys), validated once here so the algorithms only assert.
 */
import { badRequest } from '../../core/domain/errors.js';
import { LIMITS } from '../../core/domain/limits.js';

/** How phrases are chosen: exact query phrases first, or fuzzy-matched text windows. */
export type HighlightStrategy = 'exactmatch' | 'v1';

/** Resolved highlight options (all defaults applied). */
export interface HighlightOptions {
  /**
   * Phrase selection method.
   * @defaultValue `'exactmatch'`
   */
  readonly strategy: HighlightStrategy;
  /**
   * Minimum Jaro-Winkler similarity (0..1) for a query word to match a text word in `v1`; at 1.0
   * exactmatch does not fall back to `v1`.
   * @defaultValue 0.8
   */
  readonly threshold: number;
  /**
   * Characters that end a text piece in `v1` and are removed from the query by exactmatch
   * (every character of every string counts).
   * @defaultValue `['?', ',', '.', '!']`
   */
  readonly delimiters: readonly string[];
  /**
   * Most words in one `v1` window; 0 means a window is a whole delimiter piece.
   * @defaultValue 8
   */
  readonly maxLength: number;
  /**
   * Most highlights per chunk (and most phrases / occurrences considered per phrase).
   * @defaultValue 3
   */
  readonly maxNum: number;
  /**
   * Words of context returned around each highlight (window/2 on each side, at least 1); 0 = none.
   * @defaultValue 0
   */
  readonly window: number;
  /**
   * Inserted before each highlighted run.
   * @defaultValue `'<mark><b>'`
   */
  readonly preTag: string;
  /**
   * Inserted after each highlighted run (the spec table's `</mark></b>` is a typo: tags nest).
   * @defaultValue `'</b></mark>'`
   */
  readonly postTag: string;
}

/** The defaults of every option, in one place. */
export const DEFAULT_HIGHLIGHT_OPTIONS: HighlightOptions = Object.freeze({
  strategy: 'exactmatch',
  threshold: 0.8,
  delimiters: Object.freeze(['?', ',', '.', '!']),
  maxLength: 8,
  maxNum: 3,
  window: 0,
  preTag: '<mark><b>',
  postTag: '</b></mark>',
});

/** Legacy flat body keys folded into the options when `highlight_options` is absent. */
const FLAT_KEYS = [
  'highlight_results',
  'highlight_strategy',
  'highlight_threshold',
  'highlight_delimiters',
  'highlight_max_length',
  'highlight_max_num',
  'highlight_window',
] as const;

/** Largest integer accepted (the reference stores these as u32). */
const MAX_U32 = 4_294_967_295;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads one field; `null` and absent both mean "use the default", as serde's Option does. */
function field(src: Record<string, unknown>, key: string): unknown {
  const v = src[key];
  return v === null ? undefined : v;
}

function bool(src: Record<string, unknown>, key: string, name: string): boolean | undefined {
  const v = field(src, key);
  if (v === undefined || typeof v === 'boolean') return v;
  throw badRequest(`${name} must be a boolean`);
}

function str(src: Record<string, unknown>, key: string, name: string, max: number): string | undefined {
  const v = field(src, key);
  if (typeof v === 'string' && v.length > max) throw badRequest(`${name} must be at most ${max} characters long, got ${v.length}`);
  if (v === undefined || typeof v === 'string') return v;
  throw badRequest(`${name} must be a string`);
}

function uint(src: Record<string, unknown>, key: string, name: string): number | undefined {
  const v = field(src, key);
  if (v === undefined) return undefined;
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_U32) return v;
  throw badRequest(`${name} must be an integer >= 0`);
}

/** Validates every option (also when highlighting is off, so a bad request never passes). */
function parse(src: Record<string, unknown>, prefix: string): HighlightOptions | null {
  const name = (k: string): string => prefix + k;
  const results = bool(src, 'highlight_results', name('highlight_results'));
  const options = validate(src, name);
  return results === false ? null : options;
}

/** Checks and defaults every option but highlight_results. */
function validate(src: Record<string, unknown>, name: (k: string) => string): HighlightOptions {
  const d = DEFAULT_HIGHLIGHT_OPTIONS;
  const strategy = field(src, 'highlight_strategy');
  if (strategy !== undefined && strategy !== 'exactmatch' && strategy !== 'v1') {
    throw badRequest(`${name('highlight_strategy')} must be one of exactmatch, v1`);
  }
  const threshold = field(src, 'highlight_threshold');
  if (threshold !== undefined && !(typeof threshold === 'number' && threshold >= 0 && threshold <= 1)) {
    throw badRequest(`${name('highlight_threshold')} must be a number between 0 and 1`);
  }
  const delimiters = field(src, 'highlight_delimiters');
  if (delimiters !== undefined && !(Array.isArray(delimiters) && delimiters.every((x) => typeof x === 'string'))) {
    throw badRequest(`${name('highlight_delimiters')} must be an array of strings`);
  }
  if (Array.isArray(delimiters) && delimiters.length > LIMITS.highlightDelimiters) {
    throw badRequest(`${name('highlight_delimiters')}: at most ${LIMITS.highlightDelimiters} delimiters allowed, got ${delimiters.length}`);
  }
  if (Array.isArray(delimiters) && delimiters.some((x: string) => x.length > LIMITS.highlightDelimiterLength)) {
    throw badRequest(`${name('highlight_delimiters')}: each delimiter must be at most ${LIMITS.highlightDelimiterLength} characters long`);
  }
  return {
    strategy: (strategy) ?? d.strategy,
    threshold: (threshold) ?? d.threshold,
    delimiters: (delimiters) ?? d.delimiters,
    maxLength: uint(src, 'highlight_max_length', name('highlight_max_length')) ?? d.maxLength,
    maxNum: uint(src, 'highlight_max_num', name('highlight_max_num')) ?? d.maxNum,
    window: uint(src, 'highlight_window', name('highlight_window')) ?? d.window,
    preTag: str(src, 'pre_tag', name('pre_tag'), LIMITS.highlightTagLength) ?? d.preTag,
    postTag: str(src, 'post_tag', name('post_tag'), LIMITS.highlightTagLength) ?? d.postTag,
  };
}

/**
 * Highlight options of a search body, or null when highlighting must not run: neither
 * `highlight_options` nor any legacy flat key was sent, or `highlight_results` is false. The flat
 * keys (not `pre_tag`/`post_tag`) count only when `highlight_options` is absent. Throws
 * `badRequest` naming the field on a wrong type, a threshold outside 0..1, a negative or
 * fractional integer, or an unknown strategy.
 */
export function resolveHighlightOptions(body: Record<string, unknown>): HighlightOptions | null {
  const nested = field(body, 'highlight_options');
  if (nested !== undefined) {
    if (!isObject(nested)) throw badRequest('highlight_options must be an object');
    return parse(nested, 'highlight_options.');
  }
  if (!FLAT_KEYS.some((k) => field(body, k) !== undefined)) return null;
  const flat: Record<string, unknown> = {};
  for (const k of FLAT_KEYS) flat[k] = body[k];
  return parse(flat, '');
}
