/**
 * The local provider running a real (tiny, generated) GGUF model through node-llama-cpp: streamed
 * deltas, max_tokens, stop strings, temperature 0, usage, prompt larger than the context, abort
 * and deadline while generating and while waiting for a sequence, answers in arrival order
 * beyond the model's sequences, and clear errors for a missing install, file or format.
 * Needs `./deploy/llama.sh install` (deploy/test.sh runs it).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QuarryError } from '../../core/domain/errors.js';
import type { GenerationOptions, GenerationRequest, RagDoc, TokenUsage } from '../../core/domain/rag.js';
import { ExtractiveProvider } from '../../core/llm/extractive.js';
import { findLlamaInstall, LlamaCppProvider, LocalModel, type LocalModelOptions } from '../../core/llm/llama-cpp.js';
import { OpenAiChatProvider } from '../../core/llm/openai-chat.js';
import { createProvider, topicName } from '../../core/llm/provider.js';
import { failure } from '../helpers/rejection.js';
import { TINY_WORDS, tinyGguf, writeTinyGguf } from '../helpers/tiny-gguf.js';

const OPTIONS: GenerationOptions = { model: '', temperature: 0, frequencyPenalty: 0, presencePenalty: 0, maxTokens: 12, stopTokens: [] };

function doc(n: number, text: string): RagDoc {
  return { n, chunkId: `c${n}`, text, link: null, numValue: null, imageUrls: [] };
}

function request(options: Partial<GenerationOptions> = {}, docs: readonly RagDoc[] = [doc(1, 'Ducks quack loudly.'), doc(2, 'Geese honk at dawn.')]): GenerationRequest {
  return {
    ragType: 'chosen_chunks',
    systemPrompt: 'You answer questions about birds.',
    ragPrompt: 'Answer from the documents:',
    docs,
    history: [{ role: 'user', content: 'Hello' }, { role: 'assistant', content: 'Hi.' }],
    question: 'Which bird quacks?',
    imageUrls: [],
    includeLinks: false,
    images: { use: false, perChunk: 0 },
    options: { ...OPTIONS, ...options },
    endpoint: { baseUrl: '', apiKey: '' },
  };
}

let dir: string;
let modelPath: string;
const models: LocalModel[] = [];

/** A local model over the tiny GGUF (closed after the file). */
function localModel(options: Partial<LocalModelOptions> = {}): LocalModel {
  const m = new LocalModel({ modelPath, contextSize: 4096, ...options });
  models.push(m);
  return m;
}

async function answer(provider: LlamaCppProvider, req: GenerationRequest, signal = new AbortController().signal): Promise<{ deltas: string[]; usage: TokenUsage }> {
  const gen = provider.stream(req, signal);
  const deltas: string[] = [];
  for (;;) {
    const r = await gen.next();
    if (r.done) return { deltas, usage: r.value };
    deltas.push(r.value);
  }
}

beforeAll(() => {
  if (findLlamaInstall() === null) throw new Error('node-llama-cpp is not installed: run ./deploy/llama.sh install');
  dir = mkdtempSync(path.join(os.tmpdir(), 'quarry-llama-'));
  modelPath = writeTinyGguf(path.join(dir, 'tiny.gguf'));
});

afterAll(async () => {
  await Promise.all(models.map((m) => m.close()));
  rmSync(dir, { recursive: true, force: true });
});

describe('the tiny GGUF', () => {
  it('is the same bytes for the same seed, and other bytes for another', () => {
    expect(tinyGguf({ seed: 7 }).equals(tinyGguf({ seed: 7 }))).toBe(true);
    expect(tinyGguf({ seed: 7 }).equals(tinyGguf({ seed: 8 }))).toBe(false);
    expect(tinyGguf().subarray(0, 4).toString('latin1')).toBe('GGUF');
  });
});

describe('LlamaCppProvider', () => {
  it('is what createProvider gives a dataset without LLM_BASE_URL when the process has a model', () => {
    const m = localModel();
    expect(createProvider({ baseUrl: '', apiKey: '' }, { localModel: m })).toBeInstanceOf(LlamaCppProvider);
    expect(createProvider({ baseUrl: '', apiKey: '' }, {})).toBeInstanceOf(ExtractiveProvider);
    expect(createProvider({ baseUrl: 'http://127.0.0.1:1/v1', apiKey: '' }, { localModel: m })).toBeInstanceOf(OpenAiChatProvider);
  });

  it('streams words of the model, stops at max_tokens and counts both sides', async () => {
    const provider = new LlamaCppProvider(localModel());
    const { deltas, usage } = await answer(provider, request({ maxTokens: 12, temperature: 0.8 }));
    expect(deltas.length).toBeGreaterThan(1);
    for (const d of deltas) expect(d).not.toBe('');
    const words = deltas.join('').trim().split(/\s+/);
    for (const w of words) expect([...TINY_WORDS, '.']).toContain(w);
    expect(usage.completionTokens).toBe(12);
    // System prompt, two docs, two turns of history and the question, in the ChatML template.
    expect(usage.promptTokens).toBeGreaterThan(100);
    const longer = await answer(provider, request({ maxTokens: 3 }, [doc(1, 'Ducks quack loudly.'), doc(2, 'Geese honk at dawn.'), doc(3, 'Swans glide on lakes.')]));
    expect(longer.usage.completionTokens).toBe(3);
    expect(longer.usage.promptTokens).toBeGreaterThan(usage.promptTokens);
  });

  it('is deterministic at temperature 0 and ends before a stop string', async () => {
    const provider = new LlamaCppProvider(localModel());
    const first = (await answer(provider, request({ maxTokens: 30 }))).deltas.join('');
    expect((await answer(provider, request({ maxTokens: 30 }))).deltas.join('')).toBe(first);
    // The first word the model says after its third character: the answer must end before it.
    const words = first.trim().split(/\s+/);
    const at = first.indexOf(words.find((w, i) => i > 0 && w !== words[0])!, 3);
    const stop = first.slice(at, first.indexOf(' ', at) < 0 ? undefined : first.indexOf(' ', at));
    const { deltas, usage } = await answer(provider, request({ maxTokens: 30, stopTokens: [stop] }));
    expect(deltas.join('')).toBe(first.slice(0, first.indexOf(stop)));
    expect(usage.completionTokens).toBeLessThan(30);
  });

  it('answers a short completion (topic names) from the model', async () => {
    const name = await topicName(new LlamaCppProvider(localModel()), 'Which bird quacks?', { ...OPTIONS, maxTokens: 5 }, new AbortController().signal);
    expect(name.length).toBeGreaterThan(0);
  });

  it('stops generating at once on abort, with cancelled or timeout, and frees its sequence', async () => {
    const m = localModel({ sequences: 1 });
    const provider = new LlamaCppProvider(m);
    const ctl = new AbortController();
    const gen = provider.stream(request({ maxTokens: 3500, temperature: 1 }), ctl.signal);
    expect((await gen.next()).done).toBe(false);
    const started = Date.now();
    ctl.abort();
    const err = await failure(gen.next());
    expect(Date.now() - started).toBeLessThan(200);
    expect(err.code).toBe('cancelled');
    // A deadline is a timeout.
    const late = await failure(answer(provider, request({ maxTokens: 3500, temperature: 1 }), AbortSignal.timeout(150)));
    expect(late.code).toBe('timeout');
    // The one sequence came back at once (generating the 3500 tokens takes seconds): the next answer runs.
    expect((await answer(provider, request({ maxTokens: 4 }))).usage.completionTokens).toBe(4);
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('makes answers beyond its sequences wait in arrival order; one that gives up leaves the queue', async () => {
    const provider = new LlamaCppProvider(localModel({ sequences: 1 }));
    const order: number[] = [];
    const waiting = new AbortController();
    const runs = [0, 1, 2, 3].map((i) => {
      const signal = i === 2 ? waiting.signal : new AbortController().signal;
      return answer(provider, request({ maxTokens: 60 }), signal).then((r) => {
        order.push(i);
        return r;
      });
    });
    waiting.abort();
    const settled = await Promise.allSettled(runs);
    expect(order).toEqual([0, 1, 3]);
    expect(settled[2]!.status).toBe('rejected');
    expect((settled[2] as PromiseRejectedResult).reason).toBeInstanceOf(QuarryError);
    for (const i of [0, 1, 3]) expect((settled[i] as PromiseFulfilledResult<{ usage: TokenUsage }>).value.usage.completionTokens).toBe(60);
  });

  it('gives its sequence back when a caller drops the answer without reading it to the end', async () => {
    const provider = new LlamaCppProvider(localModel({ sequences: 1 }));
    const dropped = provider.stream(request({ maxTokens: 300, temperature: 1 }), new AbortController().signal);
    expect((await dropped.next()).done).toBe(false);
    // Never read again nor returned: the model finishes those 300 tokens, then serves the next answer.
    expect((await answer(provider, request({ maxTokens: 5 }))).usage.completionTokens).toBe(5);
  });

  it('refuses a prompt larger than its context as the caller\'s error', async () => {
    const provider = new LlamaCppProvider(localModel({ contextSize: 256 }));
    const err = await failure(answer(provider, request({}, [doc(1, 'quack '.repeat(400))])));
    expect(err.code).toBe('bad_request');
    expect(err.message).toMatch(/context holds 256/);
  });
});

describe('a local model that cannot load', () => {
  it('says so before loading and fails answers with a clear 503, for a missing file, another format and a cut GGUF', async () => {
    const loadErrors: unknown[] = [];
    const cut = path.join(dir, 'cut.gguf');
    writeFileSync(cut, tinyGguf().subarray(0, 60_000));
    const text = path.join(dir, 'notes.gguf');
    writeFileSync(text, 'not a model');
    for (const [file, problem] of [
      [path.join(dir, 'missing.gguf'), /cannot be read/],
      [text, /is not a GGUF file/],
      [cut, null],
    ] as const) {
      const m = localModel({ modelPath: file, onLoadError: (e) => loadErrors.push(e) });
      if (problem) expect(m.problem()).toMatch(problem);
      else expect(m.problem()).toBeNull();
      const err = await failure(answer(new LlamaCppProvider(m), request()));
      expect(err.code).toBe('unavailable');
      expect(err.message).toMatch(/^the local language model is unavailable: /);
      expect(err.message).not.toContain(dir);
    }
    expect(loadErrors).toHaveLength(3);
  });

  it('says node-llama-cpp is missing when it is not installed', async () => {
    const m = localModel({ installDir: path.join(dir, 'no-such-install') });
    expect(m.problem()).toBe('node-llama-cpp is not installed (run ./deploy/llama.sh install)');
    const err = await failure(answer(new LlamaCppProvider(m), request()));
    expect(err.code).toBe('unavailable');
    expect(err.message).toMatch(/node-llama-cpp is not installed/);
  });
});
