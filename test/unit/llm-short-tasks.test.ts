/** Topic-name and suggestion prompts and the cleaning of model answers; the token estimate. */
import { describe, expect, it } from 'vitest';
import { cleanTopicName, firstWords, parseSuggestions, suggestionMessages, topicNameMessages } from '../../core/llm/short-tasks.js';
import { countTokens } from '../../core/llm/token-count.js';

describe('topic names', () => {
  it('the instruction is the system message and the first message alone the user message', () => {
    const m = topicNameMessages('Why do cats purr?');
    expect(m.map((x) => x.role)).toEqual(['system', 'user']);
    expect(m[1]!.content).toBe('Why do cats purr?');
  });

  it('keeps the first non-empty line, without list marks, quotes, emphasis or a Title label', () => {
    expect(cleanTopicName('\n\n  **"Cats and purring"**  \nsecond', 'm')).toBe('Cats and purring');
    expect(cleanTopicName('Title: Purring cats', 'm')).toBe('Purring cats');
    expect(cleanTopicName('1. Purring   cats\tat night', 'm')).toBe('Purring cats at night');
  });

  it('is never empty and never longer than 100 characters', () => {
    expect(cleanTopicName('  ""  ', 'why do cats purr so loudly at night when they sleep')).toBe('why do cats purr so loudly at night');
    expect(cleanTopicName('', ' \n ')).toBe('New topic');
    const long = cleanTopicName('word '.repeat(50), 'm');
    expect(long.length).toBeLessThanOrEqual(100);
    expect(long.endsWith('word')).toBe(true);
  });

  it('firstWords collapses white space and stops after n words', () => {
    expect(firstWords('  a\tb\n\nc  d ', 3)).toBe('a b c');
    expect(firstWords('', 3)).toBe('');
  });
});

describe('suggestions', () => {
  it('the prompt carries the texts, bounded, and the query to go beyond', () => {
    const m = suggestionMessages(['x'.repeat(10_000), 'y'.repeat(10_000), 'z'.repeat(10_000), 'w'.repeat(10_000), 'v'], 'cats');
    const user = m[1]!.content;
    expect(user).toContain('"cats"');
    const texts = user.slice(user.indexOf('\n\n') + 2);
    expect(texts).toBe(`${'x'.repeat(4_000)}\n\n${'y'.repeat(4_000)}\n\n${'z'.repeat(4_000)}\n\n${'w'.repeat(4_000)}`);
    expect(suggestionMessages(['t'], null)[1]!.content).not.toContain('already searched');
  });

  it('parses one query per line and drops the intro, numbering, duplicates and the query itself', () => {
    expect(parseSuggestions('Sure! Here are queries:\n1. Cat food\n2. cat FOOD\n\n- "Cats"\n* purring **reasons**', 'cats')).toEqual(['Cat food', 'purring **reasons']);
  });
});

describe('token estimate', () => {
  it('counts a token per started 8 word characters and per punctuation mark, none for white space', () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens('Hello, world!')).toBe(4);
    expect(countTokens('abcdefgh')).toBe(1);
    expect(countTokens('abcdefghi')).toBe(2);
    expect(countTokens('  \n\t ')).toBe(0);
    expect(countTokens('a-b')).toBe(3);
  });
});
