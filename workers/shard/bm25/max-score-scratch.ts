/** Reusable per-search buffers and tuning constants of the block-max MaxScore top-k. */
import type { TfOverflow } from './tf-code.js';
import { zeroLows } from './doc-blocks.js';

// Upper bounds are inflated and the threshold deflated by these relative margins, so that float
// rounding (bounds computed at another average length, partial sums added in another order) can
// never make a tied or better document look prunable: exactness for a negligible loss of pruning.
/** Relative margin added to every upper bound. */
export const BOUND_SLACK = 1 + 1e-9;
/** Relative margin taken off every threshold. */
export const THETA_SLACK = 1 - 1e-9;

const NO_DOCS = new Uint32Array(0);
const NO_TFS = new Uint8Array(0);
const NO_LOWS = new Uint16Array(0);

/**
 * Window in doc ids; sizes the accumulator (8192 slots, 256 bitset words). Windows are not cut
 * short at block ends: the tighter bounds of shorter windows save less than the per-window work
 * (bounds, sorting, cursor moves) costs. Windows ending at every block end were ~15% slower on
 * SciFact than one 8192-doc window; windows ending at a block end but at least 2048 doc ids wide
 * (the rule before this one) 1-6% slower on SciFact (mean of each query's fastest of 12 rounds, and
 * 6-12% on the slowest 1%), 4.5-5% slower on 1M synthetic documents in two A/B runs of three (the
 * third, at load 7 on 2 cores, 1.5% faster).
 */
export const WINDOW = 8192;

/** The seeded floor is computed for k up to this (past it the selection costs more than it saves). */
export const SEED_MAX_K = 256;

/**
 * The query's posting lists plus every per-search buffer, reused across searches (one per index,
 * so one per shard thread). List i is the i-th distinct query term in query order; final scores
 * are summed in that order so a document scores bit-identically whatever this shard's bounds are.
 */
export class MaxScoreScratch {
  /** Number of lists in the current search. */
  m = 0;
  /** Term id of list i (for merging repeated query terms). */
  term = new Int32Array(16);
  /** qtf * idf * (k1 + 1) of list i: the factor in front of the tf saturation. */
  weight = new Float64Array(16);
  /** Doc ids of list i as doc-blocks.ts reads them: doc p is `bases[i][p >>> shift[i]] + lows[i][p]`. */
  bases: Uint32Array[] = [];
  /** See {@link bases}. */
  lows: Uint16Array[] = [];
  /** See {@link bases}. */
  shift = new Uint8Array(16);
  /** Stored tfs of list i (one byte; TF_OVERFLOW: look the doc up in `big[i]`, see tf-code.ts). */
  tfs: Uint8Array[] = [];
  /** Overflow map of list i, or null. */
  big: (TfOverflow | null)[] = [];
  blockLast: Uint32Array[] = [];
  blockMax: Float64Array[] = [];
  len = new Uint32Array(16);
  /** List-wide upper bound of list i's contribution (weight, saturation bound and slack). */
  bound = new Float64Array(16);
  pos = new Uint32Array(16);
  cur = new Uint32Array(16);
  windowBound = new Float64Array(16);
  order = new Uint32Array(16);
  prefix = new Float64Array(16);
  globalOrder = new Uint32Array(16);
  globalPrefix = new Float64Array(16);
  /** 1 when list i is essential in the current window (scored term-at-a-time). */
  essential = new Uint8Array(16);
  /** Per essential list: position of the next posting to look at when summing exact scores. */
  rescan = new Uint32Array(16);
  /** Window accumulator: partial score per slot (doc - window start), valid where `seen` is set. */
  acc = new Float64Array(WINDOW);
  seen = new Uint32Array(WINDOW >>> 5);
  /** Min-heap of the best single-list contributions while seeding the threshold. */
  seedTop = new Float64Array(SEED_MAX_K);
  /** Doc ids aligned with {@link seedTop}. */
  seedDocs = new Uint32Array(SEED_MAX_K);
  /** Exact scores of the seed documents (aligned with {@link seedDocs} once sorted). */
  seedExact = new Float64Array(SEED_MAX_K);
  /** Length normalisation of the seed documents, aligned like {@link seedExact}. */
  seedNorm = new Float64Array(SEED_MAX_K);

  /** Starts a new search with no lists. */
  reset(): void {
    this.m = 0;
  }

  /** Index of the list of term `t`, or -1. */
  indexOf(t: number): number {
    for (let i = 0; i < this.m; i++) if (this.term[i] === t) return i;
    return -1;
  }

  /** Adds a list for term `t` with weight `w`; postings are attached by {@link setPostings}. */
  add(t: number, w: number): number {
    const i = this.m++;
    if (i === this.term.length) this.grow(2 * i);
    this.term[i] = t;
    this.weight[i] = w;
    return i;
  }

  /** Attaches list i's postings (plain u32 doc ids, read as bases with zero lows), block bounds and list-wide saturation bound. */
  setPostings(i: number, docs: Uint32Array, tfs: Uint8Array, big: TfOverflow | null, len: number, blockLast: Uint32Array, blockMax: Float64Array, sat: number): void {
    this.setBlockPostings(i, docs, 0, zeroLows(len), tfs, big, len, blockLast, blockMax, sat);
  }

  /** Like {@link setPostings} with doc ids coded as doc-blocks.ts says. */
  setBlockPostings(
    i: number,
    bases: Uint32Array,
    shift: number,
    lows: Uint16Array,
    tfs: Uint8Array,
    big: TfOverflow | null,
    len: number,
    blockLast: Uint32Array,
    blockMax: Float64Array,
    sat: number,
  ): void {
    this.bases[i] = bases;
    this.lows[i] = lows;
    this.shift[i] = shift;
    this.tfs[i] = tfs;
    this.big[i] = big;
    this.len[i] = len;
    this.blockLast[i] = blockLast;
    this.blockMax[i] = blockMax;
    this.bound[i] = this.weight[i]! * sat * BOUND_SLACK;
  }

  /** Drops the postings views of the last search (they may pin a since-reallocated arena). */
  detach(): void {
    for (let i = 0; i < this.m; i++) {
      this.bases[i] = NO_DOCS;
      this.lows[i] = NO_LOWS;
      this.tfs[i] = NO_TFS;
      this.big[i] = null;
    }
  }

  private grow(n: number): void {
    const f64 = (a: Float64Array) => {
      const b = new Float64Array(n);
      b.set(a);
      return b;
    };
    const term = new Int32Array(n);
    term.set(this.term);
    this.term = term;
    this.weight = f64(this.weight);
    const len = new Uint32Array(n);
    len.set(this.len);
    this.len = len;
    this.bound = new Float64Array(n);
    this.pos = new Uint32Array(n);
    this.cur = new Uint32Array(n);
    this.windowBound = new Float64Array(n);
    this.order = new Uint32Array(n);
    this.prefix = new Float64Array(n);
    this.globalOrder = new Uint32Array(n);
    this.globalPrefix = new Float64Array(n);
    this.essential = new Uint8Array(n);
    this.rescan = new Uint32Array(n);
    this.shift = new Uint8Array(n);
  }
}

