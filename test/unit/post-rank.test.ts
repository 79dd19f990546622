import { describe, expect, it } from 'vitest';
import type { ChunkRecord } from '../../core/domain/chunk.js';
import { mmr, type Ranked } from '../../core/pipeline/post-rank.js';

const chunk = (id: string): ChunkRecord => ({ id } as unknown as ChunkRecord);
const ranked = (scores: [string, number][]): Ranked[] => scores.map(([id, score]) => ({ c: chunk(id), score }));

describe('MMR', () => {
  const v = (...xs: number[]) => Float32Array.from(xs);
  // a and a2 are the same direction (near duplicates); b is orthogonal and scores a little lower.
  const vectors = new Map([
    ['a', v(1, 0)],
    ['a2', v(1, 0.01)],
    ['b', v(0, 1)],
  ]);

  it('keeps the relevance order with lambda 1', () => {
    const out = mmr(ranked([['a', 3], ['a2', 2.9], ['b', 2.5]]), 1, vectors);
    expect(out.map((r) => r.c.id)).toEqual(['a', 'a2', 'b']);
  });

  it('moves a near duplicate below a different result with lambda 0.5', () => {
    const out = mmr(ranked([['a', 3], ['a2', 2.9], ['b', 2.5]]), 0.5, vectors);
    expect(out.map((r) => r.c.id)).toEqual(['a', 'b', 'a2']);
    // Scores are the MMR values: 0.5 x normalised relevance - 0.5 x max similarity to the picks.
    expect(out[0]!.score).toBeCloseTo(0.5, 9);
    expect(out[1]!.score).toBeCloseTo(0, 9);
  });

  it('treats chunks without a vector as similar to nothing', () => {
    const out = mmr(ranked([['a', 3], ['x', 2.9], ['a2', 2.95]]), 0.5, vectors);
    expect(out.map((r) => r.c.id)).toEqual(['a', 'x', 'a2']);
  });
});
