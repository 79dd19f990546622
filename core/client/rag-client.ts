/**
 * The facade's side of a RAG answer's transport: enqueues the generation job and follows the
 * answer's Redis stream (`core/domain/rag.ts`). A follower blocks in `XREAD BLOCK` on a
 * connection of its own, taken from a pool: a blocked connection serves nothing else, and a
 * fresh connection per answer would add its handshake to every answer's first byte.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { QuarryError } from '../domain/errors.js';
import {
  RAG_GENERATE_JOB,
  RAG_QUEUE,
  RAG_STREAM_TTL_S,
  ragAliveKey,
  ragCancelKey,
  ragStreamKey,
  type GenerationJob,
  type StreamEvent,
} from '../domain/rag.js';

/** One entry of an answer's stream: its Redis id (to read on from) and its event. */
export interface StreamEntry {
  readonly id: string;
  readonly event: StreamEvent;
}

/** Where a generation job is, as far as the queue knows. */
export type RagJobState = 'queued' | 'active' | 'gone';

/** The transport of RAG answers between the facade and the job workers. */
export interface RagClient {
  /** Enqueues a generation job (503 when Redis does not take it). */
  enqueue(job: GenerationJob): Promise<void>;
  /** Entries of the answer's stream after `after` (`'0'`: from the start), waiting at most `blockMs` for one; [] when none came. */
  read(id: string, after: string, blockMs: number): Promise<StreamEntry[]>;
  /** Asks the worker to stop the answer (it aborts the upstream request). */
  cancel(id: string): Promise<void>;
  /** Whether a worker holds the answer now (its alive key is set). */
  alive(id: string): Promise<boolean>;
  /** Where the job is in the queue: waiting for a worker, taken, or gone (finished or failed). */
  state(id: string): Promise<RagJobState>;
  close(): Promise<void>;
}

/** Idle blocking connections kept for the next answers (a Redis connection idles in a few KB); beyond it they are closed after use. */
const IDLE_READERS = 256;

const unavailable = (what: string, err: unknown): QuarryError =>
  new QuarryError('unavailable', `${what}: ${(err as Error).message}`, { cause: err, retryAfterSeconds: 5 });

/** Parses the entries of one stream of an XREAD reply. */
function entriesOf(reply: [string, [string, string[]][]][] | null): StreamEntry[] {
  if (!reply) return [];
  const out: StreamEntry[] = [];
  for (const [, entries] of reply) {
    for (const [id, fields] of entries) {
      const at = fields.indexOf('e');
      if (at < 0 || at + 1 >= fields.length) continue;
      out.push({ id, event: JSON.parse(fields[at + 1]!) as StreamEvent });
    }
  }
  return out;
}

/**
 * A RAG client on `redis` (commands that do not block, shared with the other producers) and
 * `url` (the blocking readers, connected on first use).
 */
export function ragClient(redis: Redis, url: string): RagClient {
  const queue = new Queue<GenerationJob>(RAG_QUEUE, { connection: redis });
  queue.on('error', () => {});
  const idle: Redis[] = [];
  const busy = new Set<Redis>();
  let closed = false;

  const acquire = async (): Promise<Redis> => {
    const reused = idle.pop();
    if (reused) return reused;
    // No offline queue: a read while Redis is away fails at once (the answer ends), never hangs.
    const conn = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true });
    conn.on('error', () => {
      /* surfaced by the read that fails */
    });
    await conn.connect();
    return conn;
  };
  const release = (conn: Redis, healthy: boolean): void => {
    busy.delete(conn);
    if (healthy && !closed && idle.length < IDLE_READERS && conn.status === 'ready') idle.push(conn);
    else conn.disconnect();
  };

  return {
    async enqueue(job) {
      try {
        // One attempt: a retried answer would send its text twice. The job id names the stream.
        await queue.add(RAG_GENERATE_JOB, job, { jobId: job.id, attempts: 1, removeOnComplete: true, removeOnFail: { age: RAG_STREAM_TTL_S } });
      } catch (err) {
        throw unavailable('could not enqueue the answer', err);
      }
    },
    async read(id, after, blockMs) {
      let conn: Redis;
      try {
        conn = await acquire();
      } catch (err) {
        throw unavailable('could not read the answer', err);
      }
      busy.add(conn);
      let healthy = false;
      try {
        const reply = await conn.xread('BLOCK', Math.max(1, Math.round(blockMs)), 'STREAMS', ragStreamKey(id), after);
        healthy = true;
        return entriesOf(reply);
      } catch (err) {
        throw unavailable('lost the answer stream', err);
      } finally {
        release(conn, healthy);
      }
    },
    async cancel(id) {
      await redis.set(ragCancelKey(id), '1', 'EX', RAG_STREAM_TTL_S);
    },
    async alive(id) {
      return (await redis.exists(ragAliveKey(id))) === 1;
    },
    async state(id) {
      const state = await queue.getJobState(id);
      if (state === 'active') return 'active';
      if (state === 'completed' || state === 'failed' || state === 'unknown') return 'gone';
      return 'queued';
    },
    async close() {
      closed = true;
      await queue.close().catch(() => {});
      for (const conn of [...idle, ...busy]) conn.disconnect();
      idle.length = 0;
      busy.clear();
    },
  };
}
