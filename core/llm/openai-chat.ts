/**
 * The OpenAI-compatible provider (OpenAI, OpenRouter, vLLM, Ollama, llama.cpp, ...) through the
 * official `openai` client: its retries with backoff on 408/409/429/5xx and connection errors,
 * its per-attempt timeout, and the caller's signal passed down so that a client that goes away
 * aborts the upstream HTTP request. Every failure becomes the reference's 400 "Bad response from
 * LLM server provider: ..."; a stream that ends without a finish reason is one too, so that a
 * connection cut mid-answer never passes for a complete answer.
 */
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type { ChatCompletionCreateParamsBase } from 'openai/resources/chat/completions';
import { QuarryError } from '../domain/errors.js';
import type { ChatMessage, GenerationOptions, GenerationRequest, LlmEndpoint, TokenUsage } from '../domain/rag.js';
import { httpFetch } from './http-fetch.js';
import { abortError, providerError, raceAbort, throwIfAborted } from './llm-errors.js';
import { buildMessages, messagesText, plainMessages } from './prompt.js';
import type { LlmDeps, LlmProvider } from './provider.js';
import { countTokens } from './token-count.js';
import { withFields } from '../domain/with-fields.js';

/** Default time for the provider to start answering, and longest silence inside a stream, in ms. */
export const DEFAULT_LLM_TIMEOUT_MS = 60_000;

/** Default retries on 429/5xx/connection errors (the client's own default). */
export const DEFAULT_LLM_MAX_RETRIES = 2;

/** Sent as the API key to servers that need none: the client refuses to run without one. */
const PLACEHOLDER_API_KEY = 'quarry-no-api-key';

/** Longest provider error text repeated to the caller, in characters. */
const MAX_DETAIL_CHARS = 500;

type ChatParams = Omit<ChatCompletionCreateParamsBase, 'messages' | 'stream' | 'stream_options'>;

/** The sampling options on the wire. */
function chatParams(o: GenerationOptions): ChatParams {
  return {
    model: o.model,
    temperature: o.temperature,
    frequency_penalty: o.frequencyPenalty,
    presence_penalty: o.presencePenalty,
    ...(o.maxTokens === undefined ? {} : { max_tokens: o.maxTokens }),
    ...(o.stopTokens.length === 0 ? {} : { stop: [...o.stopTokens] }),
  };
}

/** The innermost message of an error's cause chain (undici's "fetch failed" hides "connect ECONNREFUSED ..."). */
function rootMessage(err: unknown): string {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && e instanceof Error && e.cause instanceof Error; depth++) e = e.cause;
  return e instanceof Error ? e.message : String(e);
}

/** The provider's usage, or counted from the texts when it sent none. */
function usageOf(reported: { prompt_tokens: number; completion_tokens: number } | null | undefined, prompt: string, answer: string): TokenUsage {
  if (reported != null && Number.isFinite(reported.prompt_tokens) && Number.isFinite(reported.completion_tokens)) {
    return { promptTokens: reported.prompt_tokens, completionTokens: reported.completion_tokens };
  }
  return { promptTokens: countTokens(prompt), completionTokens: countTokens(answer) };
}

/** An OpenAI-compatible chat-completions endpoint. */
export class OpenAiChatProvider implements LlmProvider {
  private readonly client: OpenAI;
  private readonly timeoutMs: number;

  constructor(endpoint: LlmEndpoint, deps: LlmDeps) {
    this.timeoutMs = deps.timeoutMs ?? DEFAULT_LLM_TIMEOUT_MS;
    this.client = new OpenAI({
      baseURL: endpoint.baseUrl,
      apiKey: endpoint.apiKey === '' ? PLACEHOLDER_API_KEY : endpoint.apiKey,
      // Explicit, so that OPENAI_* variables of the process never change what a dataset sends.
      organization: null,
      project: null,
      timeout: this.timeoutMs,
      maxRetries: deps.maxRetries ?? DEFAULT_LLM_MAX_RETRIES,
      logLevel: 'off',
      // node:http with keep-alive instead of the global fetch: ~0.6 ms less CPU per answer (http-fetch.ts).
      fetch: httpFetch,
    });
  }

  async *stream(request: GenerationRequest, signal: AbortSignal): AsyncGenerator<string, TokenUsage, undefined> {
    throwIfAborted(signal);
    const messages = buildMessages(request);
    // One controller for the upstream request, aborted by the caller's signal or by a silence of
    // timeoutMs (the client's own timeout ends at the headers). Not AbortSignal.any, and one
    // timer refreshed per event, not one per token: with 100 answers starting at once, every
    // allocation of an answer's start counts.
    const upstream = new AbortController();
    let silent = false;
    // While the consumer holds a yielded delta, its own pace is not the provider's silence.
    let yielded = false;
    const timer = setTimeout(() => {
      if (yielded) timer.refresh();
      else {
        silent = true;
        upstream.abort();
      }
    }, this.timeoutMs);
    const onAbort = (): void => upstream.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    const pieces: string[] = [];
    let reported: { prompt_tokens: number; completion_tokens: number } | undefined;
    let finished = false;
    let started = false;
    // The event stream was read to its end (the request is over).
    let drained = false;
    try {
      const chunks = await raceAbort(
        this.client.chat.completions.create(
          withFields(chatParams(request.options), { messages, stream: true as const, stream_options: { include_usage: true } }),
          { signal: upstream.signal },
        ),
        signal,
      );
      for await (const chunk of chunks) {
        started = true;
        timer.refresh();
        if (chunk.usage != null) reported = chunk.usage;
        for (const choice of chunk.choices ?? []) {
          if (choice.index !== 0) continue;
          if (choice.finish_reason != null) finished = true;
          const text = choice.delta?.content;
          if (typeof text === 'string' && text !== '') {
            pieces.push(text);
            yielded = true;
            yield text;
            yielded = false;
            timer.refresh();
          }
        }
      }
      drained = true;
      // The client ends an aborted stream quietly: the abort is ours to report.
      throwIfAborted(signal);
      if (silent) throw this.silent();
      if (!finished) throw providerError('the stream ended before the answer was complete');
    } catch (err) {
      throw this.failure(err, signal, silent, started);
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      // A consumer that stopped early (or a failure) may leave the request open: end it. A stream
      // read to its end has nothing left to abort, and aborting it cost a DOMException and the
      // client's abort handlers per answer.
      if (!drained) upstream.abort();
    }
    return usageOf(reported, messagesText(messages), pieces.join(''));
  }

  async complete(messages: readonly ChatMessage[], options: GenerationOptions, signal: AbortSignal): Promise<{ text: string; usage: TokenUsage }> {
    throwIfAborted(signal);
    const wire = plainMessages(messages);
    try {
      const res = await raceAbort(this.client.chat.completions.create(withFields(chatParams(options), { messages: wire, stream: false as const }), { signal }), signal);
      // A server that is not quite OpenAI's may answer 200 with another shape.
      const text: unknown = (res as Partial<typeof res> | undefined)?.choices?.[0]?.message?.content;
      if (typeof text !== 'string') throw providerError('the answer has no message content');
      return { text, usage: usageOf(res.usage, messagesText(wire), text) };
    } catch (err) {
      throw this.failure(err, signal, false, false);
    }
  }

  private silent(): QuarryError {
    return providerError(`no answer within ${this.timeoutMs} ms`);
  }

  /**
   * Maps anything thrown while talking to the provider to the error the caller sees; `silent`:
   * the stream was aborted for its silence; `started`:
   * the stream had delivered events, so a network error is a connection lost mid-answer.
   */
  private failure(err: unknown, signal: AbortSignal, silent: boolean, started: boolean): QuarryError {
    if (signal.aborted) return abortError(signal);
    if (silent || err instanceof APIConnectionTimeoutError) return this.silent();
    if (err instanceof QuarryError) return err;
    if (err instanceof APIUserAbortError) return abortError(signal);
    if (err instanceof APIConnectionError) return providerError(`could not reach the server: ${rootMessage(err)}`.slice(0, MAX_DETAIL_CHARS), err);
    if (err instanceof APIError) return providerError(err.message.slice(0, MAX_DETAIL_CHARS), err);
    if (err instanceof SyntaxError) return providerError(`malformed stream: ${err.message}`.slice(0, MAX_DETAIL_CHARS), err);
    return providerError(`${started ? 'connection lost' : 'request failed'}: ${rootMessage(err)}`.slice(0, MAX_DETAIL_CHARS), err);
  }
}
