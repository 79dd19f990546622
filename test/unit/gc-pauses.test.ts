/**
 * core/pool/gc-pauses.ts: how much of a query's wall time garbage collection took, so a slow
 * inline query is judged by its own work. The overlap arithmetic against brute force, and the
 * recorder against real young-generation collections caused by allocating.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GcPauses, pausedWithin, type Pause } from '../../core/pool/gc-pauses.js';

/** Brute force over a 0.01 ms grid. */
function sampled(pauses: readonly Pause[], from: number, to: number): number {
  let n = 0;
  for (let t = from + 0.005; t < to; t += 0.01) if (pauses.some((p) => t >= p.start && t < p.start + p.duration)) n++;
  return n * 0.01;
}

describe('gc pauses', () => {
  it('counts the part of each pause inside the window, and nothing outside it', () => {
    const pause = fc.record({ start: fc.integer({ min: 0, max: 2000 }).map((x) => x / 100), duration: fc.integer({ min: 0, max: 500 }).map((x) => x / 100) });
    fc.assert(
      fc.property(fc.array(pause, { maxLength: 3 }), fc.integer({ min: 0, max: 2000 }), fc.integer({ min: 0, max: 1000 }), (ps, a, len) => {
        // Disjoint pauses, as one thread's collections are.
        const sorted = [...ps].sort((x, y) => x.start - y.start);
        const disjoint: Pause[] = [];
        let end = -1;
        for (const p of sorted) {
          if (p.start < end) continue;
          disjoint.push(p);
          end = p.start + p.duration;
        }
        const from = a / 100;
        const to = from + len / 100;
        expect(pausedWithin(disjoint, from, to)).toBeCloseTo(sampled(disjoint, from, to), 1);
      }),
      { numRuns: 300 },
    );
    expect(pausedWithin([{ start: 10, duration: 5 }], 0, 10)).toBe(0);
    expect(pausedWithin([{ start: 10, duration: 5 }], 12, 20)).toBe(3);
    expect(pausedWithin([{ start: 10, duration: 5 }, { start: 30, duration: 2 }], 0, 100)).toBe(7);
  });

  it('records this thread\'s collections as they happen', async () => {
    const pauses = new GcPauses();
    pauses.start();
    const from = performance.now();
    const keep: unknown[] = [];
    // Enough short-lived allocation for several young-generation collections.
    for (let i = 0; i < 200_000; i++) {
      keep.push({ i, s: `x${i}` });
      if (keep.length > 1000) keep.length = 0;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    const to = performance.now();
    pauses.stop();
    expect(pauses.within(from, to)).toBeGreaterThan(0);
    expect(pauses.within(to + 1, to + 1000)).toBe(0);
  });
});
