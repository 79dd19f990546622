/**
 * The embedded extractive answerer: the right sentence and citation on hand-made documents, the
 * extractive heading, the "no answer" sentence, the dense mix through an injected encoder,
 * aborts, topic names and suggestions without a model, and bounded time on huge documents.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { QuarryError } from '../../core/domain/errors.js';
import type { GenerationRequest, RagDoc, TokenUsage } from '../../core/domain/rag.js';
import { EXTRACTIVE_HEADING, ExtractiveProvider, NO_ANSWER } from '../../core/llm/extractive.js';
import { createProvider, suggestQueries, topicName, type LlmDeps } from '../../core/llm/provider.js';
import { splitSentences } from '../../core/llm/sentences.js';
import { countTokens } from '../../core/llm/token-count.js';

const options = { model: '', temperature: 0.5, frequencyPenalty: 0.7, presencePenalty: 0.7, stopTokens: [] };

function doc(n: number, text: string): RagDoc {
  return { n, chunkId: `c${n}`, text, link: null, numValue: null, imageUrls: [] };
}

const DOCS = [
  doc(1, 'The Eiffel Tower is in Paris. It was completed in 1889. Many tourists visit it every year.'),
  doc(2, 'Photosynthesis converts light into chemical energy. Plants use chlorophyll to absorb sunlight.'),
  doc(3, 'The Great Wall of China is very long. It was built over many centuries.'),
];

function request(question: string, docs: readonly RagDoc[] = DOCS): GenerationRequest {
  return {
    ragType: 'chosen_chunks',
    systemPrompt: '',
    ragPrompt: '',
    docs,
    history: [],
    question,
    imageUrls: [],
    includeLinks: false,
    images: { use: false, perChunk: 0 },
    options,
    endpoint: { baseUrl: '', apiKey: '' },
  };
}

async function answer(question: string, docs: readonly RagDoc[] = DOCS, deps: LlmDeps = {}, signal = new AbortController().signal): Promise<{ deltas: string[]; usage: TokenUsage }> {
  const gen = createProvider({ baseUrl: '', apiKey: '' }, deps).stream(request(question, docs), signal);
  const deltas: string[] = [];
  for (;;) {
    const r = await gen.next();
    if (r.done === true) return { deltas, usage: r.value };
    deltas.push(r.value);
  }
}

describe('extractive answers', () => {
  it('an empty base URL gives the extractive answerer', () => {
    expect(createProvider({ baseUrl: '', apiKey: 'x' }, {})).toBeInstanceOf(ExtractiveProvider);
  });

  it('answers with the sentence that matches, cited with its doc number, under the extractive heading', async () => {
    const { deltas, usage } = await answer('How do plants absorb sunlight?');
    expect(deltas).toEqual([`${EXTRACTIVE_HEADING}\n\n`, 'Plants use chlorophyll to absorb sunlight. [2]']);
    expect(usage.completionTokens).toBe(countTokens(deltas.join('')));
    expect(usage.promptTokens).toBeGreaterThan(countTokens('How do plants absorb sunlight?'));
  });

  it('cites each doc a picked sentence comes from, one delta per sentence, best first', async () => {
    const { deltas } = await answer('When was the Eiffel Tower completed, and when was the Great Wall built?');
    expect(deltas[0]).toBe(`${EXTRACTIVE_HEADING}\n\n`);
    const body = deltas.slice(1).join('');
    expect(body).toContain('It was completed in 1889. [1]');
    expect(body).toContain('[3]');
    expect(body).not.toContain('[2]');
    expect(deltas.length).toBeLessThanOrEqual(5);
  });

  it('says the documents do not answer when nothing matches, and when there are no docs', async () => {
    expect((await answer('quantum chromodynamics lattice')).deltas).toEqual([`${EXTRACTIVE_HEADING}\n\n`, NO_ANSWER]);
    expect((await answer('How do plants absorb sunlight?', [])).deltas).toEqual([`${EXTRACTIVE_HEADING}\n\n`, NO_ANSWER]);
    // Only stop words: nothing to match.
    expect((await answer('what is it?')).deltas).toEqual([`${EXTRACTIVE_HEADING}\n\n`, NO_ANSWER]);
  });

  it('does not repeat a sentence said twice (MMR)', async () => {
    const twice = [doc(1, 'Cats sleep sixteen hours a day.'), doc(2, 'Cats sleep sixteen hours a day.'), doc(3, 'Cats hunt at night.')];
    const { deltas } = await answer('how long do cats sleep', twice);
    const said = deltas.slice(1).join('');
    expect(said.split('Cats sleep sixteen hours a day.').length - 1).toBe(1);
  });

  it('mixes in the cosine of sentence vectors: a paraphrase without a shared word is found', async () => {
    // A stand-in encoder: the question and the paraphrase point one way, everything else another.
    const calls: string[][] = [];
    const encodeSentences = (texts: readonly string[]): Promise<Float32Array[]> => {
      calls.push([...texts]);
      return Promise.resolve(texts.map((t) => (/cats sleep|felines nap/i.test(t) ? Float32Array.of(1, 0) : Float32Array.of(0, 1))));
    };
    const docs = [doc(1, 'Felines nap for most of the day.'), doc(2, 'Dogs bark at the mailman.')];
    const { deltas } = await answer('Why do cats sleep?', docs, { encodeSentences });
    expect(deltas).toEqual([`${EXTRACTIVE_HEADING}\n\n`, 'Felines nap for most of the day. [1]']);
    expect(calls[0]![0]).toBe('Why do cats sleep?');
    // Without the encoder, nothing is shared: no answer.
    expect((await answer('Why do cats sleep?', docs)).deltas[1]).toBe(NO_ANSWER);
  });

  it('an encoder that fails falls back to lexical scores; an abort during encoding is the abort', async () => {
    const broken = (): Promise<Float32Array[]> => Promise.reject(new Error('model crashed'));
    expect((await answer('How do plants absorb sunlight?', DOCS, { encodeSentences: broken })).deltas[1]).toBe('Plants use chlorophyll to absorb sunlight. [2]');
    const ac = new AbortController();
    const aborting = (): Promise<Float32Array[]> => {
      ac.abort();
      return Promise.reject(new Error('aborted'));
    };
    const err = await answer('How do plants absorb sunlight?', DOCS, { encodeSentences: aborting }, ac.signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QuarryError);
    expect((err as QuarryError).code).toBe('cancelled');
  });

  it('an aborted signal throws cancelled, or the QuarryError given as the reason', async () => {
    const ac = new AbortController();
    ac.abort();
    const err = await answer('plants', DOCS, {}, ac.signal).catch((e: unknown) => e);
    expect((err as QuarryError).code).toBe('cancelled');
    const late = new AbortController();
    late.abort(new QuarryError('timeout', 'deadline'));
    expect(((await answer('plants', DOCS, {}, late.signal).catch((e: unknown) => e)) as QuarryError).code).toBe('timeout');
  });

  it('stays fast on a 5 MB document of each hard shape (sentences, one word, no sentence end, abbreviations, blanks, runs of dots)', async () => {
    const MB5 = 5 * 1024 * 1024;
    const shapes = {
      sentences: 'Plants absorb sunlight with chlorophyll pigments. '.repeat(MB5 / 50),
      oneWord: 'x'.repeat(MB5),
      runOn: 'plants absorb sunlight and '.repeat(MB5 / 27),
      abbreviations: 'e.g. fig. no. '.repeat(MB5 / 14),
      blanks: ' '.repeat(MB5) + 'Plants absorb sunlight.',
      dots: '.'.repeat(MB5) + 'x plants absorb sunlight.',
      dotsBeforeLowercase: '!.'.repeat(MB5 / 2) + ' plants absorb sunlight.',
    };
    for (const [shape, text] of Object.entries(shapes)) {
      const t0 = performance.now();
      const { deltas } = await answer('How do plants absorb sunlight?', [doc(1, text), ...DOCS.slice(1)]);
      const ms = performance.now() - t0;
      expect(deltas[0], shape).toBe(`${EXTRACTIVE_HEADING}\n\n`);
      expect(ms, `${shape}: ${ms.toFixed(0)} ms`).toBeLessThan(3_000);
    }
    // A 5 MB question of distinct words, with an encoder: bounded too, and the encoder gets a bounded question.
    let words = '';
    for (let i = 0; words.length < MB5; i++) words += `term${i.toString(36)} `;
    const seen: number[] = [];
    const encodeSentences = (texts: readonly string[]): Promise<Float32Array[]> => {
      seen.push(...texts.map((t) => t.length));
      return Promise.resolve(texts.map(() => Float32Array.of(1, 1)));
    };
    const t0 = performance.now();
    const { deltas } = await answer(words, DOCS, { encodeSentences });
    expect(deltas[0]).toBe(`${EXTRACTIVE_HEADING}\n\n`);
    expect(performance.now() - t0).toBeLessThan(3_000);
    expect(Math.max(...seen)).toBeLessThanOrEqual(2_000);
  });
});

describe('sentence splitting', () => {
  const split = (t: string): string[] => splitSentences(t, { maxSentences: 100, maxChars: 60 }).map((s) => s.text);

  it('ends sentences at . ! ? before a capital, a digit or a line break, keeping closing quotes', () => {
    expect(split('One here. Two there! "Three?" Four 4.5 five.\nSix')).toEqual(['One here.', 'Two there!', '"Three?"', 'Four 4.5 five.', 'Six']);
  });

  it('does not end at abbreviations, initials or before a lowercase word', () => {
    expect(split('Smith et al. showed it, e.g. in mice. Dr. Who met J. Smith. Fig. 2 shows it.')).toEqual([
      'Smith et al. showed it, e.g. in mice.',
      'Dr. Who met J. Smith.',
      'Fig. 2 shows it.',
    ]);
  });

  it('cuts a run-on at a space below the cap, keeps offsets, drops pieces without a word', () => {
    const text = `${'word '.repeat(30)}end. ... !!! \n  Last one.`;
    const out = splitSentences(text, { maxSentences: 100, maxChars: 60 });
    for (const s of out) {
      expect(s.text.length).toBeLessThanOrEqual(60);
      expect(text.slice(s.start, s.start + s.text.length)).toBe(s.text);
    }
    expect(out.at(-1)!.text).toBe('Last one.');
    expect(out.map((s) => s.text).join(' ').replace(/\s+/g, ' ')).toBe(`${'word '.repeat(30)}end.`.trim() + ' Last one.');
  });

  it('property: every sentence is a trimmed slice of the text at its offset, within the cap, in order, none without a word', () => {
    const piece = fc.constantFrom('a', 'B', 'word', '.', '!', '?', ' ', '\n', '"', ')', 'e.g.', 'Dr.', '4.5', 'é', 'É');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 200 }), fc.integer({ min: 1, max: 30 }), (pieces, maxChars) => {
        const text = pieces.join('');
        const out = splitSentences(text, { maxSentences: 10_000, maxChars });
        let after = 0;
        for (const s of out) {
          expect(s.text).not.toBe('');
          expect(s.text).toBe(s.text.trim());
          expect(s.text.length).toBeLessThanOrEqual(maxChars);
          expect(text.slice(s.start, s.start + s.text.length)).toBe(s.text);
          expect(s.start).toBeGreaterThanOrEqual(after);
          after = s.start + s.text.length;
          expect(/[\p{L}\p{N}]/u.test(s.text)).toBe(true);
        }
        // Nothing with a letter or digit is lost: every word character is inside some sentence.
        const covered = new Uint8Array(text.length);
        for (const s of out) covered.fill(1, s.start, s.start + s.text.length);
        for (let i = 0; i < text.length; i++) if (/[a-zA-Z0-9]/.test(text[i]!)) expect(covered[i], `char ${i} of ${JSON.stringify(text)}`).toBe(1);
      }),
      { numRuns: 300 },
    );
  });

  it('stops at maxSentences', () => {
    expect(splitSentences('One. Two. Three. Four.', { maxSentences: 2, maxChars: 100 })).toHaveLength(2);
  });
});

describe('short tasks without a model', () => {
  it('topicName is the first 8 words of the message', async () => {
    const p = createProvider({ baseUrl: '', apiKey: '' }, {});
    const signal = new AbortController().signal;
    expect(await topicName(p, '  How   do plants absorb sunlight when the sky is cloudy?', options, signal)).toBe('How do plants absorb sunlight when the sky');
    expect(await topicName(p, '   ', options, signal)).toBe('New topic');
    expect((await topicName(p, 'x'.repeat(300), options, signal)).length).toBe(100);
  });

  it('suggestQueries gives distinctive phrases of the texts, not the query, at most 10', async () => {
    const p = createProvider({ baseUrl: '', apiKey: '' }, {});
    const texts = [
      'Sleep deprivation impairs memory consolidation. Sleep deprivation also affects mood.',
      'Memory consolidation happens during deep sleep. Sleep deprivation reduces deep sleep.',
      'Caffeine intake and sleep deprivation interact.',
    ];
    const out = await suggestQueries(p, texts, null, options, new AbortController().signal);
    expect(out[0]).toBe('sleep deprivation');
    expect(out).toContain('memory consolidation');
    expect(out.length).toBeLessThanOrEqual(10);
    expect(new Set(out).size).toBe(out.length);
    const withQuery = await suggestQueries(p, texts, 'sleep', options, new AbortController().signal);
    expect(withQuery.some((q) => q.split(' ').includes('sleep'))).toBe(false);
    expect(withQuery).toContain('memory consolidation');
    expect(await suggestQueries(p, [], null, options, new AbortController().signal)).toEqual([]);
  });
});
