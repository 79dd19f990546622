/** Retrieval metrics with trec_eval definitions, shared by the benchmarks. */

/** Relevance judgements: query id -> (doc id -> graded relevance). */
export type Qrels = Map<string, Map<string, number>>;

/**
 * nDCG@k as trec_eval's `ndcg_cut`: gain = judged grade, discount log2(rank + 1) with 1-based
 * ranks, ideal DCG from the query's judged grades sorted descending. 0 when nothing is relevant.
 */
export function ndcgAtK(ranked: readonly string[], judged: ReadonlyMap<string, number>, k: number): number {
  let dcg = 0;
  const n = Math.min(k, ranked.length);
  for (let i = 0; i < n; i++) {
    const g = judged.get(ranked[i]!) ?? 0;
    if (g > 0) dcg += g / Math.log2(i + 2);
  }
  const ideal = [...judged.values()].filter((g) => g > 0).sort((a, b) => b - a);
  let idcg = 0;
  for (let i = 0; i < Math.min(k, ideal.length); i++) idcg += ideal[i]! / Math.log2(i + 2);
  return idcg === 0 ? 0 : dcg / idcg;
}

/** Recall@k: judged-relevant (grade > 0) documents in the top k over all judged-relevant ones. */
export function recallAtK(ranked: readonly string[], judged: ReadonlyMap<string, number>, k: number): number {
  let relevant = 0;
  for (const g of judged.values()) if (g > 0) relevant++;
  if (relevant === 0) return 0;
  let hit = 0;
  const n = Math.min(k, ranked.length);
  for (let i = 0; i < n; i++) if ((judged.get(ranked[i]!) ?? 0) > 0) hit++;
  return hit / relevant;
}

/** Value at quantile q (0..1) of an ascending-sorted array (nearest rank). */
export function quantile(sortedAsc: ArrayLike<number>, q: number): number {
  if (sortedAsc.length === 0) return NaN;
  const i = Math.min(sortedAsc.length - 1, Math.max(0, Math.ceil(q * sortedAsc.length) - 1));
  return sortedAsc[i]!;
}

/** Mean of per-query metric values over every judged query (a query with no results scores 0). */
export function meanOverQrels(qrels: Qrels, perQuery: (queryId: string, judged: ReadonlyMap<string, number>) => number): number {
  let sum = 0;
  for (const [q, judged] of qrels) sum += perQuery(q, judged);
  return qrels.size === 0 ? 0 : sum / qrels.size;
}
