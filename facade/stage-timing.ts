/**
 * Where the time of one request goes, as a standard `Server-Timing` response header
 * (`QUARRY_SERVER_TIMING`): each stage from the previous mark to its own, plus the total the
 * request took until its body was ready (JSON serialization and the socket write come after).
 */
import { performance } from 'node:perf_hooks';

/** Stage durations of one request. */
export class StageTimer {
  private last: number;
  private readonly stages: [string, number][] = [];

  constructor(private readonly started: number = performance.now()) {
    this.last = started;
  }

  /** Ends the stage `name` now (it began at the previous mark, or at the request's start). */
  mark(name: string): void {
    const now = performance.now();
    this.stages.push([name, now - this.last]);
    this.last = now;
  }

  /** The header value: `name;dur=ms` per stage, then `total`. */
  header(): string {
    const total = performance.now() - this.started;
    return [...this.stages, ['total', total] as [string, number]].map(([n, ms]) => `${n};dur=${ms.toFixed(3)}`).join(', ');
  }
}
