/** Brute-force proximity count, the oracle of the fulltext tests. */
import { PROXIMITY_WINDOW } from '../../workers/shard/bm25/proximity.js';

/** Pair occurrences counted straight from a word list: every position pair within the window holding a and b, either order. */
export function pairTf<T>(content: readonly T[], a: T, b: T): number {
  let n = 0;
  for (let i = 0; i < content.length; i++) {
    for (let j = i + 1; j <= i + PROXIMITY_WINDOW && j < content.length; j++) {
      if ((content[i] === a && content[j] === b) || (content[i] === b && content[j] === a)) n++;
    }
  }
  return n;
}
