/**
 * Starts the analytics worker in its SCHED_IDLE thread (./analytics-thread.ts) and keeps it
 * running: a thread that dies is started again after a pause, as often as it takes (its active
 * jobs are taken again by BullMQ's stalled-job check, and the store ignores records it already
 * holds).
 */
// A thread, not a BullMQ worker (those are built by jobWorker() only: test/unit/job-worker.test.ts).
import { Worker as Thread } from 'node:worker_threads';
import type { Logger } from 'pino';
import { threadEntry } from '../../core/domain/thread-entry.js';

/** Pause before a dead analytics thread is replaced, in ms. */
const RESTART_DELAY_MS = 1000;

/** The running analytics thread. */
export interface AnalyticsThread {
  /** How the thread got its low priority: SCHED_IDLE, or nice 19 where that is unavailable. */
  readonly priority: 'idle' | 'nice';
  /** Lets the active jobs finish, closes the worker, its Redis connection and its store, and ends the thread (at most `timeoutMs`). */
  close(timeoutMs: number): Promise<void>;
}

/** Options of {@link startAnalyticsThread}. */
export interface AnalyticsThreadOptions {
  /** The thread's script (tests start a stand-in). @defaultValue ./analytics-thread */
  readonly entry?: string | URL;
  /** Pause before a dead thread is started again, in ms. @defaultValue 1000 */
  readonly restartDelayMs?: number;
}

/** Starts the thread; resolves once its worker takes jobs. */
export function startAnalyticsThread(logger: Logger, options: AnalyticsThreadOptions = {}): Promise<AnalyticsThread> {
  const entry = options.entry ?? threadEntry(import.meta.url, './analytics-thread');
  const restartDelayMs = options.restartDelayMs ?? RESTART_DELAY_MS;
  let closing = false;
  let current: Thread | null = null;
  let restart: NodeJS.Timeout | undefined;

  const start = (): Promise<'idle' | 'nice'> =>
    new Promise((ready, failed) => {
      const w = new Thread(entry);
      current = w;
      let started = false;
      w.on('message', (m: { ready: true; priority: 'idle' | 'nice' }) => {
        if (!m.ready) return;
        started = true;
        ready(m.priority);
      });
      w.on('error', (err) => logger.error({ err }, 'analytics thread failed'));
      w.on('exit', (code) => {
        current = null;
        if (!started) return failed(new Error(`analytics thread exited with code ${code} before it started`));
        if (closing) return;
        logger.error({ code }, 'analytics thread ended; starting it again');
        restartLater();
      });
    });
  // A thread that cannot start again (its store or Redis away) is tried again, not given up on.
  const restartLater = (): void => {
    restart = setTimeout(() => {
      start().catch((err: unknown) => {
        logger.error({ err }, 'analytics thread could not start again; retrying');
        if (!closing) restartLater();
      });
    }, restartDelayMs);
  };

  return start().then((priority) => ({
    priority,
    async close(timeoutMs) {
      closing = true;
      clearTimeout(restart);
      const w = current;
      if (w === null) return;
      const ended = new Promise<void>((resolve) => w.once('exit', () => resolve()));
      w.postMessage({ close: true });
      const timer = setTimeout(() => void w.terminate(), timeoutMs);
      await ended;
      clearTimeout(timer);
    },
  }));
}
