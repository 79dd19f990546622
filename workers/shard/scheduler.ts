/**
 * The order in which one shard thread runs its tasks: fair between datasets, and a long task
 * shares the thread instead of holding it.
 *
 * Every task of a dataset goes to its dataset's lane (first in, first out: a write and the search
 * after it keep their order). The thread runs the head of the lane that has used the least thread
 * time lately (exponentially decayed, {@link HALF_LIFE_MS}), so a tenant sending cheap searches is
 * served ahead of one that keeps the thread busy, whatever the arrival order.
 *
 * Tasks are synchronous, so sharing the thread is done by nesting: every {@link SLICE_MS} a
 * running task reaches a check in its loops (`checkStop`), pulls the messages that arrived
 * meanwhile, and runs there, to completion, the head of any other lane that has used less time
 * than its own (itself preemptible the same way, up to {@link MAX_DEPTH} deep). A lane never
 * nests inside itself, so a task never sees its own shard change under it; tasks of different
 * datasets share no mutable state (each index has its own scratch).
 */
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import type { ShardMessage } from './protocol.js';
import { setYieldHook } from './task-stop.js';

/** A running task lets waiting lanes in after this much thread time. */
export const SLICE_MS = 1;
/**
 * Lane usage halves every this many ms. Short, so that a tenant that was busy a moment ago is not
 * held back long, and a newly heavy one is preempted after a few ms of thread time.
 */
export const HALF_LIFE_MS = 200;
/** Deepest nesting of interrupting tasks (each holds its caller's stack). */
export const MAX_DEPTH = 8;

/** One task as the core posts it. */
export interface Job {
  readonly id: number;
  readonly task: ShardMessage;
}

interface Lane {
  readonly key: string;
  readonly queue: Job[];
  /** Index of the head in `queue` (shifting an array per task is O(n)). */
  head: number;
  /** Thread ms used, decayed to `stamp`. */
  usage: number;
  stamp: number;
  /** A task of this lane is running (maybe interrupted): no other task of it may start. */
  running: boolean;
}

interface Frame {
  readonly lane: Lane;
  readonly started: number;
  /** Time spent in tasks nested inside this one. */
  nested: number;
  sliceStart: number;
}

/** Runs jobs of one thread fairly; `run` executes one synchronously and delivers its reply. */
export class Scheduler {
  private readonly lanes = new Map<string, Lane>();
  private readonly arrival = new WeakMap<Job, number>();
  private arrivals = 0;
  private waiting = 0;
  private readonly stack: Frame[] = [];
  private draining = false;

  constructor(
    private readonly port: MessagePort,
    private readonly run: (job: Job) => void,
  ) {
    setYieldHook(() => this.yieldPoint());
  }

  /** Queues a job that arrived through the port's message event, and runs until nothing waits. */
  accept(job: Job): void {
    this.enqueue(job);
    if (!this.draining) this.drain();
  }

  private enqueue(job: Job): void {
    const key = job.task.datasetId;
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { key, queue: [], head: 0, usage: 0, stamp: performance.now(), running: false };
      this.lanes.set(key, lane);
    }
    lane.queue.push(job);
    this.arrival.set(job, this.arrivals++);
    this.waiting++;
  }

  /** Moves every message that arrived while a task ran into the lanes. */
  private pull(): void {
    for (;;) {
      const m = receiveMessageOnPort(this.port);
      if (m === undefined) return;
      this.enqueue(m.message as Job);
    }
  }

  private usageOf(lane: Lane, now: number): number {
    return lane.usage * Math.pow(0.5, (now - lane.stamp) / HALF_LIFE_MS);
  }

  /** The waiting lane with the least usage below `below`, oldest head first among equals. */
  private pick(now: number, below: number): Lane | null {
    let best: Lane | null = null;
    let bestUsage = below;
    let bestArrival = Number.POSITIVE_INFINITY;
    for (const lane of this.lanes.values()) {
      if (lane.running) continue;
      const u = this.usageOf(lane, now);
      if (lane.head >= lane.queue.length) {
        // An idle lane that has decayed to nothing is forgotten (datasets come and go).
        if (u < 1e-3) this.lanes.delete(lane.key);
        continue;
      }
      const a = this.arrival.get(lane.queue[lane.head]!)!;
      if (u < bestUsage || (u === bestUsage && a < bestArrival)) {
        best = lane;
        bestUsage = u;
        bestArrival = a;
      }
    }
    return best;
  }

  private take(lane: Lane): Job {
    const job = lane.queue[lane.head]!;
    lane.head++;
    this.waiting--;
    if (lane.head === lane.queue.length) {
      lane.queue.length = 0;
      lane.head = 0;
    }
    return job;
  }

  /** Runs one job of `lane` (at the top level or nested) and charges the lane its own time. */
  private runFrom(lane: Lane): void {
    const job = this.take(lane);
    const started = performance.now();
    const frame: Frame = { lane, started, nested: 0, sliceStart: started };
    lane.running = true;
    this.stack.push(frame);
    try {
      this.run(job);
    } finally {
      this.stack.pop();
      lane.running = false;
      const now = performance.now();
      const total = now - started;
      lane.usage = this.usageOf(lane, now) + (total - frame.nested);
      lane.stamp = now;
      const parent = this.stack.at(-1);
      if (parent) parent.nested += total;
    }
  }

  private drain(): void {
    this.draining = true;
    try {
      for (;;) {
        this.pull();
        if (this.waiting === 0) return;
        const lane = this.pick(performance.now(), Number.POSITIVE_INFINITY);
        if (!lane) return;
        this.runFrom(lane);
      }
    } finally {
      this.draining = false;
    }
  }

  /** Called from `checkStop` in a running task: lets lanes that used less time run first. */
  private yieldPoint(): void {
    const top = this.stack.at(-1);
    if (!top) return;
    let now = performance.now();
    if (now - top.sliceStart < SLICE_MS || this.stack.length >= MAX_DEPTH) return;
    this.pull();
    while (this.waiting > 0) {
      const mine = this.usageOf(top.lane, now) + (now - top.started - top.nested);
      const lane = this.pick(now, mine);
      if (!lane) break;
      this.runFrom(lane);
      now = performance.now();
      this.pull();
    }
    top.sliceStart = performance.now();
  }
}
