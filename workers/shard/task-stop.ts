/**
 * Stopping a running shard task from inside. Piscina terminates a thread whose running task is
 * aborted, and with it every shard the thread holds, so the core never aborts a task: it hands
 * the task an absolute deadline and a shared cancel flag, and long loops here poll them.
 *
 * Tasks are synchronous and a thread runs one at a time, except that the scheduler may run
 * another dataset's task inside {@link checkStop}; the current task's stop condition is module
 * state, saved and restored around each task.
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
let yieldHook: (() => void) | null = null;

/** What a task saved of the one it interrupted (see {@link beginTask}). */
export interface SavedTask {
  readonly stop: TaskStop | null;
  readonly budget: number;
}

/**
 * Makes `stop` the condition of the task this thread starts now and returns the condition of the
 * task it interrupts (null at top level), for {@link endTask}. Throws if `stop` is already met.
 */
export function beginTask(stop: TaskStop | undefined): SavedTask {
  const saved = { stop: current, budget };
  current = stop ?? null;
  budget = CHECK_EVERY;
  if (current) {
    try {
      checkNow(current);
    } catch (err) {
      endTask(saved);
      throw err;
    }
  }
  return saved;
}

/** Restores the condition of the task that was running before (none after a top-level task). */
export function endTask(saved?: SavedTask): void {
  current = saved?.stop ?? null;
  budget = saved?.budget ?? CHECK_EVERY;
}

/**
 * Sets what runs at every real check (the thread's scheduler, which may run another tenant's
 * task there; see scheduler.ts). Null: nothing, as in a shard used in-process.
 */
export function setYieldHook(hook: (() => void) | null): void {
  yieldHook = hook;
}

/**
 * Counts `work` units and, every {@link CHECK_EVERY}, throws {@link TaskStopped} if the task must
 * stop, then lets the scheduler run other tenants' waiting tasks. Call it only where the task's
 * own state is consistent: another dataset's task may run inside this call.
 */
export function checkStop(work = 1): void {
  budget -= work;
  if (budget > 0) return;
  budget = CHECK_EVERY;
  if (current) checkNow(current);
  if (yieldHook) {
    yieldHook();
    // The interrupting tasks may have passed this one's deadline.
    if (current) checkNow(current);
  }
}

/**
 * Like {@link checkStop} but never throws: for points inside a step whose scratch is mid-update
 * (stopping there would leave it dirty for the next search), where only other datasets' tasks may
 * run. The step's own end must still reach a {@link checkStop}.
 */
export function checkYield(work = 1): void {
  budget -= work;
  if (budget > 0) return;
  budget = CHECK_EVERY;
  if (yieldHook) yieldHook();
}

function checkNow(stop: TaskStop): void {
  if (Atomics.load(stop.cancelled, 0) !== 0) throw new TaskStopped(Date.now() > stop.deadline ? 'deadline' : 'cancelled');
  if (Date.now() > stop.deadline) throw new TaskStopped('deadline');
}
