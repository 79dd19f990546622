/**
 * The OpenAI-compatible provider against the fake LLM server (a real HTTP server on loopback
 * speaking the chat-completions protocol, SSE included): the prompt on the wire, streaming,
 * usage, retries, every failure mapped to the reference's 400, and aborts that reach upstream.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { QuarryError } from '../../core/domain/errors.js';
import type { GenerationOptions, GenerationRequest, TokenUsage } from '../../core/domain/rag.js';
import { countTokens } from '../../core/llm/token-count.js';
import { buildMessages } from '../../core/llm/prompt.js';
import { createProvider, suggestQueries, topicName, type LlmProvider } from '../../core/llm/provider.js';
import { eventually } from '../helpers/eventually.js';
import { fakeTokens, startFakeLlm, type FakeLlm } from '../helpers/fake-llm.js';
import { failure } from '../helpers/rejection.js';

const options: GenerationOptions = { model: 'fake-model', temperature: 0.3, frequencyPenalty: 0.1, presencePenalty: -0.2, maxTokens: 77, stopTokens: ['STOP'] };
const REPLY = 'Cats sleep to save energy [1]. Dogs bark [2].';

let llm: FakeLlm;
let provider: LlmProvider;

function request(over: Partial<GenerationRequest> = {}): GenerationRequest {
  return {
    ragType: 'chosen_chunks',
    systemPrompt: 'Be brief.',
    ragPrompt: 'Use the docs:',
    docs: [
      { n: 1, chunkId: 'a', text: 'Cats sleep sixteen hours.', link: null, numValue: null, imageUrls: [] },
      { n: 2, chunkId: 'b', text: 'Dogs bark at night.', link: null, numValue: null, imageUrls: [] },
    ],
    history: [],
    question: 'Why do cats sleep?',
    imageUrls: [],
    includeLinks: false,
    images: { use: false, perChunk: 5 },
    options,
    endpoint: { baseUrl: llm.url, apiKey: 'sk-test' },
    ...over,
  };
}

/** Runs a stream to its end: the deltas and the usage it returned. */
async function drain(gen: AsyncGenerator<string, TokenUsage, undefined>): Promise<{ deltas: string[]; usage: TokenUsage }> {
  const deltas: string[] = [];
  for (;;) {
    const r = await gen.next();
    if (r.done === true) return { deltas, usage: r.value };
    deltas.push(r.value);
  }
}

beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
});
beforeEach(() => {
  llm.requests.length = 0;
  llm.script({ reply: REPLY });
  provider = createProvider({ baseUrl: llm.url, apiKey: 'sk-test' }, { timeoutMs: 5_000, maxRetries: 2 });
});

describe('streaming', () => {
  it('sends the 5.6 prompt and the options, streams the deltas in order and returns the provider usage', async () => {
    llm.script({ reply: REPLY, usage: { prompt_tokens: 123, completion_tokens: 45 } });
    const req = request();
    const { deltas, usage } = await drain(provider.stream(req, new AbortController().signal));
    expect(deltas).toEqual(fakeTokens(REPLY));
    expect(deltas.join('')).toBe(REPLY);
    expect(usage).toEqual({ promptTokens: 123, completionTokens: 45 });
    expect(llm.requests).toHaveLength(1);
    const sent = llm.requests[0]!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer sk-test');
    expect(sent.body).toMatchObject({
      model: 'fake-model',
      temperature: 0.3,
      frequency_penalty: 0.1,
      presence_penalty: -0.2,
      max_tokens: 77,
      stop: ['STOP'],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(sent.body.messages).toEqual(buildMessages(req));
  });

  it('counts the usage when the provider reports none', async () => {
    llm.script({ reply: REPLY, usage: null });
    const req = request();
    const { usage } = await drain(provider.stream(req, new AbortController().signal));
    const prompt = buildMessages(req).map((m) => m.content as string).join('\n');
    expect(usage).toEqual({ promptTokens: countTokens(prompt), completionTokens: countTokens(REPLY) });
    expect(usage.completionTokens).toBeGreaterThan(0);
  });

  it('sends the topic-chat prompt for all_chunks', async () => {
    const req = request({ ragType: 'all_chunks', history: [{ role: 'user', content: 'earlier' }] });
    await drain(provider.stream(req, new AbortController().signal));
    expect(llm.requests[0]!.body.messages).toEqual(buildMessages(req));
    expect(llm.requests[0]!.body.messages.at(-1)!.content).toMatch(/^Here's my prompt: Why do cats sleep\?\n\nUse the docs: \{"doc":1/);
  });

  it('an empty API key still sends a placeholder (the client needs one) and no OPENAI_* header leaks in', async () => {
    const p = createProvider({ baseUrl: llm.url, apiKey: '' }, { maxRetries: 0 });
    await drain(p.stream(request(), new AbortController().signal));
    expect(llm.requests[0]!.headers.authorization).toMatch(/^Bearer \S+$/);
    expect(llm.requests[0]!.headers['openai-organization']).toBeUndefined();
  });

  it('retries a 429 and then succeeds', async () => {
    llm.script({ reply: REPLY, statuses: [429] });
    const { deltas } = await drain(provider.stream(request(), new AbortController().signal));
    expect(deltas.join('')).toBe(REPLY);
    expect(llm.requests).toHaveLength(2);
  });

  it('retries 5xx with the client backoff when the server gives no delay', async () => {
    llm.script({ reply: REPLY, statuses: [503], retryAfterMs: null });
    const t0 = Date.now();
    const { deltas } = await drain(provider.stream(request(), new AbortController().signal));
    expect(deltas.join('')).toBe(REPLY);
    expect(llm.requests).toHaveLength(2);
    // The client's first backoff is 0.5 s less up to 25 % jitter.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(350);
  });

  it('a 500 on every attempt is a 400 "Bad response from LLM server provider" after maxRetries + 1 requests', async () => {
    llm.script({ statuses: [500, 500, 500, 500] });
    const err = await failure(drain(provider.stream(request(), new AbortController().signal)));
    expect(err.code).toBe('bad_request');
    expect(err.httpStatus).toBe(400);
    expect(err.message).toBe('Bad response from LLM server provider: 500 fake failure 500');
    expect(llm.requests).toHaveLength(3);
  });

  it('a 400 from the provider is not retried', async () => {
    llm.script({ statuses: [400] });
    const err = await failure(drain(provider.stream(request(), new AbortController().signal)));
    expect(err.message).toBe('Bad response from LLM server provider: 400 fake failure 400');
    expect(llm.requests).toHaveLength(1);
  });

  it('a connection dropped mid-stream throws after the text already streamed, never ends quietly', async () => {
    llm.script({ reply: REPLY, dropAfterTokens: 3 });
    const gen = provider.stream(request(), new AbortController().signal);
    const got: string[] = [];
    const err = await failure(
      (async () => {
        for await (const d of gen) got.push(d);
      })(),
    );
    expect(got).toEqual(fakeTokens(REPLY).slice(0, 3));
    expect(err.code).toBe('bad_request');
    expect(err.message).toMatch(/^Bad response from LLM server provider: connection lost: /);
  });

  it('a connection dropped after the last token but before the finish chunk still throws', async () => {
    llm.script({ reply: REPLY, dropAfterTokens: fakeTokens(REPLY).length });
    const err = await failure(drain(provider.stream(request(), new AbortController().signal)));
    expect(err.message).toMatch(/^Bad response from LLM server provider: /);
  });

  it('a stream that ends properly but without a finish reason is a 400, not a short answer', async () => {
    llm.script({ reply: REPLY, endAfterTokens: 2 });
    const err = await failure(drain(provider.stream(request(), new AbortController().signal)));
    expect(err.message).toBe('Bad response from LLM server provider: the stream ended before the answer was complete');
  });

  it('a malformed event is a 400', async () => {
    llm.script({ reply: REPLY, malformedAfterTokens: 2 });
    const err = await failure(drain(provider.stream(request(), new AbortController().signal)));
    expect(err.message).toMatch(/^Bad response from LLM server provider: malformed stream/);
  });

  it('an unreachable server is a 400 naming the failure', async () => {
    // A port that was just free: nothing listens there.
    const closed = await startFakeLlm();
    await closed.close();
    const p = createProvider({ baseUrl: closed.url, apiKey: 'k' }, { maxRetries: 0 });
    const err = await failure(drain(p.stream(request(), new AbortController().signal)));
    expect(err.message).toMatch(/^Bad response from LLM server provider: could not reach the server: .*ECONNREFUSED/);
    const bad = createProvider({ baseUrl: 'not a url', apiKey: 'k' }, { maxRetries: 0 });
    expect((await failure(bad.complete([{ role: 'user', content: 'x' }], options, new AbortController().signal))).message).toBe(
      'Bad response from LLM server provider: request failed: Invalid URL',
    );
  });

  it('a stream silent for longer than the timeout is a 400', async () => {
    llm.script({ reply: 'slow reply here', tokenDelayMs: 1_000 });
    const p = createProvider({ baseUrl: llm.url, apiKey: 'k' }, { timeoutMs: 200, maxRetries: 0 });
    const err = await failure(drain(p.stream(request(), new AbortController().signal)));
    expect(err.message).toBe('Bad response from LLM server provider: no answer within 200 ms');
    await eventually({ what: 'the fake sees the hang-up', timeoutMs: 5_000, intervalMs: 10 }, () => llm.aborted >= 1);
  });

  it('an abort mid-stream aborts the upstream request (the fake sees the hang-up) and throws at once', async () => {
    llm.script({ reply: 'one two three four five six seven eight', tokenDelayMs: 300 });
    const before = llm.aborted;
    const ac = new AbortController();
    const gen = provider.stream(request(), ac.signal);
    expect((await gen.next()).value).toBe('one ');
    const t0 = Date.now();
    setTimeout(() => ac.abort(), 20);
    const err = await failure(drain(gen));
    expect(Date.now() - t0).toBeLessThan(250);
    expect(err.code).toBe('cancelled');
    await eventually({ what: 'the fake sees the hang-up', timeoutMs: 5_000, intervalMs: 10 }, () => llm.aborted > before);
  });

  it('a consumer that stops reading (break) aborts the upstream request too', async () => {
    llm.script({ reply: 'one two three four five six', tokenDelayMs: 100 });
    const before = llm.aborted;
    for await (const d of provider.stream(request(), new AbortController().signal)) {
      expect(d).toBe('one ');
      break;
    }
    await eventually({ what: 'the fake sees the hang-up', timeoutMs: 5_000, intervalMs: 10 }, () => llm.aborted > before);
  });

  it("an abort whose reason is a QuarryError (the caller's deadline) throws that error", async () => {
    llm.script({ reply: 'one two three', tokenDelayMs: 300 });
    const ac = new AbortController();
    const gen = provider.stream(request(), ac.signal);
    setTimeout(() => ac.abort(new QuarryError('timeout', 'deadline passed')), 50);
    const err = await failure(drain(gen));
    expect(err.code).toBe('timeout');
    expect(err.message).toBe('deadline passed');
  });

  it('an abort during the retry backoff releases the caller at once', async () => {
    llm.script({ statuses: [503, 503, 503], retryAfterMs: 5_000 });
    const ac = new AbortController();
    const t0 = Date.now();
    setTimeout(() => ac.abort(), 100);
    const err = await failure(drain(provider.stream(request(), ac.signal)));
    expect(err.code).toBe('cancelled');
    expect(Date.now() - t0).toBeLessThan(1_000);
  });

  it('an already aborted signal sends nothing', async () => {
    const ac = new AbortController();
    ac.abort();
    await failure(drain(provider.stream(request(), ac.signal)));
    expect(llm.requests).toHaveLength(0);
  });
});

describe('short completions', () => {
  it('complete() returns the text and usage of a non-streamed answer', async () => {
    llm.script({ reply: 'A short answer', usage: { prompt_tokens: 9, completion_tokens: 3 } });
    const out = await provider.complete([{ role: 'user', content: 'hello' }], options, new AbortController().signal);
    expect(out).toEqual({ text: 'A short answer', usage: { promptTokens: 9, completionTokens: 3 } });
    expect(llm.requests[0]!.body.stream).toBe(false);
    expect(llm.requests[0]!.body.messages).toEqual([{ role: 'user', content: 'hello' }]);
  });

  it('complete() maps failures like stream()', async () => {
    llm.script({ statuses: [500, 500, 500] });
    const err = await failure(provider.complete([{ role: 'user', content: 'x' }], options, new AbortController().signal));
    expect(err.message).toBe('Bad response from LLM server provider: 500 fake failure 500');
  });

  it('topicName cleans what the model says: first line, no quotes or label, at most 100 characters', async () => {
    llm.script({ reply: '\n"Title: Sleeping cats"\nextra line' });
    expect(await topicName(provider, 'Why do cats sleep so much?', options, new AbortController().signal)).toBe('Sleeping cats');
    llm.script({ reply: 'word '.repeat(60) });
    const long = await topicName(provider, 'x', options, new AbortController().signal);
    expect(long.length).toBeLessThanOrEqual(100);
    expect(long).not.toMatch(/\n|\s$/);
    llm.script({ reply: '""' });
    expect(await topicName(provider, 'one two three four five six seven eight nine ten', options, new AbortController().signal)).toBe(
      'one two three four five six seven eight',
    );
    expect(llm.requests.at(-1)!.body.messages.at(-1)!.content).toContain('one two three four five six seven eight nine ten');
  });

  it('suggestQueries parses one query per line, drops numbering, duplicates, the intro and the query itself, at most 10', async () => {
    const lines = ['Here are some queries:', '1. cat sleep cycles', '2) "cat sleep cycles"', '- why do dogs bark', 'cats', ...Array.from({ length: 12 }, (_, i) => `query ${i}`)];
    llm.script({ reply: lines.join('\n') });
    const out = await suggestQueries(provider, ['Cats sleep.', 'Dogs bark.'], 'cats', options, new AbortController().signal);
    expect(out).toEqual(['cat sleep cycles', 'why do dogs bark', ...Array.from({ length: 8 }, (_, i) => `query ${i}`)]);
    const prompt = llm.requests[0]!.body.messages.at(-1)!.content as string;
    expect(prompt).toContain('Cats sleep.');
    expect(prompt).toContain('"cats"');
  });
});
