/**
 * Retrieval-augmented generation: the records (topics, messages, RAG analytics), the generation
 * request every provider takes, and the job that carries it from the facade to the job workers
 * with its tokens flowing back through a Redis stream. One module so that the facade, the job
 * workers, the store and the providers (`core/llm/`) agree on one shape.
 */

/** A chat role on the wire (`prev_messages[].role`, `messages.role`). */
export type ChatRole = 'system' | 'user' | 'assistant';

/** One message of a conversation. */
export interface ChatMessage {
  readonly role: ChatRole;
  readonly content: string;
}

/** One retrieved document given to the model, numbered from 1 in the order the caller chose. */
export interface RagDoc {
  /** 1-based doc number the answer cites as `[n]`. */
  readonly n: number;
  readonly chunkId: string;
  /** The chunk's text (html converted to text). */
  readonly text: string;
  readonly link: string | null;
  readonly numValue: number | null;
  /** Image urls of the chunk, sent only with `image_config.use_images`. */
  readonly imageUrls: readonly string[];
}

/** Sampling and provider options of one generation; every value already range-checked by the facade. */
export interface GenerationOptions {
  /** Chat model name; the dataset's `LLM_DEFAULT_MODEL` when the caller gave none. */
  readonly model: string;
  /** 0..2. */
  readonly temperature: number;
  /** -2..2. */
  readonly frequencyPenalty: number;
  /** -2..2. */
  readonly presencePenalty: number;
  /** Undefined: the provider's default. */
  readonly maxTokens?: number;
  /** At most 4. */
  readonly stopTokens: readonly string[];
}

/**
 * Where a provider is reached, from the dataset's `server_configuration`: an empty `baseUrl`
 * means the embedded extractive answerer.
 */
export interface LlmEndpoint {
  readonly baseUrl: string;
  readonly apiKey: string;
}

/**
 * What a provider is asked to answer: the docs and the conversation, structured, so that the
 * OpenAI-compatible provider can build the chat messages of wire-format 5.6 and the extractive
 * one can pick sentences from the docs for the last question.
 */
export interface GenerationRequest {
  /** `chosen_chunks`: /api/chunk/generate; `all_chunks`: a topic message's search then answer. */
  readonly ragType: RagType;
  /** The dataset's SYSTEM_PROMPT. */
  readonly systemPrompt: string;
  /** The dataset's RAG_PROMPT, or the request's `prompt` (honoured; the spec wins over the reference). */
  readonly ragPrompt: string;
  readonly docs: readonly RagDoc[];
  /** Earlier turns, oldest first, without the last user message. */
  readonly history: readonly ChatMessage[];
  /** The last user message: what is answered. */
  readonly question: string;
  /** Image urls the caller attached to the question. */
  readonly imageUrls: readonly string[];
  /** `context_options.include_links`: each doc carries its link. */
  readonly includeLinks: boolean;
  /**
   * Topic chat (`all_chunks`): the `currency` of the message body, written before each doc's
   * num_value (`"USD 3"`) as the reference does. Absent: the number alone.
   */
  readonly currency?: string;
  /** `image_config.use_images` and `images_per_chunk`. */
  readonly images: { readonly use: boolean; readonly perChunk: number };
  readonly options: GenerationOptions;
  readonly endpoint: LlmEndpoint;
}

/** Token counts of a finished generation (the provider's usage, or counted when it sent none). */
export interface TokenUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
}

/** `rag_type` of a RAG analytics record. */
export type RagType = 'chosen_chunks' | 'all_chunks';

/** A topic: one conversation of a dataset, owned by a caller-chosen id. */
export interface TopicRecord {
  readonly id: string;
  readonly datasetId: string;
  readonly name: string;
  readonly ownerId: string;
  readonly metadata: unknown;
  readonly deleted: boolean;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A stored message of a topic, `sortOrder` from 1 without gaps among live messages. */
export interface MessageRecord {
  readonly id: string;
  readonly topicId: string;
  readonly datasetId: string;
  readonly sortOrder: number;
  readonly role: ChatRole;
  readonly content: string;
  readonly deleted: boolean;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** A RAG call as recorded for analytics (stored in `rag_queries`). */
export interface RagRecord {
  /** Uuid; the `TR-QueryID` header of the answer. */
  readonly id: string;
  readonly datasetId: string;
  readonly ragType: RagType;
  /** The last user message. */
  readonly userMessage: string;
  /** The search record's id when a search chose the docs (topic messages); null otherwise. */
  readonly searchId: string | null;
  readonly topicId: string | null;
  /** The docs' chunk ids and scores, in doc order (score 0 for chosen chunks). */
  readonly results: readonly { readonly id: string; readonly score: number }[];
  readonly llmResponse: string;
  /** Score of the first doc; 0 when there is none. */
  readonly topScore: number;
  readonly userId: string | null;
  readonly metadata: unknown;
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** Time from the request to the last token, in milliseconds. */
  readonly latencyMs: number;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  /** How much of the answer a caller's checker judged made up (`rag` user events carry it); 0 when absent. */
  readonly hallucinationScore?: number;
  /** The claims a caller's checker judged made up; none when absent. */
  readonly detectedHallucinations?: readonly string[];
}

/** The queue of generation jobs: one job per answer, run by the job workers. */
export const RAG_QUEUE = 'quarry-rag';

/** Name of the job that generates one answer. */
export const RAG_GENERATE_JOB = 'generate';

/**
 * Payload of a generation job. `id` is the job id and names the answer's Redis stream; the facade
 * that enqueued it reads the stream and relays it to its client.
 */
export interface GenerationJob {
  readonly id: string;
  readonly datasetId: string;
  readonly request: GenerationRequest;
  /** Epoch ms after which the worker stops and ends the stream with an error. */
  readonly deadlineAt: number;
}

/** Seconds a finished (or abandoned) answer's stream and cancel keys live in Redis. */
export const RAG_STREAM_TTL_S = 300;

/** The Redis stream of one answer's events (XADD by the worker, XREAD BLOCK by the facade). */
export const ragStreamKey = (id: string): string => `quarry:rag:${id}:out`;

/** Set by the facade when its client went away: the worker aborts the upstream request and stops. */
export const ragCancelKey = (id: string): string => `quarry:rag:${id}:cancel`;

/**
 * One entry of an answer's stream (field `e`, JSON): text deltas in order, then exactly one
 * `done` (with the usage) or one `error` (a message safe to show the client, and whether it is
 * the caller's fault, i.e. a 400 "Bad response from LLM server provider: ..." before any text).
 * A worker that dies mid-answer writes neither: the facade ends the answer itself when the job
 * fails or the deadline passes.
 */
export type StreamEvent =
  | { readonly t: 'delta'; readonly text: string }
  | { readonly t: 'done'; readonly usage: TokenUsage }
  | { readonly t: 'error'; readonly message: string; readonly provider: boolean; readonly code?: StreamErrorCode };

/**
 * Who holds an answer. The follower sets it to {@link RAG_ALIVE_PENDING} when it enqueues the job;
 * the job worker that takes the job overwrites it with the Redis client id of its connection and
 * refreshes it every {@link RAG_HEARTBEAT_MS} (it lives {@link RAG_ALIVE_TTL_MS}). A follower that
 * finds the job taken and the key gone, or the holder's connection closed (a killed process), knows
 * the worker was lost and ends its answer instead of waiting for the deadline. The connection,
 * not only the key's age, tells: a worker starved of CPU (the job process runs at a low priority)
 * may miss heartbeats for seconds and still be working.
 */
export const ragAliveKey = (id: string): string => `quarry:rag:${id}:alive`;

/** The value of an alive key no worker has written yet: the job is queued, or being taken. */
export const RAG_ALIVE_PENDING = 'pending';

/** How often a job worker refreshes the alive keys of its answers and checks their cancel keys, in ms. */
export const RAG_HEARTBEAT_MS = 250;

/**
 * Lifetime of an alive key, in ms: how long a worker whose connection stays open (partitioned,
 * hung, or starved of CPU) may go without a heartbeat before its answers count as lost. A killed
 * worker is noticed sooner, by its closed connection.
 */
export const RAG_ALIVE_TTL_MS = 15_000;

/** Error codes an `error` {@link StreamEvent} may carry (additive field `code`; absent: `bad_request` when `provider`, else `unavailable`). */
export type StreamErrorCode = 'bad_request' | 'timeout' | 'cancelled' | 'unavailable';
