/**
 * RAG generation jobs: one job is one answer. The worker streams the provider's text into the
 * answer's Redis stream (`core/domain/rag.ts`), which the facade that enqueued it relays to its
 * client, and ends it with exactly one `done` or `error`. One attempt only (a retried answer
 * would send its text twice): a worker killed mid-answer is noticed by the facade through the
 * alive key this worker keeps fresh (it names the worker's Redis connection), and a stalled job
 * is failed, never run again (`maxStalledCount: 0` in main.ts).
 *
 * Answers wait on the language model, so a worker runs many at once; one heartbeat timer serves
 * all of them (a pipeline per tick refreshes their alive keys and reads their cancel keys).
 */
import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { embeddingSpec } from '../../core/domain/dataset-config.js';
import { QuarryError } from '../../core/domain/errors.js';
import {
  RAG_ALIVE_PENDING,
  RAG_ALIVE_TTL_MS,
  RAG_HEARTBEAT_MS,
  RAG_STREAM_TTL_S,
  ragAliveKey,
  ragCancelKey,
  ragStreamKey,
  type GenerationJob,
  type LlmEndpoint,
  type StreamErrorCode,
  type StreamEvent,
  type TokenUsage,
} from '../../core/domain/rag.js';
import type { EmbedderCache } from '../../core/embed/embedder-cache.js';
import type { LocalModel } from '../../core/llm/llama-cpp.js';
import { createProvider, type LlmDeps, type LlmProvider } from '../../core/llm/provider.js';

/**
 * Most answers one BullMQ worker of the RAG queue runs at once; a job process runs
 * QUARRY_RAG_CONCURRENCY answers on as many workers as it takes ({@link ragLanes}). A BullMQ
 * worker takes jobs one round trip at a time and starts none until it has taken all it may run
 * (up to its concurrency) or the queue is empty: with one worker of 100, all but the first few
 * answers of a burst of 100 started only once its last job was taken (bench/rag-streams.ts,
 * stage timestamps in bench/README.md). Workers of 16 take their jobs side by side and each
 * starts its answers after at most 16 round trips.
 */
export const RAG_LANE_CONCURRENCY = 16;

/** The concurrency of each RAG worker of a process running `concurrency` answers at once: as even as can be, none above {@link RAG_LANE_CONCURRENCY}. */
export function ragLanes(concurrency: number, perLane = RAG_LANE_CONCURRENCY): number[] {
  const lanes = Math.max(1, Math.ceil(concurrency / perLane));
  return Array.from({ length: lanes }, (_, i) => Math.floor(concurrency / lanes) + (i < concurrency % lanes ? 1 : 0));
}

/** Providers (one per endpoint) a worker keeps. */
const PROVIDERS_KEPT = 256;

/** The answers a worker is generating: their alive keys refreshed, their cancel keys watched. */
class AnswerWatch {
  private readonly answers = new Map<string, AbortController>();
  private timer: NodeJS.Timeout | null = null;
  private ticking = false;
  /**
   * The Redis client id of {@link redis}'s connection, the value of the alive keys: a follower
   * that finds this connection closed knows the process is gone. Null until learnt after each
   * (re)connect; the keys then say {@link RAG_ALIVE_PENDING}.
   */
  private clientId: string | null = null;

  constructor(
    private readonly redis: Redis,
    private readonly logger: Logger,
  ) {
    const learn = (): void => {
      redis.client('ID').then(
        (id) => (this.clientId = String(id)),
        (err: unknown) => this.logger.warn({ err: (err as Error).message }, 'could not read the redis client id'),
      );
    };
    redis.on('ready', learn);
    redis.on('close', () => (this.clientId = null));
    if (redis.status === 'ready') learn();
  }

  private get holder(): string {
    return this.clientId ?? RAG_ALIVE_PENDING;
  }

  /**
   * Marks the answer alive from now until {@link release}; `ctl` is aborted when the facade cancels
   * it. The key's write is not waited for: the provider's request starts at once, and the key
   * leaves in the same socket write as the other answers' commands. The facade counts a worker
   * lost only after two quiet polls (seconds), and a write that fails means Redis is away, which
   * the answer's stream writes then report.
   */
  hold(id: string, ctl: AbortController): void {
    this.answers.set(id, ctl);
    this.timer ??= setInterval(() => void this.tick(), RAG_HEARTBEAT_MS);
    this.redis.set(ragAliveKey(id), this.holder, 'PX', RAG_ALIVE_TTL_MS).catch((err: unknown) => this.logger.warn({ answer: id, err: (err as Error).message }, 'could not mark an answer alive'));
  }

  /** Stops watching the answer and drops its alive key. */
  async release(id: string): Promise<void> {
    this.answers.delete(id);
    if (this.answers.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
    await this.redis.del(ragAliveKey(id)).catch(() => {});
  }

  private async tick(): Promise<void> {
    if (this.ticking || this.answers.size === 0) return;
    this.ticking = true;
    const ids = [...this.answers.keys()];
    try {
      const pipeline = this.redis.pipeline();
      const holder = this.holder;
      for (const id of ids) pipeline.set(ragAliveKey(id), holder, 'PX', RAG_ALIVE_TTL_MS).exists(ragCancelKey(id));
      const replies = (await pipeline.exec()) ?? [];
      ids.forEach((id, i) => {
        const [err, cancelled] = replies[2 * i + 1] ?? [null, 0];
        if (!err && cancelled === 1) this.answers.get(id)?.abort(new QuarryError('cancelled', 'the client went away before the answer ended'));
      });
    } catch (err) {
      this.logger.warn({ err: (err as Error).message, answers: ids.length }, 'rag heartbeat failed');
    } finally {
      this.ticking = false;
    }
  }
}

/** How often a stream's TTL is renewed while it is written, in ms. */
const EXPIRE_EVERY_MS = (RAG_STREAM_TTL_S * 1000) / 4;

/**
 * The writer of one answer's stream. Deltas produced while a write is in flight are joined into
 * the next one: order is kept, and a fast provider costs one round trip per batch, not per token.
 */
class StreamWriter {
  private pending = '';
  /** When the stream's TTL was last renewed (epoch ms; never yet: -Infinity). */
  private expiredAt = Number.NEGATIVE_INFINITY;
  private writing: Promise<void> = Promise.resolve();
  private failed: Error | null = null;

  constructor(
    private readonly redis: Redis,
    private readonly key: string,
  ) {}

  delta(text: string): void {
    if (text === '') return;
    const idle = this.pending === '';
    this.pending += text;
    if (idle) this.writing = this.writing.then(() => this.flush());
  }

  /** Writes the pending text, then the last event; resolves when Redis has both. */
  async end(event: StreamEvent): Promise<void> {
    await this.writing;
    if (this.pending !== '') await this.flush();
    await this.add(event);
  }

  /** Throws the error of a failed write (the facade would miss text: the answer must fail). */
  check(): void {
    if (this.failed) throw this.failed;
  }

  private async flush(): Promise<void> {
    const text = this.pending;
    this.pending = '';
    if (text === '') return;
    try {
      await this.add({ t: 'delta', text });
    } catch (err) {
      this.failed ??= err as Error;
    }
  }

  private async add(event: StreamEvent): Promise<void> {
    // Plain commands on the auto-pipelined connection: the writes of every answer made in one
    // turn of the event loop leave in one socket write (an explicit pipeline is a write of its
    // own; with 100 answers streaming those writes were most of this process's CPU).
    const added = this.redis.xadd(this.key, '*', 'e', JSON.stringify(event));
    // The TTL is renewed with the first write and then every quarter of it, not with every token
    // (half of the commands an answer sent): an answer longer than the TTL still never loses its start.
    const now = Date.now();
    if (now - this.expiredAt < EXPIRE_EVERY_MS) {
      await added;
      return;
    }
    this.expiredAt = now;
    await Promise.all([added, this.redis.expire(this.key, RAG_STREAM_TTL_S)]);
  }
}

/** Settings of the provider requests a worker makes. */
export interface RagJobOptions {
  /** Longest one request to the provider may take, in ms. */
  readonly timeoutMs: number;
  /** Retries after a 429, a 5xx or a connection error. */
  readonly maxRetries: number;
  /** Whether the extractive answerer also ranks sentences by USE-Lite vectors (QUARRY_RAG_SENTENCE_VECTORS). */
  readonly sentenceVectors: boolean;
  /** The operator's GGUF model (LLM_MODEL_PATH), shared by every dataset without LLM_BASE_URL; absent: the extractive answerer. */
  readonly localModel?: LocalModel;
}

/** The error event of a failure; `sentText`: whether part of the answer already went out. */
function errorEvent(err: unknown, sentText: boolean): StreamEvent {
  if (err instanceof QuarryError && err.code !== 'internal') {
    const code: StreamErrorCode = err.code === 'bad_request' || err.code === 'timeout' || err.code === 'cancelled' ? err.code : 'unavailable';
    return { t: 'error', message: err.message, provider: code === 'bad_request' && !sentText, code };
  }
  return { t: 'error', message: 'the answer failed inside the job worker', provider: false, code: 'unavailable' };
}

/**
 * Builds the processor of the RAG queue on `redis` (a connection for commands, not BullMQ's
 * blocking one). With `sentenceVectors`, sentences of the extractive answerer are also encoded
 * with the embedded USE-Lite from `embedders`.
 */
export function ragProcessor(redis: Redis, embedders: EmbedderCache, logger: Logger, options: RagJobOptions) {
  const watch = new AnswerWatch(redis, logger);
  const deps: LlmDeps = {
    ...(options.sentenceVectors ? { encodeSentences: (texts: readonly string[], signal: AbortSignal) => embedders.get(embeddingSpec({})).embed(texts, 'doc', signal) } : {}),
    timeoutMs: options.timeoutMs,
    maxRetries: options.maxRetries,
    ...(options.localModel ? { localModel: options.localModel } : {}),
  };
  // Providers hold no state between answers: one per endpoint (the OpenAI client's construction
  // was a good part of an answer's start when 100 began at once). Bounded, oldest out first.
  const providers = new Map<string, LlmProvider>();
  const providerOf = (endpoint: LlmEndpoint): LlmProvider => {
    const key = JSON.stringify([endpoint.baseUrl, endpoint.apiKey]);
    let provider = providers.get(key);
    if (!provider) {
      if (providers.size >= PROVIDERS_KEPT) providers.delete(providers.keys().next().value!);
      providers.set(key, (provider = createProvider(endpoint, deps)));
    }
    return provider;
  };
  return async (job: Job<GenerationJob>): Promise<{ completed: boolean }> => {
    const { id, request, deadlineAt } = job.data;
    const ctl = new AbortController();
    const out = new StreamWriter(redis, ragStreamKey(id));
    const timer = setTimeout(() => ctl.abort(new QuarryError('timeout', 'the answer took longer than its deadline')), Math.max(0, deadlineAt - Date.now()));
    let sentText = false;
    // The provider's stream was read to its end: nothing upstream is left to stop.
    let drained = false;
    try {
      watch.hold(id, ctl);
      if (Date.now() >= deadlineAt) throw new QuarryError('timeout', 'the answer waited in the queue past its deadline');
      const tokens = providerOf(request.endpoint).stream(request, ctl.signal);
      let usage: TokenUsage;
      for (;;) {
        const r = await tokens.next();
        if (r.done) {
          usage = r.value;
          drained = true;
          break;
        }
        out.check();
        if (r.value !== '') sentText = true;
        out.delta(r.value);
      }
      out.check();
      await out.end({ t: 'done', usage });
      return { completed: true };
    } catch (err) {
      // An abort reason (cancel, deadline) is the QuarryError the provider rethrows, or the reason itself.
      const reason: unknown = ctl.signal.aborted && !(err instanceof QuarryError) ? ctl.signal.reason : err;
      if (!(reason instanceof QuarryError)) logger.error({ answer: id, err }, 'rag job failed');
      await out.end(errorEvent(reason, sentText)).catch((e: unknown) => logger.warn({ answer: id, err: (e as Error).message }, 'could not end an answer stream'));
      return { completed: false };
    } finally {
      clearTimeout(timer);
      // A failed stream write leaves the provider's generator suspended mid-answer: stop its
      // upstream work (an HTTP stream, or the local model holding one of its few sequences). A
      // provider that finished has none, and the abort of every finished answer cost ~0.8 ms of
      // CPU each (a DOMException, the HTTP client's abort handlers) at 100 starts at once.
      if (!drained) ctl.abort(new QuarryError('cancelled', 'the answer ended'));
      await watch.release(id);
    }
  };
}
