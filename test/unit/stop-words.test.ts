import { describe, expect, it } from 'vitest';
import { STOP_WORDS, isStopWord, removeStopWords } from '../../core/domain/stop-words.js';

describe('stop words', () => {
  it('is the reference list of 131 lowercase words', () => {
    expect(STOP_WORDS.size).toBe(131);
    for (const w of STOP_WORDS) expect(w).toBe(w.toLowerCase());
    for (const w of ['i', 'the', 'what', 'for', 'now', "aren't", "it's", "don't", 'get', 's', 't']) expect(STOP_WORDS.has(w)).toBe(true);
    for (const w of ['malaria', 'cure', 'would', 'could', 'also']) expect(STOP_WORDS.has(w)).toBe(false);
  });

  it('compares in lowercase', () => {
    expect(isStopWord('The')).toBe(true);
    expect(isStopWord('WHAT')).toBe(true);
    expect(isStopWord("Don't")).toBe(true);
    expect(isStopWord('Malaria')).toBe(false);
    expect(isStopWord('')).toBe(false);
  });

  it.each([
    ['what is the cure for malaria', 'cure malaria'],
    ['The Cure', 'Cure'],
    ['the and of', 'the and of'],
    ['THE AND', 'THE AND'],
    ['malaria', 'malaria'],
    ['cure  the malaria', 'cure  malaria'],
    ['  the  ', '  the  '],
    ['', ''],
    ['cure, for malaria?', 'cure, malaria?'],
  ])('removeStopWords(%j) = %j', (query, expected) => {
    expect(removeStopWords(query)).toBe(expected);
  });
});
