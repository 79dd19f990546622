/**
 * Where the time of one request goes, as a standard `Server-Timing` response header
 * (`QUARRY_SERVER_TIMING`): each stage from the previous mark to its own, plus the total the
 * request took until its body was ready (JSON serialization and the socket write come after).
 * With an in-process core, `shard-run` and `shard-wait` split what the shard threads cost within
 * the `core` stage: their tasks' run time and the rest of those round trips, summed over tasks.
 */
import { performance } from 'node:perf_hooks';
import type { ShardWork } from '../core/domain/shard-work.js';

/** Stage durations of one request. */
export class StageTimer {
  private last: number;
  private readonly stages: [string, number][] = [];
  /** The shard tasks of this request (filled by the shard pool; see core/domain/shard-work.ts). */
  readonly shardWork: ShardWork = { tasks: 0, runMs: 0, waitMs: 0 };

  constructor(private readonly started: number = performance.now()) {
    this.last = started;
  }

  /** Ends the stage `name` now (it began at the previous mark, or at the request's start). */
  mark(name: string): void {
    const now = performance.now();
    this.stages.push([name, now - this.last]);
    this.last = now;
  }

  /** The header value: `name;dur=ms` per stage, the shard threads' part when any, then `total`. */
  header(): string {
    const total = performance.now() - this.started;
    const shard: [string, number][] = this.shardWork.tasks > 0 ? [['shard-run', this.shardWork.runMs], ['shard-wait', this.shardWork.waitMs]] : [];
    return [...this.stages, ...shard, ['total', total] as [string, number]].map(([n, ms]) => `${n};dur=${ms.toFixed(3)}`).join(', ');
  }
}
