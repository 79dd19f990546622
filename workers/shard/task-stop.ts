/**
 * Stopping a running shard task from inside. Piscina terminates a thread whose running task is
 * aborted, and with it every shard the thread holds, so the core never aborts a task: it hands
 * the task an absolute deadline and a shared cancel flag, and long loops here poll them.
 *
 * A thread runs one task at a time and tasks are synchronous, so the current task's stop
 * condition is module state, set by the entry around each task.
 */

/** What a read task carries so that it can stop itself. */
export interface TaskStop {
  /** Epoch milliseconds after which the task gives up (Infinity: none). */
  readonly deadline: number;
  /** One Int32 in shared memory; the core stores 1 when the caller went away or its deadline passed. */
  readonly cancelled: Int32Array;
}

/** Thrown inside a task whose deadline passed or whose caller cancelled it. */
export class TaskStopped extends Error {
  constructor(readonly reason: 'deadline' | 'cancelled') {
    super(reason === 'deadline' ? 'the shard task passed its deadline' : 'the shard task was cancelled by its caller');
    this.name = 'TaskStopped';
  }
}

/** Units of work between two real checks: a clock read costs ~25 ns, a unit of work less. */
const CHECK_EVERY = 4096;

let current: TaskStop | null = null;
let budget = CHECK_EVERY;

/** Makes `stop` the condition of the task this thread starts now; throws if it is already met. */
export function beginTask(stop: TaskStop | undefined): void {
  current = stop ?? null;
  budget = CHECK_EVERY;
  if (current) checkNow(current);
}

/** Clears the condition after a task. */
export function endTask(): void {
  current = null;
}

/** Counts `work` units and, every {@link CHECK_EVERY}, throws {@link TaskStopped} if the task must stop. */
export function checkStop(work = 1): void {
  if (current === null) return;
  budget -= work;
  if (budget > 0) return;
  budget = CHECK_EVERY;
  checkNow(current);
}

function checkNow(stop: TaskStop): void {
  if (Atomics.load(stop.cancelled, 0) !== 0) throw new TaskStopped(Date.now() > stop.deadline ? 'deadline' : 'cancelled');
  if (Date.now() > stop.deadline) throw new TaskStopped('deadline');
}
