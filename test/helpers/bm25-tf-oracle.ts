/** Exhaustive BM25 over documents given as term counts: the oracle of the shard's pruned top-k tests. */
import { bm25Idf } from '../../workers/shard/bm25/bm25-index.js';

/** A scored document. */
export interface Scored {
  id: string;
  score: number;
}

/** Exhaustive BM25 over live docs (term counts precomputed), sorted score desc then id asc. */
export function bruteForceTf(live: Map<string, Map<string, number>>, lens: Map<string, number>, query: string[], allow: Set<string> | null, k1 = 0.9, b = 0.4): Scored[] {
  const N = live.size;
  let total = 0;
  for (const id of live.keys()) total += lens.get(id)!;
  if (N === 0 || total === 0) return [];
  const avgdl = total / N;
  const df = new Map<string, number>();
  for (const q of new Set(query)) {
    let n = 0;
    for (const tf of live.values()) if (tf.has(q)) n++;
    df.set(q, n);
  }
  const out: Scored[] = [];
  for (const [id, tf] of live) {
    if (allow !== null && !allow.has(id)) continue;
    let score = 0;
    let matched = false;
    for (const q of query) {
      const f = tf.get(q) ?? 0;
      if (f === 0) continue;
      matched = true;
      score += (bm25Idf(N, df.get(q)!) * f * (k1 + 1)) / (f + k1 * (1 - b + (b * lens.get(id)!) / avgdl));
    }
    if (matched) out.push({ id, score });
  }
  return out.sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
}

/** Equal up to float noise (1e-9 relative). */
export const close = (a: number, b: number): boolean => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));
