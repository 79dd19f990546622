/**
 * The facade's side of a RAG answer's transport: enqueues the generation job and follows the
 * answer's Redis stream (`core/domain/rag.ts`) through the process's one shared blocking reader
 * (`rag-stream-reader.ts`).
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { QuarryError } from '../domain/errors.js';
import { RAG_ALIVE_PENDING, RAG_ALIVE_TTL_MS, RAG_GENERATE_JOB, RAG_QUEUE, RAG_STREAM_TTL_S, ragAliveKey, ragCancelKey, type GenerationJob } from '../domain/rag.js';
import { SharedStreamReader, type StreamEntry } from './rag-stream-reader.js';

export type { StreamEntry } from './rag-stream-reader.js';

/** Where a generation job is, as far as the queue knows. */
export type RagJobState = 'queued' | 'active' | 'gone';

/**
 * Who holds an answer, from its alive key: a worker whose connection is open (`held`), nobody yet
 * (`pending`: the job is queued or being taken), or nobody any more (`none`: the key ran out, or
 * the worker that wrote it is disconnected, i.e. killed).
 */
export type RagHolder = 'held' | 'pending' | 'none';

/** The transport of RAG answers between the facade and the job workers. */
export interface RagClient {
  /** Enqueues a generation job (503 when Redis does not take it). */
  enqueue(job: GenerationJob): Promise<void>;
  /** Entries of the answer's stream after `after` (`'0'`: from the start), waiting at most `blockMs` for one; [] when none came. */
  read(id: string, after: string, blockMs: number): Promise<StreamEntry[]>;
  /** Asks the worker to stop the answer (it aborts the upstream request). */
  cancel(id: string): Promise<void>;
  /** Who holds the answer now (its alive key, and the connection it names). */
  holder(id: string): Promise<RagHolder>;
  /** Where the job is in the queue: waiting for a worker, taken, or gone (finished or failed). */
  state(id: string): Promise<RagJobState>;
  close(): Promise<void>;
}

const unavailable = (what: string, err: unknown): QuarryError =>
  new QuarryError('unavailable', `${what}: ${(err as Error).message}`, { cause: err, retryAfterSeconds: 5 });

/**
 * A RAG client on Redis at `url`: a command connection of its own, auto-pipelined, and the
 * shared blocking reader's connection (made on first use).
 */
export function ragClient(url: string): RagClient {
  // Auto-pipelined: the commands of every answer started in one turn of the event loop (the
  // job's script, the reader's wake) leave in one socket write; a write per command was most of
  // what an answer's start cost this process besides Koa. No offline queue, as the other
  // producers: while Redis is away an answer fails at once (503), never hangs.
  const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, enableAutoPipelining: true });
  redis.on('error', () => {
    /* reported through enqueue and read failures */
  });
  const queue = new Queue<GenerationJob>(RAG_QUEUE, { connection: redis });
  queue.on('error', () => {});
  const reader = new SharedStreamReader(redis, url);

  return {
    async enqueue(job) {
      try {
        // One attempt: a retried answer would send its text twice. The job id names the stream.
        // The alive key first, on the same connection: a worker that takes the job finds it set
        // and overwrites it. It lasts until the answer's deadline (a queued job waits that long).
        const mark = redis.set(ragAliveKey(job.id), RAG_ALIVE_PENDING, 'PX', Math.max(1, job.deadlineAt - Date.now()) + RAG_ALIVE_TTL_MS);
        const added = queue.add(RAG_GENERATE_JOB, job, { jobId: job.id, attempts: 1, removeOnComplete: true, removeOnFail: { age: RAG_STREAM_TTL_S } });
        // A mark that failed leaves the follower to the job's state until a worker writes the key.
        await Promise.all([mark.catch(() => undefined), added]);
      } catch (err) {
        throw unavailable('could not enqueue the answer', err);
      }
    },
    async read(id, after, blockMs) {
      try {
        return await reader.read(id, after, blockMs);
      } catch (err) {
        throw unavailable('lost the answer stream', err);
      }
    },
    async cancel(id) {
      await redis.set(ragCancelKey(id), '1', 'EX', RAG_STREAM_TTL_S);
    },
    async holder(id) {
      const value = await redis.get(ragAliveKey(id));
      if (value === null) return 'none';
      if (!/^[0-9]+$/.test(value)) return 'pending';
      try {
        // CLIENT LIST ID (Redis 5+): empty once the worker's connection closed.
        const listed = (await redis.client('LIST', 'ID', value)) as string;
        return listed.trim() === '' ? 'none' : 'held';
      } catch {
        // A server that refuses CLIENT (some managed ones): the key's age alone decides.
        return 'held';
      }
    },
    async state(id) {
      const state = await queue.getJobState(id);
      if (state === 'active') return 'active';
      if (state === 'completed' || state === 'failed' || state === 'unknown') return 'gone';
      return 'queued';
    },
    async close() {
      reader.close();
      await queue.close().catch(() => {});
      redis.disconnect();
    },
  };
}
