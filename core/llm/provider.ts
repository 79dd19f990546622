/**
 * The one interface every caller of a language model uses (the job workers' answers, topic
 * names, suggested queries), and the factory that picks the implementation from the dataset's
 * endpoint: the OpenAI-compatible provider when `LLM_BASE_URL` is configured, else the
 * operator's local GGUF model when the process has one (`LLM_MODEL_PATH`, job workers only),
 * else the embedded extractive answerer.
 */
import type { ChatMessage, GenerationOptions, GenerationRequest, LlmEndpoint, TokenUsage } from '../domain/rag.js';
import { ExtractiveProvider } from './extractive.js';
import { LlamaCppProvider, type LocalModel } from './llama-cpp.js';
import { OpenAiChatProvider } from './openai-chat.js';
import { cleanTopicName, parseSuggestions, SUGGESTION_LIMIT, suggestionMessages, topicNameMessages } from './short-tasks.js';

/** A language model behind one dataset's endpoint. */
export interface LlmProvider {
  /**
   * Streams the answer's text deltas in order and returns the token usage. Aborting `signal`
   * aborts the upstream request at once. Provider failures throw QuarryError('bad_request',
   * 'Bad response from LLM server provider: <detail>'); the deadline/abort throws
   * QuarryError('cancelled' | 'timeout').
   */
  stream(request: GenerationRequest, signal: AbortSignal): AsyncGenerator<string, TokenUsage, undefined>;
  /** One short non-streamed completion (topic names, suggested queries). Same errors. */
  complete(messages: readonly ChatMessage[], options: GenerationOptions, signal: AbortSignal): Promise<{ text: string; usage: TokenUsage }>;
}

/** What a provider needs besides the endpoint. */
export interface LlmDeps {
  /** Encodes sentences for the extractive answerer (the job workers pass USE-Lite); absent: lexical only. */
  readonly encodeSentences?: (texts: readonly string[], signal: AbortSignal) => Promise<Float32Array[]>;
  /** Per-request timeout towards the provider, ms. */
  readonly timeoutMs?: number;
  /** Retries on 429/5xx/connection errors, with backoff. */
  readonly maxRetries?: number;
  /** The process's local GGUF model (job workers with LLM_MODEL_PATH): answers datasets without an endpoint. */
  readonly localModel?: LocalModel;
}

/** The OpenAI-compatible provider for a non-empty `endpoint.baseUrl`, else the local model if any, else the extractive answerer. */
export function createProvider(endpoint: LlmEndpoint, deps: LlmDeps): LlmProvider {
  if (endpoint.baseUrl.trim() === '') return deps.localModel ? new LlamaCppProvider(deps.localModel) : new ExtractiveProvider(deps);
  return new OpenAiChatProvider(endpoint, deps);
}

/** A topic name from its first user message (<= 100 chars, one line, never empty). */
export async function topicName(provider: LlmProvider, firstMessage: string, options: GenerationOptions, signal: AbortSignal): Promise<string> {
  // The instruction is the system message and the first message alone the user's: the extractive
  // answerer, which names a topic after the first words of the last user message, needs no case of its own.
  const { text } = await provider.complete(topicNameMessages(firstMessage), options, signal);
  return cleanTopicName(text, firstMessage);
}

/** Up to 10 suggested search queries from the given texts (POST /api/chunk/suggestions). */
export async function suggestQueries(
  provider: LlmProvider,
  texts: readonly string[],
  query: string | null,
  options: GenerationOptions,
  signal: AbortSignal,
): Promise<string[]> {
  // The extractive answerer cannot follow an instruction: it picks phrases of the texts itself.
  if (provider instanceof ExtractiveProvider) return provider.suggest(texts, query, signal);
  const { text } = await provider.complete(suggestionMessages(texts, query), options, signal);
  return parseSuggestions(text, query).slice(0, SUGGESTION_LIMIT);
}
