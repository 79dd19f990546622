/**
 * "Likely English" check of typo correction: a word that is English (or an English word with a
 * common prefix or suffix, or a hyphenation of English words) is never corrected. The dictionary
 * is the `word-list` package's 274k lowercase words (atebits/Words en.txt, MIT), read from its
 * text file on first use only, so processes that never correct typos never pay its ~15 MB.
 */
import { readFileSync } from 'node:fs';
import wordListPath from 'word-list';

/** Prefixes stripped before a second dictionary check. */
export const ENGLISH_PREFIXES: readonly string[] = Object.freeze([
  'anti', 'auto', 'de', 'dis', 'down', 'extra', 'hyper', 'il', 'im', 'in', 'ir', 'inter', 'mega', 'mid', 'mis', 'non', 'over',
  'out', 'post', 'pre', 'pro', 're', 'semi', 'sub', 'super', 'tele', 'trans', 'ultra', 'un', 'under', 'up',
]);

/** Suffixes stripped before a second dictionary check. */
export const ENGLISH_SUFFIXES: readonly string[] = Object.freeze([
  'able', 'al', 'ance', 'ation', 'ence', 'er', 'es', 'est', 'ful', 'ible', 'ic', 'ing', 'ion', 'ish', 'ism', 'ist', 'ity', 'ive',
  'less', 'ly', 'ment', 'ness', 'ous', 's', 'y', 'ed', 'ies',
]);

let dictionary: ReadonlySet<string> | undefined;

/**
 * The dictionary, loaded on first use (~140 ms and ~21 MB): by the first typo-corrected search,
 * so that cores whose datasets never correct typos do not pay for it.
 */
export function loadEnglishDictionary(): ReadonlySet<string> {
  if (dictionary === undefined) {
    const words = new Set<string>();
    for (const line of readFileSync(wordListPath, 'utf8').split('\n')) {
      const w = line.trim().toLowerCase();
      if (w !== '') words.add(w);
    }
    dictionary = words;
  }
  return dictionary;
}

/**
 * Whether `word` is likely English: in the dictionary (case-insensitive); or in it once one known
 * prefix or one known suffix is stripped (any that matches, leaving a non-empty rest); or made of
 * hyphen-separated parts that are all in it.
 */
export function isLikelyEnglish(word: string): boolean {
  const dict = loadEnglishDictionary();
  const w = word.toLowerCase();
  if (w === '') return false;
  if (dict.has(w)) return true;
  for (const p of ENGLISH_PREFIXES) {
    if (w.length > p.length && w.startsWith(p) && dict.has(w.slice(p.length))) return true;
  }
  for (const s of ENGLISH_SUFFIXES) {
    if (w.length > s.length && w.endsWith(s) && dict.has(w.slice(0, w.length - s.length))) return true;
  }
  if (w.includes('-')) return w.split('-').every((part) => dict.has(part));
  return false;
}
