/**
 * Hybrid score fusion: each candidate's lexical and dense scores min-max normalised per leg over
 * the union of candidates and fused as 0.7 x lexical + 0.3 x dense, the fusion that measured best
 * on SciFact (0.690 nDCG@10 against 0.678 for bm25 alone; reciprocal-rank fusion collapsed).
 */
import { byScoreThenId, type DatasetHits } from './shard-set.js';

/** Weight of the normalised lexical score; the dense score gets the rest. */
const HYBRID_BM25_WEIGHT = 0.7;

/** Scores of one leg, mapped to [0, 1] over its candidates (inverted for distances); a missing score is 0. */
function normalised(scores: ReadonlyMap<string, number>, lowerIsBetter: boolean): (id: string) => number {
  const values = [...scores.values()];
  const min = Math.min(...values);
  const max = Math.max(...values);
  return (id) => {
    const v = scores.get(id);
    if (v === undefined) return 0;
    const x = max > min ? (v - min) / (max - min) : 1;
    return lowerIsBetter ? 1 - x : x;
  };
}

/** What a fused page is cut from. */
export interface FusionInput {
  /** The candidates (the union of both legs). */
  readonly ids: readonly string[];
  readonly lexical: ReadonlyMap<string, number>;
  readonly dense: ReadonlyMap<string, number>;
  /** Dense scores are distances (euclidean, manhattan). */
  readonly denseLowerIsBetter: boolean;
  readonly minScore: number | null;
  readonly offset: number;
  readonly limit: number;
  readonly countTotal: boolean;
}

/** The page of fused candidates above `minScore`, best first (ties by chunk id). */
export function fuseHybrid(f: FusionInput): DatasetHits {
  const lexical = normalised(f.lexical, false);
  const dense = normalised(f.dense, f.denseLowerIsBetter);
  const fused = f.ids
    .map((id) => ({ id, score: HYBRID_BM25_WEIGHT * lexical(id) + (1 - HYBRID_BM25_WEIGHT) * dense(id) }))
    .filter((h) => f.minScore === null || h.score >= f.minScore)
    .sort(byScoreThenId);
  const page = fused.slice(f.offset, f.offset + f.limit);
  return { chunkIds: page.map((h) => h.id), scores: page.map((h) => h.score), total: f.countTotal ? fused.length : 0 };
}
