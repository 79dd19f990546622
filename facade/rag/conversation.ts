/**
 * A topic message's answer, assembled: the earlier turns as the model sees them (stored answers
 * without their chunks), the query a message searches with, the searched chunks as documents
 * and as the JSON the client receives, the `GenerationRequest`, and the one string an answer is
 * stored and sent as: `<JSON chunks>||<completion>`, or `<completion>||<JSON chunks>` with
 * `completion_first` (the reference's format, which chat clients split on `||`).
 */
import type { ChunkRecord } from '../../core/domain/chunk.js';
import { llmSpec } from '../../core/domain/dataset-config.js';
import { htmlToText } from '../../core/domain/html-text.js';
import { LIMITS } from '../../core/domain/limits.js';
import type { ChatMessage, GenerationOptions, GenerationRequest, MessageRecord, RagDoc } from '../../core/domain/rag.js';
import { highlightChunk, type HighlightOptions } from '../highlight/index.js';
import { chunkV1 } from '../present/chunk.js';
import type { LlmChoices } from '../schemas/message.js';

/** The separator between the chunks' JSON and the completion. */
export const SEPARATOR = '||';

/** A searched chunk and its score. */
export interface ScoredChunk {
  readonly c: ChunkRecord;
  readonly score: number;
}

/** Whether `text` is a JSON array of objects: chunks, and not a completion such as `[1]`. */
const isChunksJson = (text: string): boolean => {
  if (!text.startsWith('[') || !text.endsWith(']')) return false;
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) && v.every((c) => typeof c === 'object' && c !== null && !Array.isArray(c));
  } catch {
    return false;
  }
};

/**
 * The completion of a stored answer, without its chunks. The chunks' JSON never holds `||` (it
 * is stripped when the answer is built) while the completion may: chunks first, the first `||`
 * ends them; completion first, the last `||` starts them. Only a completion that is itself a
 * JSON array of objects (or `[]`) put first could be taken for chunks.
 */
export function answerText(content: string): string {
  const first = content.indexOf(SEPARATOR);
  if (first < 0) return content;
  if (isChunksJson(content.slice(0, first))) return content.slice(first + SEPARATOR.length);
  const last = content.lastIndexOf(SEPARATOR);
  if (isChunksJson(content.slice(last + SEPARATOR.length))) return content.slice(0, last);
  return content;
}

/** The last `include` stored messages as chat turns, answers without their chunks. */
export function historyOf(messages: readonly MessageRecord[], include: number): ChatMessage[] {
  const kept = include === 0 ? [] : messages.slice(-include);
  return kept.map((m) => ({ role: m.role, content: m.role === 'assistant' ? answerText(m.content) : m.content }));
}

/**
 * The text a message searches with: `search_query`, else the question, or with
 * `concat_user_messages_query` every user message of the conversation and the question joined by
 * blank lines. Cut to the longest query a search takes (the start is kept).
 */
export function searchText(searchQuery: string | null, question: string, before: readonly MessageRecord[], concat: boolean): string {
  const text = searchQuery ?? (concat ? [...before.filter((m) => m.role === 'user').map((m) => m.content), question].join('\n\n') : question);
  return text.length > LIMITS.queryLength ? text.slice(0, LIMITS.queryLength) : text;
}

/**
 * The chunks as the client receives them: flat V1 chunks (comma-joined tag_set) with
 * `highlights` and `score`; chunk_html marked up when `highlight` is given.
 */
export function chunkObjects(results: readonly ScoredChunk[], highlight: HighlightOptions | null, query: string): Record<string, unknown>[] {
  return results.map((r) => {
    const chunk = chunkV1(r.c);
    if (!highlight) return { ...chunk, highlights: null, score: r.score };
    const h = highlightChunk(r.c.chunkHtml ?? '', query, highlight);
    return { ...chunk, chunk_html: h.html, highlights: h.highlights, score: r.score };
  });
}

/** The chunks' JSON with every `||` removed, so the one separator can be found again. */
export const chunksJson = (objects: readonly Record<string, unknown>[]): string => JSON.stringify(objects).replaceAll(SEPARATOR, '');

/** The answer as one string: chunks then completion, or completion then chunks. */
export function combined(chunks: string, completion: string, completionFirst: boolean): string {
  return completionFirst ? `${completion}${SEPARATOR}${chunks}` : `${chunks}${SEPARATOR}${completion}`;
}

/** The doc numbers an answer cites as `[n]` (also `[1, 2]`), within 1..`docs`. */
export function citedDocs(completion: string, docs: number): Set<number> {
  const cited = new Set<number>();
  // Bounded: a bracket holds at most 64 characters of digits, commas and spaces.
  for (const m of completion.matchAll(/\[([\d,\s]{1,64})\]/g)) {
    for (const part of m[1]!.split(',')) {
      const n = Number(part.trim());
      if (Number.isInteger(n) && n >= 1 && n <= docs) cited.add(n);
    }
  }
  return cited;
}

/** The documents the model answers from: the searched chunks in rank order, or `rag_context` alone. */
export function docsOf(results: readonly ScoredChunk[], ragContext: string | null): RagDoc[] {
  if (ragContext !== null) return [{ n: 1, chunkId: '', text: ragContext, link: null, numValue: null, imageUrls: [] }];
  return results.map((r, i) => ({
    n: i + 1,
    chunkId: r.c.id,
    text: htmlToText(r.c.chunkHtml ?? ''),
    link: r.c.link,
    numValue: r.c.numValue,
    imageUrls: r.c.imageUrls ?? [],
  }));
}

/** Penalties of an answer when the caller sets none (the reference's defaults). */
const DEFAULT_PENALTY = 0.7;

/** The sampling options: the caller's, else the dataset's (TEMPERATURE, LLM_DEFAULT_MODEL), else the defaults. */
export function generationOptions(config: Record<string, unknown>, llm: LlmChoices, model: string | null): GenerationOptions {
  const spec = llmSpec(config);
  return {
    model: model ?? spec.model,
    temperature: llm.temperature ?? spec.temperature,
    frequencyPenalty: llm.frequencyPenalty ?? DEFAULT_PENALTY,
    presencePenalty: llm.presencePenalty ?? DEFAULT_PENALTY,
    ...(llm.maxTokens !== null ? { maxTokens: llm.maxTokens } : {}),
    stopTokens: llm.stopTokens,
  };
}

/** What {@link conversationRequest} needs. */
export interface Conversation {
  readonly config: Record<string, unknown>;
  readonly llm: LlmChoices;
  readonly model: string | null;
  readonly docs: readonly RagDoc[];
  readonly history: readonly ChatMessage[];
  readonly question: string;
  readonly imageUrls: readonly string[];
  readonly includeLinks: boolean;
  /** Written before each doc's num_value in the prompt (null: the number alone). */
  readonly currency: string | null;
}

/** The generation request of a topic message (rag type `all_chunks`). */
export function conversationRequest(c: Conversation): GenerationRequest {
  const spec = llmSpec(c.config);
  return {
    ragType: 'all_chunks',
    systemPrompt: c.llm.systemPrompt ?? spec.systemPrompt,
    ragPrompt: spec.ragPrompt,
    docs: c.docs,
    history: c.history,
    question: c.question,
    imageUrls: c.imageUrls,
    includeLinks: c.includeLinks,
    ...(c.currency !== null ? { currency: c.currency } : {}),
    images: c.llm.images,
    options: generationOptions(c.config, c.llm, c.model),
    endpoint: spec.endpoint,
  };
}
