import { describe, expect, it } from 'vitest';
import {
  correctQuery,
  decideCorrections,
  mergeTypoAnswers,
  passesCandidateFilter,
  planTypoLookups,
  typoDistanceFor,
  type TypoAnswer,
} from '../../core/typo/correct.js';
import { isLikelyEnglish } from '../../core/typo/english.js';
import { DEFAULT_TYPO_OPTIONS, resolveTypoOptions, type TypoOptions } from '../../core/typo/options.js';
import { QuarryError } from '../../core/domain/errors.js';
import { Vocabulary } from '../../workers/shard/typo/vocabulary.js';

/** A vocabulary where `word` occurs in `docs` documents. */
function vocabularyOf(counts: Record<string, number>): Vocabulary {
  const v = new Vocabulary();
  for (const [word, docs] of Object.entries(counts)) for (let i = 0; i < docs; i++) v.add([word]);
  return v;
}

/** The single-shard path: plan, one batched answer, decide. */
function correct(query: string, counts: Record<string, number>, raw: Record<string, unknown> = {}) {
  const options = resolveTypoOptions({ correct_typos: true, ...raw })!;
  const v = vocabularyOf(counts);
  const plan = planTypoLookups(query, options);
  return decideCorrections(plan, v.answer(plan.lookups));
}

// Domain words are not English (the dictionary is checked in its own test below).
const DATASET = { grafana: 40, pytorch: 25, dashboard: 12, nginx: 9, kubernetes: 30, zorbax: 3, zorbix: 3 };

describe('typo correction', () => {
  it('corrects a misspelled dataset word and keeps the rest of the text', () => {
    expect(correct('how to  deploy Grafna\tdashboards ', DATASET)).toEqual({
      correctedQuery: 'how to  deploy grafana\tdashboards ',
      requiredWords: [],
      corrections: [{ from: 'grafna', to: 'grafana' }],
    });
    expect(correct('dashbord', DATASET).correctedQuery).toBe('dashboard');
  });

  it('corrects two typos when the length allows two', () => {
    // 'pytroch' -> 'pytorch' is a transposition: 2 Levenshtein edits.
    expect(correct('pytroch tutorial', DATASET).correctedQuery).toBe('pytorch tutorial');
    const oneOnly = { two_typo_word_range: { min: 20 } };
    expect(correct('pytroch grafna', DATASET, oneOnly).correctedQuery).toBe('pytroch grafana');
  });

  it('leaves likely-English words alone even when a dataset word is one edit away', () => {
    expect(correct('hello', { hellow: 100 })).toEqual({ correctedQuery: null, requiredWords: [], corrections: [] });
  });

  it('leaves words of disable_on_word alone, case-insensitively', () => {
    expect(correct('grafna', DATASET, { disable_on_word: ['GRAFNA'] }).correctedQuery).toBeNull();
  });

  it('leaves words outside the length ranges alone', () => {
    expect(correct('ngix', { nginx: 5 }).correctedQuery).toBeNull(); // 4 letters: too short
    expect(correct('kubernetis', DATASET).correctedQuery).toBeNull(); // 10 letters: too long
    expect(correct('kubernetis', DATASET, { two_typo_word_range: { min: 5 } }).correctedQuery).toBe('kubernetes'); // no max: unbounded
    expect(correct('ngix', { nginx: 5 }, { one_typo_word_range: { min: 4, max: 4 } }).correctedQuery).toBe('nginx');
  });

  it('leaves words with non-alphabetic characters alone', () => {
    expect(correct('grafna2 graf-na "grafna"', DATASET).correctedQuery).toBeNull();
  });

  it('quotes and requires an exact dataset word when prioritizing, and only then', () => {
    expect(correct('Grafana setup grafana', DATASET)).toEqual({
      correctedQuery: '"Grafana" setup "grafana"',
      requiredWords: ['grafana'],
      corrections: [],
    });
    expect(correct('grafana setup', DATASET, { prioritize_domain_specifc_words: false })).toEqual({
      correctedQuery: null,
      requiredWords: [],
      corrections: [],
    });
    // Prioritized words of any length are quoted; both rules can apply in one query.
    expect(correct('ngin nginx grafna', { ...DATASET, ngin: 1 })).toEqual({
      correctedQuery: '"ngin" "nginx" grafana',
      requiredWords: ['ngin', 'nginx'],
      corrections: [{ from: 'grafna', to: 'grafana' }],
    });
  });

  it('never corrects an exact dataset word, even without prioritizing', () => {
    // 'zorbex' is in the dataset once; 'zorbax' is one edit away and far more frequent.
    expect(correct('zorbex', { zorbex: 1, zorbax: 500 }, { prioritize_domain_specifc_words: false }).correctedQuery).toBeNull();
  });

  it('scores by distance first, then document count, then the smaller word', () => {
    expect(correct('zorbex', { zorbax: 3, zorbix: 3 }).correctedQuery).toBe('zorbax');
    expect(correct('zorbex', { zorbax: 3, zorbix: 4 }).correctedQuery).toBe('zorbix');
    // One edit beats two unless the two-edit word is 1000 documents more frequent.
    expect(correct('zorbex', { zorbix: 1, zorbaxx: 1000 }).correctedQuery).toBe('zorbix');
    expect(correct('zorbex', { zorbix: 1, zorbaxx: 1002 }).correctedQuery).toBe('zorbaxx');
  });

  it('filters candidates by length, first letter and character overlap', () => {
    expect(correct('rafana', DATASET).correctedQuery).toBeNull(); // grafana: first letter differs
    expect(passesCandidateFilter('grafna', 'grafana')).toBe(true);
    expect(passesCandidateFilter('abcde', 'abcdx')).toBe(true); // 4 of 5 distinct characters shared: exactly 0.8
    expect(passesCandidateFilter('abcde', 'abcxy')).toBe(false); // 3 of 5
    expect(passesCandidateFilter('abcde', 'abcdefgh')).toBe(false); // 3 longer
    expect(passesCandidateFilter('abcde', 'xbcde')).toBe(false);
  });

  it('returns a null corrected query when nothing changes', () => {
    expect(correct('hello world', DATASET).correctedQuery).toBeNull();
    expect(correct('qzxvkw', DATASET).correctedQuery).toBeNull(); // nothing near
    expect(correct('', DATASET).correctedQuery).toBeNull();
  });

  it('plans each distinct word once, lowercased, with its distance', () => {
    const plan = planTypoLookups('Grafna grafna hello ngin x9 Pytroch', DEFAULT_TYPO_OPTIONS);
    expect(plan.lookups).toEqual([
      { word: 'grafna', maxDistance: 2 },
      { word: 'ngin', maxDistance: 0 }, // exact check only, for prioritization
      { word: 'pytroch', maxDistance: 2 },
    ]);
    const noPriority = resolveTypoOptions({ correct_typos: true, prioritize_domain_specifc_words: false })!;
    expect(planTypoLookups('ngin grafna', noPriority).lookups).toEqual([{ word: 'grafna', maxDistance: 2 }]);
  });

  it('lets the two-typo range win where the ranges overlap', () => {
    const o: TypoOptions = { ...DEFAULT_TYPO_OPTIONS, oneTypoWordRange: { min: 3, max: 8 }, twoTypoWordRange: { min: 6, max: null } };
    expect([2, 3, 5, 6, 9, 40].map((n) => typoDistanceFor(n, o))).toEqual([0, 1, 1, 2, 2, 2]);
  });

  it('merges shard answers: counts add up, an exact hit anywhere wins', () => {
    const shardA: TypoAnswer[] = [{ exact: 0, candidates: [{ word: 'zorbax', distance: 1, count: 2 }] }];
    const shardB: TypoAnswer[] = [{ exact: 0, candidates: [{ word: 'zorbix', distance: 1, count: 3 }, { word: 'zorbax', distance: 1, count: 2 }] }];
    const shardC: TypoAnswer[] = [{ exact: 1, candidates: [] }];
    expect(mergeTypoAnswers([shardA, shardB])).toEqual([
      { exact: 0, candidates: [{ word: 'zorbax', distance: 1, count: 4 }, { word: 'zorbix', distance: 1, count: 3 }] },
    ]);
    const plan = planTypoLookups('zorbex', DEFAULT_TYPO_OPTIONS);
    expect(decideCorrections(plan, mergeTypoAnswers([shardA, shardB])).correctedQuery).toBe('zorbax');
    expect(decideCorrections(plan, mergeTypoAnswers([shardA, shardB, shardC])).requiredWords).toEqual(['zorbex']);
    expect(() => decideCorrections(plan, [])).toThrow(RangeError);
  });

  it('offers a one-call form for a synchronous vocabulary', () => {
    const v = vocabularyOf(DATASET);
    const asked: string[] = [];
    const result = correctQuery('grafna grafna dashbord', DEFAULT_TYPO_OPTIONS, (word, maxDistance) => {
      asked.push(word);
      return v.answer([{ word, maxDistance }])[0]!;
    });
    expect(asked).toEqual(['grafna', 'dashbord']);
    expect(result.correctedQuery).toBe('grafana grafana dashboard');
  });
});

describe('likely English', () => {
  it('accepts dictionary words, affixed ones and hyphenations, not domain words', () => {
    for (const w of ['hello', 'Running', 'reupload', 'unhappiness', 'well-known', 'colour']) expect(isLikelyEnglish(w), w).toBe(true);
    for (const w of ['grafana', 'pytorch', 'nginx', 'well-knownx', 'recieve', '']) expect(isLikelyEnglish(w), w).toBe(false);
  });
});

describe('typo_options', () => {
  it('resolves defaults and returns null unless correction is asked for', () => {
    expect(resolveTypoOptions(undefined)).toBeNull();
    expect(resolveTypoOptions(null)).toBeNull();
    expect(resolveTypoOptions({})).toBeNull();
    expect(resolveTypoOptions({ correct_typos: false, disable_on_word: ['x'] })).toBeNull();
    expect(resolveTypoOptions({ correct_typos: true })).toEqual(DEFAULT_TYPO_OPTIONS);
    expect(
      resolveTypoOptions({
        correct_typos: true,
        one_typo_word_range: { min: 3, max: null },
        two_typo_word_range: { min: 9, max: 12 },
        disable_on_word: ['Foo'],
        prioritize_domain_specifc_words: false,
      }),
    ).toEqual({
      oneTypoWordRange: { min: 3, max: null },
      twoTypoWordRange: { min: 9, max: 12 },
      disableOnWord: ['foo'],
      prioritizeDomainSpecificWords: false,
    });
  });

  it('rejects wrong types, negative or fractional lengths and min > max, naming the field', () => {
    const cases: [unknown, RegExp][] = [
      ['yes', /typo_options must be an object/],
      [{ correct_typos: 'true' }, /typo_options\.correct_typos must be a boolean/],
      [{ correct_typos: true, one_typo_word_range: 5 }, /typo_options\.one_typo_word_range must be an object/],
      [{ correct_typos: true, one_typo_word_range: { max: 5 } }, /typo_options\.one_typo_word_range\.min is required/],
      [{ correct_typos: true, one_typo_word_range: { min: -1 } }, /typo_options\.one_typo_word_range\.min must be a non-negative integer/],
      [{ correct_typos: true, two_typo_word_range: { min: 2, max: 1.5 } }, /typo_options\.two_typo_word_range\.max must be a non-negative integer/],
      [{ correct_typos: true, two_typo_word_range: { min: 9, max: 8 } }, /typo_options\.two_typo_word_range: min \(9\) must not exceed max \(8\)/],
      [{ correct_typos: true, disable_on_word: 'foo' }, /typo_options\.disable_on_word must be an array of strings/],
      [{ correct_typos: true, disable_on_word: [1] }, /typo_options\.disable_on_word must be an array of strings/],
      [{ correct_typos: true, prioritize_domain_specifc_words: 1 }, /typo_options\.prioritize_domain_specifc_words must be a boolean/],
      // Validated even when correction is off: a malformed request is a 400 either way.
      [{ correct_typos: false, one_typo_word_range: { min: 'a' } }, /typo_options\.one_typo_word_range\.min/],
    ];
    for (const [raw, message] of cases) {
      let caught: unknown;
      try {
        resolveTypoOptions(raw);
      } catch (err) {
        caught = err;
      }
      expect(caught, JSON.stringify(raw)).toBeInstanceOf(QuarryError);
      expect((caught as QuarryError).code).toBe('bad_request');
      expect((caught as QuarryError).message).toMatch(message);
    }
  });
});
