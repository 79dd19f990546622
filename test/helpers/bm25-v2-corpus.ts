/**
 * The writes behind `test/fixtures/bm25-snapshot-v2.bin`, a BM25 snapshot in format version 2
 * written by the code at 1942064 (before the tokens were coded): upserts with stop words, repeated
 * and non-Latin words and a boost, re-upserts and deletes (so ids are recycled and postings were
 * purged). The old-snapshot test replays them on today's code and compares.
 */

/** One write: an upsert (`text` set) or a delete. */
export interface V2Op {
  id: string;
  text?: string;
  boost?: { phrase: string; factor: number };
}

const WORDS = ['the', 'of', 'and', 'apple', 'river', 'stone', 'cloud', 'tiger', 'lamp', 'ocean', 'théta', '東京', 'x1', 'running', 'runs', 'a', 'is'];

/** The fixture's writes, from a fixed linear congruential sequence. */
export function v2Ops(): V2Op[] {
  let s = 12345;
  const next = (n: number): number => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return (s >>> 8) % n;
  };
  const ops: V2Op[] = [];
  for (let i = 0; i < 400; i++) {
    const id = `c${next(120)}`;
    if (next(5) === 0) {
      ops.push({ id });
      continue;
    }
    const words = Array.from({ length: 1 + next(14) }, () => WORDS[next(WORDS.length)]!);
    const op: V2Op = { id, text: words.join(' ') };
    if (next(10) === 0) op.boost = { phrase: `${WORDS[3 + next(6)]} ${WORDS[3 + next(6)]}`, factor: 1 + next(4) };
    ops.push(op);
  }
  return ops;
}

/** Options of the index the fixture was written from (small compaction thresholds: purges happen). */
export const V2_INDEX_OPTIONS = { k1: 1.1, b: 0.6, compactMinDead: 4, compactDeadRatio: 0.1 } as const;
