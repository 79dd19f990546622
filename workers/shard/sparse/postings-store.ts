/**
 * Term dictionary and per-term postings (doc ids ascending, term frequencies) in growable typed
 * arrays, with the per-term bounds MaxScore needs. Entries of deleted docs stay until purged.
 */
import { grown } from './grow.js';

/** Largest stored term frequency; a chunk repeating one term more often is clamped (saturated anyway). */
export const MAX_TF = 0xffff;

/** log2 of the postings per block of the block-max bounds (128: Lucene's and PISA's choice). */
export const BLOCK_SHIFT = 7;

const NO_BLOCKS_U32 = new Uint32Array(0);
const NO_BLOCKS_F64 = new Float64Array(0);

/** Postings of one shard; the index owns document state, this owns everything per term. */
export class PostingsStore {
  /** Term string -> term id. */
  readonly termIds = new Map<string, number>();
  /** Term id -> term string. */
  readonly terms: string[] = [];
  /** Per term: doc ids; only the first `len[t]` entries are valid. */
  docs: Uint32Array[] = [];
  /** Per term: term frequencies aligned with `docs`. */
  tfs: Uint16Array[] = [];
  /** Per term: valid entries (live and tombstoned). */
  len = new Uint32Array(64);
  /** Per term: live documents containing it (kept exact on delete through the forward index). */
  df = new Uint32Array(64);
  /** Per term: max tf over its entries (an upper bound between purges; kept in snapshots for diagnostics). */
  maxTf = new Uint16Array(64);
  /** Per term: min length of a doc in its entries (a lower bound between purges). */
  minDl = new Uint32Array(64);
  /** 1 when a recycled (smaller) doc id was appended after larger ones and the list needs sorting. */
  private unsorted = new Uint8Array(64);
  /**
   * Per term: the average doc length A at which `satMax` was computed, 0 when unknown. The
   * saturation tf / (tf + k1 (1 - b + b dl / A)) only grows with A, so a bound computed at
   * A >= the query's avgdl stays valid; 10% headroom keeps a growing corpus from recomputing.
   */
  private satAvgdl = new Float64Array(64);
  /** Per term: max saturation over its entries at `satAvgdl` (valid once `covered[t] === len[t]`). */
  private satMax = new Float64Array(64);
  /**
   * Block-max bounds, computed lazily at query time and only for queried terms: block j holds
   * entries `j * 128 .. j * 128 + 127`; `blockLast[t][j]` is its last doc id and `blockMax[t][j]`
   * its max saturation at `satAvgdl[t]`. Entries before `covered[t]` have valid blocks; appends
   * only extend the tail, so a search recomputes at most the last partial block plus new ones.
   */
  blockLast: Uint32Array[] = [];
  /** See {@link blockLast}. */
  blockMax: Float64Array[] = [];
  private covered = new Uint32Array(64);
  private live = 0;

  /** A store for BM25 parameters k1 and b (needed for the cached per-term bounds). */
  constructor(
    private readonly k1: number,
    private readonly b: number,
  ) {}

  /** Number of terms in the dictionary (terms whose documents were all deleted stay, with df 0). */
  get size(): number {
    return this.terms.length;
  }

  /** Number of terms with df > 0 (in at least one live document). */
  get liveTerms(): number {
    return this.live;
  }

  /** Id of `term`, creating an empty entry when new. */
  intern(term: string): number {
    const known = this.termIds.get(term);
    if (known !== undefined) return known;
    const t = this.terms.length;
    this.terms.push(term);
    this.termIds.set(term, t);
    this.docs.push(new Uint32Array(4));
    this.tfs.push(new Uint16Array(4));
    this.blockLast.push(NO_BLOCKS_U32);
    this.blockMax.push(NO_BLOCKS_F64);
    const need = t + 1;
    this.len = grown(this.len, need);
    this.df = grown(this.df, need);
    this.maxTf = grown(this.maxTf, need);
    this.unsorted = grown(this.unsorted, need);
    this.covered = grown(this.covered, need);
    this.satAvgdl = grown(this.satAvgdl, need);
    this.satMax = grown(this.satMax, need);
    if (need > this.minDl.length) {
      const old = this.minDl.length;
      this.minDl = grown(this.minDl, need);
      this.minDl.fill(0xffffffff, old);
    }
    return t;
  }

  /** Appends (doc, tf) to term t for a new live doc of length `dl`. */
  append(t: number, doc: number, tf: number, dl: number): void {
    const n = this.len[t]!;
    let docs = this.docs[t]!;
    if (n === docs.length) {
      docs = this.docs[t] = grown(docs, n + 1);
      this.tfs[t] = grown(this.tfs[t]!, n + 1);
    }
    if (n > 0 && docs[n - 1]! > doc) this.unsorted[t] = 1;
    docs[n] = doc;
    this.tfs[t]![n] = tf;
    this.len[t] = n + 1;
    if (this.df[t]!++ === 0) this.live++;
    // Bounds only ever loosen between purges, so they stay valid bounds after deletes.
    if (tf > this.maxTf[t]!) this.maxTf[t] = tf;
    if (dl < this.minDl[t]!) this.minDl[t] = dl;
  }

  /** One live document containing term t was deleted (its entry stays until purged). */
  release(t: number): void {
    if (--this.df[t]! === 0) this.live--;
  }

  /**
   * Brings term t's block-max bounds up to date for a query with average length `avgdl` and
   * returns the list-wide bound of tf / (tf + k1 (1 - b + b dl / avgdl)). The saturation only
   * grows with the average length, so bounds computed at A >= avgdl stay valid; A is set 10%
   * above avgdl so that a growing corpus does not rescan lists on every query. Only entries
   * appended since the last call are scanned (plus the rest of their first block).
   */
  ensureBounds(t: number, avgdl: number, docLen: Uint32Array): number {
    if (this.satAvgdl[t]! < avgdl) {
      this.satAvgdl[t] = avgdl * 1.1;
      this.satMax[t] = 0;
      this.covered[t] = 0;
    }
    const n = this.len[t]!;
    const from = this.covered[t]!;
    if (from === n) return this.satMax[t]!;
    const blocks = (n + (1 << BLOCK_SHIFT) - 1) >>> BLOCK_SHIFT;
    let last = this.blockLast[t]!;
    let max = this.blockMax[t]!;
    if (last.length < blocks) {
      last = this.blockLast[t] = grown(last, blocks);
      max = this.blockMax[t] = grown(max, blocks);
    }
    const docs = this.docs[t]!;
    const tfs = this.tfs[t]!;
    const base = this.k1 * (1 - this.b);
    const scale = (this.k1 * this.b) / this.satAvgdl[t]!;
    let all = this.satMax[t]!;
    for (let j = from >>> BLOCK_SHIFT; j < blocks; j++) {
      const end = Math.min(n, (j + 1) << BLOCK_SHIFT);
      let m = 0;
      for (let i = j << BLOCK_SHIFT; i < end; i++) {
        const tf = tfs[i]!;
        const sat = tf / (tf + base + scale * docLen[docs[i]!]!);
        if (sat > m) m = sat;
      }
      last[j] = docs[end - 1]!;
      max[j] = m;
      if (m > all) all = m;
    }
    this.satMax[t] = all;
    this.covered[t] = n;
    return all;
  }

  /** Drops entries of docs that are not alive and recomputes term t's bounds from what remains. */
  purge(t: number, alive: Uint8Array, docLen: Uint32Array): void {
    const docs = this.docs[t]!;
    const tfs = this.tfs[t]!;
    const n = this.len[t]!;
    let w = 0;
    let maxTf = 0;
    let minDl = 0xffffffff;
    for (let r = 0; r < n; r++) {
      const d = docs[r]!;
      if (alive[d] !== 1) continue;
      const tf = tfs[r]!;
      docs[w] = d;
      tfs[w] = tf;
      w++;
      if (tf > maxTf) maxTf = tf;
      const dl = docLen[d]!;
      if (dl < minDl) minDl = dl;
    }
    this.len[t] = w;
    this.maxTf[t] = maxTf;
    this.minDl[t] = minDl;
    this.satAvgdl[t] = 0;
    if (w === 0) {
      this.blockLast[t] = NO_BLOCKS_U32;
      this.blockMax[t] = NO_BLOCKS_F64;
    }
    // Give memory back when a list shrank a lot (a term that mostly lived in deleted docs).
    if (w * 4 < docs.length && docs.length > 16) {
      this.docs[t] = docs.slice(0, Math.max(w * 2, 4));
      this.tfs[t] = tfs.slice(0, Math.max(w * 2, 4));
    }
  }

  /** Restores ascending doc order of term t if recycled ids were appended out of order. */
  ensureSorted(t: number): void {
    if (this.unsorted[t] !== 1) return;
    const n = this.len[t]!;
    const docs = this.docs[t]!;
    const tfs = this.tfs[t]!;
    // Pack (doc, tf) into one float so a native numeric sort moves both: doc < 2^32, tf < 2^16.
    const keys = new Float64Array(n);
    for (let i = 0; i < n; i++) keys[i] = docs[i]! * 65536 + tfs[i]!;
    keys.sort();
    for (let i = 0; i < n; i++) {
      const k = keys[i]!;
      const d = Math.floor(k / 65536);
      docs[i] = d;
      tfs[i] = k - d * 65536;
    }
    this.unsorted[t] = 0;
    this.satAvgdl[t] = 0; // blocks hold other entries now
  }

  /** Installs term t's postings from a snapshot (sorted, purged) with its df and bounds. */
  load(t: number, docs: Uint32Array, tfs: Uint16Array, df: number, maxTf: number, minDl: number): void {
    this.docs[t] = docs;
    this.tfs[t] = tfs;
    this.len[t] = docs.length;
    if (this.df[t]! === 0 && df > 0) this.live++;
    this.df[t] = df;
    this.maxTf[t] = maxTf;
    this.minDl[t] = minDl;
    this.unsorted[t] = 0;
    this.satAvgdl[t] = 0;
  }
}
