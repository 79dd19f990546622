/**
 * One RAG answer as the facade sees it: the generation job is enqueued for the job workers and
 * its Redis stream followed (`core/client/rag-client.ts`), so HTTP processes and workers scale
 * apart. The follower ends every answer: with the worker's `done` or `error`, or itself when the
 * worker was lost (its alive key gone while the job is taken or gone) or the deadline passed,
 * so a client never waits on a dead worker.
 */
import type { StreamEntry } from '../../core/client/rag-client.js';
import { QuarryError } from '../../core/domain/errors.js';
import { newId } from '../../core/domain/ids.js';
import type { GenerationRequest, StreamEvent, TokenUsage } from '../../core/domain/rag.js';
import type { Services } from '../context.js';

/** An answer being generated. */
export interface Answer {
  /** The job id: the TR-QueryID of the response and the RAG record's id. */
  readonly id: string;
  /** Text deltas as the worker writes them. Throws QuarryError: 'bad_request' (provider refused, before any text),
   *  'unavailable' (worker lost / job failed), 'timeout' (deadline). */
  deltas(): AsyncIterable<string>;
  /** Resolves with the usage once the answer is complete; rejects like deltas(). */
  readonly usage: Promise<TokenUsage>;
  /** Stops the job (sets the cancel key) — called when the client disconnects. Idempotent. */
  cancel(): Promise<void>;
}

/** Longest one XREAD blocks: how often a quiet answer checks its worker and its deadline, in ms. */
const POLL_MS = 1000;
/**
 * Quiet polls in a row that must find the job taken (or gone) with no worker holding it before
 * the worker counts as lost: one look may fall between a worker's release and the job's end.
 */
const LOST_AFTER_POLLS = 2;
/** How long the last read before calling a worker lost waits for entries already written, in ms. */
const LAST_READ_MS = 250;
/** The follower waits this long past the deadline for the worker's own timeout error, in ms. */
const DEADLINE_GRACE_MS = 1000;

/** The error of a stream's `error` event, as the facade throws it. */
function eventError(event: Extract<StreamEvent, { t: 'error' }>): QuarryError {
  const code = event.code ?? (event.provider ? 'bad_request' : 'unavailable');
  return new QuarryError(code, event.message);
}

/** Text deltas buffered for the one consumer of `deltas()`, then its end (usage) or its error. */
class DeltaQueue {
  private readonly items: string[] = [];
  private end: { ok: true } | { ok: false; error: QuarryError } | null = null;
  private wake: (() => void) | null = null;
  private taken = false;

  push(text: string): void {
    this.items.push(text);
    this.notify();
  }

  finish(error?: QuarryError): void {
    if (this.end) return;
    this.end = error ? { ok: false, error } : { ok: true };
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  async *iterate(): AsyncGenerator<string> {
    if (this.taken) throw new QuarryError('internal', 'deltas() of an answer can be read once');
    this.taken = true;
    for (;;) {
      if (this.items.length > 0) {
        // Everything buffered at once: a consumer that fell behind catches up in one write.
        yield this.items.splice(0).join('');
        continue;
      }
      if (this.end) {
        if (!this.end.ok) throw this.end.error;
        return;
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}

/**
 * Follows an answer's stream to its end into `queue`; resolves with the usage, rejects with the
 * QuarryError that ended it.
 */
async function follow(services: Services, id: string, deadlineAt: number, signal: AbortSignal, queue: DeltaQueue, first: Promise<StreamEntry[]>): Promise<TokenUsage> {
  const rag = services.jobs.rag;
  let after = '0';
  let lostPolls = 0;
  let pending: Promise<StreamEntry[]> | null = first;
  for (;;) {
    if (signal.aborted) throw new QuarryError('cancelled', 'the client closed the connection before the answer ended');
    const left = deadlineAt + DEADLINE_GRACE_MS - Date.now();
    if (left <= 0) throw new QuarryError('timeout', `the answer took longer than its deadline (${new Date(deadlineAt).toISOString()})`);
    const entries: StreamEntry[] = await (pending ?? rag.read(id, after, Math.min(POLL_MS, left)));
    pending = null;
    for (const { id: entryId, event } of entries) {
      after = entryId;
      if (event.t === 'delta') queue.push(event.text);
      else if (event.t === 'done') return event.usage;
      else throw eventError(event);
    }
    if (entries.length > 0) {
      lostPolls = 0;
      continue;
    }
    // A quiet second: is a worker still on it? Queued jobs wait for one (up to the deadline), and
    // so does a job taken by a worker that has not written its key yet.
    const holder = await rag.holder(id);
    if (holder === 'held') {
      lostPolls = 0;
      continue;
    }
    const state = await rag.state(id);
    lostPolls = state === 'queued' || (state === 'active' && holder === 'pending') ? 0 : lostPolls + 1;
    if (lostPolls >= LOST_AFTER_POLLS) {
      // The worker may have written its last events between the read and the checks. Entries
      // already there come back in one round trip of the shared read, which a 1 ms wait missed.
      const last = await rag.read(id, after, LAST_READ_MS);
      for (const { event } of last) {
        if (event.t === 'delta') queue.push(event.text);
        else if (event.t === 'done') return event.usage;
        else throw eventError(event);
      }
      throw new QuarryError('unavailable', 'the job worker generating this answer was lost before it finished', { retryAfterSeconds: 1 });
    }
  }
}

/** Enqueues a generation job and follows its Redis stream (XREAD BLOCK on a pooled connection of its own). */
export async function startAnswer(
  services: Services,
  datasetId: string,
  request: GenerationRequest,
  opts: { signal: AbortSignal; deadlineMs?: number },
): Promise<Answer> {
  const id = newId();
  const deadlineAt = Date.now() + (opts.deadlineMs ?? services.config.ragDeadlineMs);
  const rag = services.jobs.rag;
  let cancelled: Promise<void> | null = null;
  const cancel = (): Promise<void> =>
    (cancelled ??= rag.cancel(id).catch((err: unknown) => {
      // The worker then stops at its deadline; nothing else to do.
      services.logger.warn({ answer: id, err: (err as Error).message }, 'could not cancel an answer');
    }));
  if (opts.signal.aborted) throw new QuarryError('cancelled', 'the client closed the connection before the answer started');
  // The first read of the stream (from its start) is asked for in the same turn as the job: the
  // shared reader's wake and the job's script leave in one socket write. Handled here, since a
  // job that is not enqueued leaves it to end on its own timer (nothing is written to its key).
  const first = rag.read(id, '0', POLL_MS);
  first.catch(() => {});
  await rag.enqueue({ id, datasetId, request, deadlineAt });
  const queue = new DeltaQueue();
  const onAbort = (): void => void cancel();
  opts.signal.addEventListener('abort', onAbort, { once: true });
  const usage = follow(services, id, deadlineAt, opts.signal, queue, first).then(
    (u) => {
      queue.finish();
      return u;
    },
    (err: unknown) => {
      const error = err instanceof QuarryError ? err : new QuarryError('unavailable', `lost the answer stream: ${(err as Error).message}`, { cause: err });
      // The worker must not go on generating for nobody (deadline, lost stream, a cancelled client).
      if (error.code !== 'bad_request') void cancel();
      queue.finish(error);
      throw error;
    },
  );
  usage.finally(() => opts.signal.removeEventListener('abort', onAbort)).catch(() => {});
  return { id, deltas: () => queue.iterate(), usage, cancel };
}
