/** The chat messages of wire-format 5.6, for both RAG types: exact output. */
import { describe, expect, it } from 'vitest';
import type { GenerationRequest, RagDoc } from '../../core/domain/rag.js';
import { buildMessages, QUESTION_IMAGES_CAPTION } from '../../core/llm/prompt.js';

const docs: RagDoc[] = [
  { n: 1, chunkId: 'c1', text: 'Cats sleep a lot.', link: 'https://a.example/cats', numValue: 3, imageUrls: ['https://img/1a', 'https://img/1b', 'https://img/1c'] },
  { n: 2, chunkId: 'c2', text: 'Dogs bark.', link: null, numValue: null, imageUrls: [] },
];

function request(over: Partial<GenerationRequest> = {}): GenerationRequest {
  return {
    ragType: 'chosen_chunks',
    systemPrompt: 'You are helpful.',
    ragPrompt: 'Answer using the docs:',
    docs,
    history: [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello!' },
    ],
    question: 'Why do cats sleep?',
    imageUrls: [],
    includeLinks: false,
    images: { use: false, perChunk: 5 },
    options: { model: 'm', temperature: 0.5, frequencyPenalty: 0.7, presencePenalty: 0.7, stopTokens: [] },
    endpoint: { baseUrl: '', apiKey: '' },
    ...over,
  };
}

describe('chosen_chunks messages', () => {
  it('system, one message per doc in order, history, then RAG prompt + question', () => {
    expect(buildMessages(request())).toEqual([
      { role: 'system', content: 'You are helpful.' },
      { role: 'user', content: "{'doc': 1, 'text': 'Cats sleep a lot.'}" },
      { role: 'user', content: "{'doc': 2, 'text': 'Dogs bark.'}" },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello!' },
      { role: 'user', content: 'Answer using the docs: Why do cats sleep?' },
    ]);
  });

  it('links go in their own slot after the text (not swapped as the reference does); a missing link is empty', () => {
    const m = buildMessages(request({ includeLinks: true }));
    expect(m[1]).toEqual({ role: 'user', content: "{'doc': 1, 'text': 'Cats sleep a lot.', 'link': 'https://a.example/cats'}" });
    expect(m[2]).toEqual({ role: 'user', content: "{'doc': 2, 'text': 'Dogs bark.', 'link': ''}" });
  });

  it('an empty RAG prompt leaves the question alone; an empty system prompt sends no system message', () => {
    const m = buildMessages(request({ ragPrompt: '', systemPrompt: '', history: [] }));
    expect(m).toEqual([
      { role: 'user', content: "{'doc': 1, 'text': 'Cats sleep a lot.'}" },
      { role: 'user', content: "{'doc': 2, 'text': 'Dogs bark.'}" },
      { role: 'user', content: 'Why do cats sleep?' },
    ]);
  });

  it('images per doc (at most images_per_chunk) with use_images, and the question images with a caption before the question', () => {
    const m = buildMessages(request({ images: { use: true, perChunk: 2 }, imageUrls: ['https://q/1'], history: [] }));
    expect(m).toEqual([
      { role: 'system', content: 'You are helpful.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: "{'doc': 1, 'text': 'Cats sleep a lot.'}" },
          { type: 'image_url', image_url: { url: 'https://img/1a' } },
          { type: 'image_url', image_url: { url: 'https://img/1b' } },
        ],
      },
      { role: 'user', content: "{'doc': 2, 'text': 'Dogs bark.'}" },
      { role: 'user', content: [{ type: 'text', text: QUESTION_IMAGES_CAPTION }, { type: 'image_url', image_url: { url: 'https://q/1' } }] },
      { role: 'user', content: 'Answer using the docs: Why do cats sleep?' },
    ]);
  });

  it('doc images are not sent without use_images', () => {
    const m = buildMessages(request({ images: { use: false, perChunk: 5 } }));
    expect(m[1]).toEqual({ role: 'user', content: "{'doc': 1, 'text': 'Cats sleep a lot.'}" });
  });
});

describe('all_chunks (topic chat) messages', () => {
  it('system, history, then one message with the question, the RAG prompt and the docs as JSON', () => {
    const m = buildMessages(request({ ragType: 'all_chunks' }));
    expect(m).toEqual([
      { role: 'system', content: 'You are helpful.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello!' },
      {
        role: 'user',
        content:
          "Here's my prompt: Why do cats sleep?\n\nAnswer using the docs: " +
          '{"doc":1,"text":"Cats sleep a lot.","num_value":3,"link":"https://a.example/cats"}\n\n' +
          '{"doc":2,"text":"Dogs bark.","num_value":null,"link":null}',
      },
    ]);
  });

  it('a currency is written before each num_value ("USD 3"); a doc without a number keeps null', () => {
    const m = buildMessages(request({ ragType: 'all_chunks', currency: 'USD', history: [], systemPrompt: '' }));
    expect(m).toEqual([
      {
        role: 'user',
        content:
          "Here's my prompt: Why do cats sleep?\n\nAnswer using the docs: " +
          '{"doc":1,"text":"Cats sleep a lot.","num_value":"USD 3","link":"https://a.example/cats"}\n\n' +
          '{"doc":2,"text":"Dogs bark.","num_value":null,"link":null}',
      },
    ]);
  });

  it('JSON escapes quotes and newlines of a doc', () => {
    const odd: RagDoc = { n: 1, chunkId: 'c', text: 'say "hi"\nbye', link: null, numValue: 1.5, imageUrls: [] };
    const m = buildMessages(request({ ragType: 'all_chunks', docs: [odd], history: [], systemPrompt: '' }));
    expect(m).toEqual([{ role: 'user', content: 'Here\'s my prompt: Why do cats sleep?\n\nAnswer using the docs: {"doc":1,"text":"say \\"hi\\"\\nbye","num_value":1.5,"link":null}' }]);
  });
});
