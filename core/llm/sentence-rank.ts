/**
 * Ranking of candidate sentences for the extractive answerer, pure and synchronous: BM25 with
 * the sentences as the collection, relevance as a mix of min-max lexical and cosine scores, and
 * a greedy maximal-marginal-relevance pick so that the answer does not repeat itself.
 */

/** BM25 parameters over sentences: short, similar lengths, so length normalisation matters less than for documents. */
const K1 = 1.2;
const B = 0.5;

/**
 * BM25 score of each sentence (its analyzed terms) for the distinct `queryTerms`, with
 * document frequencies counted over the sentences themselves. Linear in the total terms.
 */
export function bm25Scores(queryTerms: readonly string[], sentences: readonly (readonly string[])[]): Float64Array {
  const scores = new Float64Array(sentences.length);
  if (queryTerms.length === 0 || sentences.length === 0) return scores;
  const slot = new Map<string, number>();
  for (const t of queryTerms) if (!slot.has(t)) slot.set(t, slot.size);
  const q = slot.size;
  const df = new Float64Array(q);
  // tf[s * q + j]: occurrences of query term j in sentence s (only query terms are counted).
  const tf = new Float64Array(sentences.length * q);
  let totalLength = 0;
  for (let s = 0; s < sentences.length; s++) {
    const terms = sentences[s]!;
    totalLength += terms.length;
    for (const t of terms) {
      const j = slot.get(t);
      if (j === undefined) continue;
      if (tf[s * q + j] === 0) df[j]!++;
      tf[s * q + j]!++;
    }
  }
  const n = sentences.length;
  const avgLength = totalLength / n || 1;
  const idf = new Float64Array(q);
  for (let j = 0; j < q; j++) idf[j] = Math.log(1 + (n - df[j]! + 0.5) / (df[j]! + 0.5));
  for (let s = 0; s < n; s++) {
    const norm = K1 * (1 - B + (B * sentences[s]!.length) / avgLength);
    let score = 0;
    for (let j = 0; j < q; j++) {
      const f = tf[s * q + j]!;
      if (f > 0) score += (idf[j]! * f * (K1 + 1)) / (f + norm);
    }
    scores[s] = score;
  }
  return scores;
}

/**
 * Non-negative `values` divided by their maximum (all zeros when the maximum is 0): min-max
 * scaling with 0 as the minimum, so that a sentence matching one question term stays above one
 * matching none even when every sentence matches something.
 */
export function scaleToMax(values: Float64Array): Float64Array {
  let hi = 0;
  for (const v of values) if (v > hi) hi = v;
  const out = new Float64Array(values.length);
  if (hi > 0) for (let i = 0; i < values.length; i++) out[i] = values[i]! / hi;
  return out;
}

/** Cosine similarity of two vectors (0 when either is all zeros). */
export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** Jaccard similarity of two term sets (the MMR redundancy measure without vectors). */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let common = 0;
  for (const t of a) if (b.has(t)) common++;
  return common / (a.size + b.size - common);
}

/** Options of {@link pickByMmr}. */
export interface MmrOptions {
  /** Sentences picked at most. */
  readonly k: number;
  /** Weight of relevance against redundancy. */
  readonly lambda: number;
  /** Candidates below this fraction of the best relevance are never picked (fillers). */
  readonly minRelativeRelevance: number;
  /** Candidates at least this similar to a picked one are dropped (the same sentence in two docs). */
  readonly maxSimilarity: number;
}

/**
 * Greedy maximal marginal relevance: repeatedly the candidate maximising
 * `lambda * relevance - (1 - lambda) * max similarity to those already picked`, among the
 * candidates with relevance > 0 and at least `minRelativeRelevance` of the best; a candidate
 * `maxSimilarity`-similar to a picked one is dropped, since MMR alone would still pick an exact
 * copy of a highly relevant sentence. Returns indexes in pick order. O(k * candidates)
 * similarity calls.
 */
export function pickByMmr(relevance: Float64Array, similarity: (i: number, j: number) => number, options: MmrOptions): number[] {
  let best = 0;
  for (const r of relevance) if (r > best) best = r;
  if (best <= 0) return [];
  const floor = best * options.minRelativeRelevance;
  const open: number[] = [];
  for (let i = 0; i < relevance.length; i++) if (relevance[i]! > 0 && relevance[i]! >= floor) open.push(i);
  // maxSim[c]: the candidate's highest similarity to any picked sentence, updated per pick.
  const maxSim = new Float64Array(relevance.length);
  const picked: number[] = [];
  while (picked.length < options.k && open.length > 0) {
    let at = 0;
    let top = -Infinity;
    for (let o = 0; o < open.length; o++) {
      const c = open[o]!;
      const mmr = options.lambda * relevance[c]! - (1 - options.lambda) * maxSim[c]!;
      if (mmr > top) {
        top = mmr;
        at = o;
      }
    }
    const chosen = open[at]!;
    open.splice(at, 1);
    picked.push(chosen);
    for (let o = open.length - 1; o >= 0; o--) {
      const c = open[o]!;
      const s = similarity(chosen, c);
      if (s >= options.maxSimilarity) open.splice(o, 1);
      else if (s > maxSim[c]!) maxSim[c] = s;
    }
  }
  return picked;
}
