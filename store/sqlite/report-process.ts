/**
 * Report SQL run outside the HTTP process's event loop, with a deadline per statement. On SQLite
 * every read is synchronous: a report over millions of analytics rows run on the event loop would
 * hold every search in flight for its duration.
 *
 * The statements run in child processes (report-process-entry.ts), not worker threads, because a
 * statement past its deadline must stop using the CPU and nothing else can stop it: better-sqlite3
 * exposes no sqlite3_interrupt, and Worker.terminate() waits for the native call to return (a
 * 12 s statement terminated after 0.5 s still ran its 12 s). A process is killed at once; its
 * statement's report gets the 504 and a fresh process takes the next statement.
 *
 * Statements wait here, first come first served, and each process is given one at a time, so the
 * deadline counts from a statement's start, never its wait, and a statement queued behind one
 * that is killed was never sent to it. {@link REPORT_PROCESSES} processes run side by side, so a
 * short report is not queued behind one long statement; one organization's reports are already
 * held to one at a time while others have requests (facade/middleware/tenant-fairness.ts), so the
 * queue takes turns between organizations statement by statement.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { QuarryError } from '../../core/domain/errors.js';
import { reportTimeout, type ReportSql } from '../reports/report-sql.js';
import { decodeError, type EncodedError } from './write-protocol.js';

/**
 * Report processes per store: two, so that one statement at its deadline (seconds over millions of
 * rows) leaves another for every other report; each costs ~50 MB and is started only when needed.
 */
export const REPORT_PROCESSES = 2;

/** Options of {@link processReportSql}. */
export interface ReportProcessOptions {
  /** The SQLite file the reports read. */
  readonly file: string;
  /** Linux nice of the processes' statements (0 keeps the default priority). */
  readonly nice: number;
  /** Longest one statement may run, in ms; past it its process is killed and its report fails with `timeout` (504). */
  readonly timeoutMs: number;
  /**
   * Processes running statements side by side.
   * @defaultValue {@link REPORT_PROCESSES}
   */
  readonly processes?: number;
}

/** What the report process sends: once it is ready, then the answer to each statement. */
export type ReportReply = { readonly ready: true } | { readonly rows: Record<string, any>[] } | { readonly error: EncodedError };

/** One statement of a report, waiting or running. */
interface Job {
  readonly sql: string;
  readonly params: readonly unknown[];
  readonly resolve: (rows: Record<string, any>[]) => void;
  readonly reject: (err: Error) => void;
}

/** One report process and the statement it runs. */
interface Slot {
  child: ChildProcess | null;
  /** The process has opened the database: a statement sent now starts at once. */
  ready: boolean;
  job: Job | null;
  timer: NodeJS.Timeout | null;
}

/** The entry module and the flags to start it with: the compiled `.js`, or the `.ts` source through tsx (vitest, tsx). */
function entry(): { readonly modulePath: string; readonly execArgv: string[] } {
  const here = fileURLToPath(import.meta.url);
  const ext = path.extname(here);
  const modulePath = path.resolve(path.dirname(here), `report-process-entry${ext}`);
  // Not the parent's flags: an --inspect port or a test runner's loader is the parent's alone.
  return { modulePath, execArgv: ext === '.ts' ? ['--import', import.meta.resolve('tsx/esm')] : [] };
}

/** Report SQL over the SQLite file in processes of its own (see the module comment); `close` ends them. */
export function processReportSql(options: ReportProcessOptions): ReportSql & { close(): Promise<void> } {
  const { file, nice, timeoutMs } = options;
  const start = entry();
  const queue: Job[] = [];
  const slots: Slot[] = Array.from({ length: Math.max(1, options.processes ?? REPORT_PROCESSES) }, () => ({
    child: null,
    ready: false,
    job: null,
    timer: null,
  }));
  let closed = false;

  /** Takes the slot's statement off it (its timer too) and hands it back. */
  const take = (slot: Slot): Job | null => {
    const job = slot.job;
    slot.job = null;
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    // Idle, the process is not what keeps this one alive; busy, it is (a script awaits its report).
    slot.child?.channel?.unref();
    return job;
  };

  /** Sends the slot's statement once its process is ready; its deadline starts here. */
  const send = (slot: Slot): void => {
    const { child, job } = slot;
    if (!child || !slot.ready || !job || slot.timer) return;
    slot.timer = setTimeout(() => expire(slot), timeoutMs);
    child.send({ sql: job.sql, params: job.params }, (err) => {
      // A channel closed under the send: the process is going, and its exit fails the statement.
      if (err) child.kill('SIGKILL');
    });
  };

  /** Kills the slot's process, still running its statement at the deadline; the statements waiting are not its. */
  const expire = (slot: Slot): void => {
    const child = slot.child;
    slot.child = null;
    slot.ready = false;
    const job = take(slot);
    child?.kill('SIGKILL');
    job?.reject(reportTimeout(timeoutMs));
    pump();
  };

  const spawn = (slot: Slot): void => {
    const child = fork(start.modulePath, [file, String(nice)], {
      execArgv: start.execArgv,
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    // Its exit is not what this process waits for; its channel is, while a statement is in it (take, pump).
    child.unref();
    child.channel?.unref();
    slot.child = child;
    slot.ready = false;
    child.on('message', (m: ReportReply) => {
      if (slot.child !== child) return;
      if ('ready' in m) {
        slot.ready = true;
        send(slot);
        return;
      }
      const job = take(slot);
      if ('error' in m) job?.reject(decodeError(m.error));
      else job?.resolve(m.rows);
      pump();
    });
    const lost = (): void => {
      if (slot.child !== child) return;
      slot.child = null;
      slot.ready = false;
      // The statement it ran dies with it (it may be what killed it: not sent again); the waiting ones go to the next process.
      take(slot)?.reject(new QuarryError('unavailable', 'the analytics report process stopped; retry shortly', { retryAfterSeconds: 1 }));
      pump();
    };
    child.on('exit', lost);
    child.on('error', lost);
  };

  /** Gives waiting statements to idle slots, warm processes first. */
  const pump = (): void => {
    if (closed) return;
    for (const slot of [...slots].sort((a, b) => Number(b.ready) - Number(a.ready))) {
      if (queue.length === 0) return;
      if (slot.job) continue;
      slot.job = queue.shift()!;
      if (!slot.child) spawn(slot);
      slot.child?.channel?.ref();
      send(slot);
    }
  };

  return {
    dialect: 'sqlite',
    all(sql, params) {
      if (closed) return Promise.reject(new QuarryError('unavailable', 'the store is closing', { retryAfterSeconds: 1 }));
      return new Promise((resolve, reject) => {
        queue.push({ sql, params, resolve: resolve as Job['resolve'], reject });
        pump();
      });
    },
    async close() {
      closed = true;
      const closing = new QuarryError('unavailable', 'the store is closing', { retryAfterSeconds: 1 });
      for (const job of queue.splice(0)) job.reject(closing);
      const exits: Promise<unknown>[] = [];
      for (const slot of slots) {
        const child = slot.child;
        slot.child = null;
        slot.ready = false;
        take(slot)?.reject(closing);
        if (!child || child.exitCode !== null || child.signalCode !== null) continue;
        exits.push(new Promise((resolve) => child.once('exit', resolve)));
        // Unreferenced, its exit would not keep this process alive long enough to be waited for.
        child.ref();
        child.kill('SIGKILL');
      }
      await Promise.all(exits);
    },
  };
}
