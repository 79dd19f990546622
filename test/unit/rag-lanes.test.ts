/** How a job process splits its RAG answers over BullMQ workers (workers/jobs/rag.ts ragLanes). */
import { describe, expect, it } from 'vitest';
import { RAG_LANE_CONCURRENCY, ragLanes } from '../../workers/jobs/rag.js';

describe('ragLanes', () => {
  it('runs exactly the configured number of answers, none of its workers above the lane size', () => {
    for (const concurrency of [1, 2, 15, 16, 17, 31, 32, 33, 64, 100, 257, 10_000]) {
      const lanes = ragLanes(concurrency);
      expect(lanes.reduce((a, b) => a + b, 0)).toBe(concurrency);
      expect(Math.max(...lanes)).toBeLessThanOrEqual(RAG_LANE_CONCURRENCY);
      expect(Math.min(...lanes)).toBeGreaterThanOrEqual(1);
      // As few workers as the lane size allows (each holds a blocking Redis connection).
      expect(lanes).toHaveLength(Math.ceil(concurrency / RAG_LANE_CONCURRENCY));
    }
  });

  it('splits evenly: the workers differ by one answer at most', () => {
    expect(ragLanes(100)).toEqual([15, 15, 14, 14, 14, 14, 14]);
    expect(ragLanes(64)).toEqual([16, 16, 16, 16]);
    expect(ragLanes(17)).toEqual([9, 8]);
    expect(ragLanes(5)).toEqual([5]);
    expect(ragLanes(10, 3)).toEqual([3, 3, 2, 2]);
  });
});
