/**
 * The pure parts of a topic message's answer (facade/rag/conversation.ts): a stored answer read
 * back without its chunks in both orders (property: for any completion, even one holding `||`),
 * the history window, the search text, and the cited docs.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { MessageRecord } from '../../core/domain/rag.js';
import { LIMITS } from '../../core/domain/limits.js';
import { answerText, chunksJson, citedDocs, combined, historyOf, searchText } from '../../facade/rag/conversation.js';

const msg = (sortOrder: number, role: 'user' | 'assistant', content: string): MessageRecord => ({
  id: `m${sortOrder}`,
  topicId: 't',
  datasetId: 'd',
  sortOrder,
  role,
  content,
  deleted: false,
  promptTokens: 0,
  completionTokens: 0,
  createdAt: 0,
  updatedAt: 0,
});

describe('answerText', () => {
  it('recovers the completion of a stored answer in both orders, whatever the texts hold', () => {
    const chunk = fc.record({ id: fc.string(), chunk_html: fc.string(), score: fc.double({ noNaN: true, noDefaultInfinity: true }) });
    // A completion that is itself a JSON array of objects is the one ambiguous case (see answerText).
    const completions = fc.oneof(fc.string(), fc.constantFrom('[1]', '[1, 2]', 'see [1]||[2]', '||', '|[]|'));
    fc.assert(
      fc.property(fc.array(chunk, { maxLength: 4 }), completions, fc.boolean(), (chunks, completion, completionFirst) => {
        fc.pre(!/^\s*\[\s*(\]|\{)/.test(completion));
        const stored = combined(chunksJson(chunks), completion, completionFirst);
        expect(answerText(stored)).toBe(completion);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps text that is not a stored answer as it is', () => {
    expect(answerText('plain answer')).toBe('plain answer');
    expect(answerText('a || b')).toBe('a || b');
    expect(answerText('[not json||x')).toBe('[not json||x');
  });
});

describe('historyOf', () => {
  const messages = [msg(1, 'user', 'q1'), msg(2, 'assistant', '[]||a1'), msg(3, 'user', 'q2'), msg(4, 'assistant', 'a2||[]')];

  it('keeps the last n messages, answers without their chunks', () => {
    expect(historyOf(messages, 10)).toEqual([
      { role: 'user', content: 'q1' },
      { role: 'assistant', content: 'a1' },
      { role: 'user', content: 'q2' },
      { role: 'assistant', content: 'a2' },
    ]);
    expect(historyOf(messages, 1)).toEqual([{ role: 'assistant', content: 'a2' }]);
    expect(historyOf(messages, 0)).toEqual([]);
  });
});

describe('searchText', () => {
  const before = [msg(1, 'user', 'q1'), msg(2, 'assistant', 'a1')];

  it('searches with search_query, else the question, else every user message', () => {
    expect(searchText('explicit', 'q2', before, true)).toBe('explicit');
    expect(searchText(null, 'q2', before, false)).toBe('q2');
    expect(searchText(null, 'q2', before, true)).toBe('q1\n\nq2');
  });

  it('cuts the text to the longest query a search takes', () => {
    expect(searchText(null, 'x'.repeat(LIMITS.queryLength + 10), [], false)).toHaveLength(LIMITS.queryLength);
  });
});

describe('citedDocs', () => {
  it('finds [n] and [n, m] citations within the docs', () => {
    expect([...citedDocs('A [1]. B [2, 3]. C [9]. D [0]. E [x]', 3)].sort()).toEqual([1, 2, 3]);
    expect(citedDocs('no citations', 3).size).toBe(0);
  });
});

describe('chunksJson', () => {
  it('leaves no || in the chunks JSON', () => {
    expect(chunksJson([{ chunk_html: 'a || b |||' }])).toBe('[{"chunk_html":"a  b |"}]');
  });
});
