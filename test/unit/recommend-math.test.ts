/** The pure parts of recommendations: the bm25 query from example texts and the vector strategies. */
import { describe, expect, it } from 'vitest';
import { recommendQueryText } from '../../core/pipeline/recommend-query.js';
import { averageVector, bestScore, prepare, similarity, similarityOfScore } from '../../core/pipeline/recommend-vectors.js';

describe('recommendQueryText', () => {
  it('ranks words by how many positives hold them, then by count, then by first occurrence, without stop words', () => {
    expect(recommendQueryText(['The quick fox and the quick dog', 'a quick brown fox'])).toBe('quick fox dog brown');
  });

  it('drops words that as large a share of the negatives holds', () => {
    expect(recommendQueryText(['gene trial dose', 'gene trial'], ['trial results'])).toBe('gene dose');
    expect(recommendQueryText(['gene trial'], ['gene', 'dose'])).toBe('gene trial');
  });

  it('is empty without content words and keeps at most 20 words', () => {
    expect(recommendQueryText(['the of and', 'a b c'])).toBe('');
    const many = Array.from({ length: 30 }, (_, i) => `w${String(i).padStart(2, '0')}`).join(' ');
    expect(recommendQueryText([many]).split(' ')).toEqual(Array.from({ length: 20 }, (_, i) => `w${String(i).padStart(2, '0')}`));
  });
});

describe('recommendation vectors', () => {
  const v = (...xs: number[]) => Float32Array.from(xs);

  it('average_vector is avg_pos, or avg_pos + (avg_pos - avg_neg) with negatives', () => {
    const s = 'dot';
    const pos = [prepare(s, v(1, 0)), prepare(s, v(0, 2))];
    expect(Array.from(averageVector(pos, []))).toEqual([0.5, 1]);
    expect(Array.from(averageVector(pos, [prepare(s, v(1, 1))]))).toEqual([0, 1]);
  });

  it('cosine normalises examples before averaging, as Qdrant stores them', () => {
    const s = 'cosine';
    const avg = averageVector([prepare(s, v(10, 0)), prepare(s, v(0, 1))], []);
    expect(avg[0]).toBeCloseTo(0.5, 12);
    expect(avg[1]).toBeCloseTo(0.5, 12);
  });

  it('best_score takes the best positive similarity when it beats the negatives, else minus the squared best negative', () => {
    const s = 'cosine';
    const pos = [prepare(s, v(1, 0))];
    const neg = [prepare(s, v(0, 1))];
    const near = prepare(s, v(3, 1));
    expect(bestScore(s, near, pos, neg)).toBeCloseTo(3 / Math.sqrt(10), 12);
    const far = prepare(s, v(1, 3));
    expect(bestScore(s, far, pos, neg)).toBeCloseTo(-((3 / Math.sqrt(10)) ** 2), 12);
    expect(bestScore(s, far, pos, [])).toBeCloseTo(1 / Math.sqrt(10), 12);
  });

  it('distance metrics compare by negated distance and read search scores as distances', () => {
    const l2 = 'euclidean';
    expect(similarity(l2, prepare(l2, v(0, 0)), prepare(l2, v(3, 4)))).toBe(-5);
    expect(similarityOfScore(l2, 5)).toBe(-5);
    const l1 = 'manhattan';
    expect(similarity(l1, prepare(l1, v(0, 0)), prepare(l1, v(3, -4)))).toBe(-7);
    expect(similarityOfScore('cosine', 0.25)).toBe(0.25);
  });
});
