/**
 * Term proximity for fulltext search: BM25 plus a BM25 score over "pair terms", a pair being two
 * adjacent content words of the query that occur within {@link PROXIMITY_WINDOW} content-word
 * positions of each other in a document. Pair postings are not stored: they are built per query
 * by intersecting the two words' postings and checking each common document's term sequence.
 *
 * Chosen on SciFact (bench/scifact-fulltext.ts; tuned on the train split, checked on test):
 * window 2 and weight 0.2 lift nDCG@10 from 0.6932 to 0.6989 (train) and 0.6799 to 0.6875
 * (test); the pair's idf must be its own document frequency (the smaller or the mean of the two
 * words' idfs gave nothing). Stop words are skipped when forming pairs.
 */
import type { BlockDocs } from './doc-blocks.js';
import { advance } from './gallop.js';
import { BLOCK_SHIFT } from './postings-store.js';
import { MAX_TF } from './postings-store.js';
import { PairSite, type SequenceStore } from './sequence-store.js';
import { overflowTf, TF_OVERFLOW } from './tf-code.js';
import { checkStop } from '../task-stop.js';

/** Two content words count as a pair when at most this many content-word positions apart. */
export const PROXIMITY_WINDOW = 2;

/** Weight of the pair score relative to the words' BM25 score. */
export const PAIR_WEIGHT = 0.2;

/** The query's pairs: adjacent content terms (stop terms skipped, equal neighbours ignored), in query order. */
export function queryPairs(terms: readonly string[], isStop: (term: string) => boolean): [string, string][] {
  const content = terms.filter((t) => !isStop(t));
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < content.length; i++) {
    if (content[i] !== content[i + 1]) out.push([content[i]!, content[i + 1]!]);
  }
  return out;
}

/** Postings of one pair in one shard: documents (ascending) and the pair's frequency in each, coded as tf-code.ts says. */
export interface PairPostings {
  docs: Uint32Array;
  tfs: Uint8Array;
  /** Doc -> exact frequency where `tfs` holds TF_OVERFLOW, or null when none does. */
  big: Map<number, number> | null;
  n: number;
}

/** The local index coded at `codes[q]` in `width` (2 or 4) little-endian bytes. */
function wideLocal(codes: Uint8Array, q: number, width: number): number {
  const x = codes[q]! | (codes[q + 1]! << 8);
  return width === 2 ? x : (x | (codes[q + 2]! << 16) | (codes[q + 3]! << 24)) >>> 0;
}

/**
 * Occurrences of the pair at local indexes (la, lb) in a document's positions: position pairs
 * (i < j ≤ i + window) holding them in either order. Compares the coded local indexes in place
 * (no decoding), and looks back over the window only at positions holding la or lb; each earlier
 * position in the window holding the other makes one pair (for la = lb, each earlier la: the same
 * pairs as counting forward from every la).
 */
export function pairFrequency(site: PairSite): number {
  const { codes, from, to, width, la, lb } = site;
  let n = 0;
  if (width === 1) {
    // Most documents have at most 256 distinct terms: a byte per position, no width branches.
    for (let q = from; q < to; q++) {
      const x = codes[q]!;
      if (x !== la && x !== lb) continue;
      const want = x === la ? lb : la;
      const first = q - PROXIMITY_WINDOW > from ? q - PROXIMITY_WINDOW : from;
      for (let p = q - 1; p >= first; p--) if (codes[p] === want) n++;
    }
    return n;
  }
  for (let q = from; q < to; q += width) {
    const x = wideLocal(codes, q, width);
    if (x !== la && x !== lb) continue;
    const want = x === la ? lb : la;
    const first = Math.max(from, q - PROXIMITY_WINDOW * width);
    for (let p = q - width; p >= first; p -= width) if (wideLocal(codes, p, width) === want) n++;
  }
  return n;
}

/**
 * The pair's postings: documents live in both words' (sorted) postings where the pair occurs.
 * Walks the shorter list and gallops in the longer one. `seq` holds each document's content
 * positions (stop words left out).
 */
export function pairPostings(docsA: BlockDocs, docsB: BlockDocs, alive: Uint8Array, seq: SequenceStore, a: number, b: number): PairPostings {
  const [short, long] = docsA.n <= docsB.n ? [docsA, docsB] : [docsB, docsA];
  const { bases: sb, shift: ssh, lows: slo, n: sn } = short;
  const { bases: lb, shift: lsh, lows: llo, n: ln } = long;
  const docs = new Uint32Array(sn);
  const tfs = new Uint8Array(sn);
  let big: Map<number, number> | null = null;
  // One per call, not per module: checkStop may run another task's pairPostings in between.
  const site = new PairSite();
  let n = 0;
  let p = 0;
  for (let i = 0; i < sn && p < ln; i++) {
    const d = (ssh === 0 ? sb[i]! : (ssh === 0 ? sb[i]! : sb[i >>> ssh]! + slo[i]!));
    if ((lsh === 0 ? lb[p]! : (lsh === 0 ? lb[p]! : lb[p >>> lsh]! + llo[p]!)) < d) p = advance(lb, lsh, llo, ln, p, d);
    if (p >= ln || (lsh === 0 ? lb[p]! : (lsh === 0 ? lb[p]! : lb[p >>> lsh]! + llo[p]!)) !== d || alive[d] !== 1) continue;
    const found = seq.locate(d, a, b, site);
    checkStop((site.to - site.from) >> 2);
    if (!found) continue;
    const f = pairFrequency(site);
    if (f > 0) {
      docs[n] = d;
      if (f < TF_OVERFLOW) {
        tfs[n++] = f;
      } else {
        (big ??= new Map()).set(d, f < MAX_TF ? f : MAX_TF);
        tfs[n++] = TF_OVERFLOW;
      }
    }
  }
  return { docs: docs.subarray(0, n), tfs: tfs.subarray(0, n), big, n };
}

/** Block-max bounds of a list built at query time (the same blocks and formula as stored postings). */
export function listBounds(
  list: PairPostings,
  docLen: Uint32Array,
  k1: number,
  b: number,
  avgdl: number,
): { blockLast: Uint32Array; blockMax: Float64Array; sat: number } {
  const blocks = (list.n + (1 << BLOCK_SHIFT) - 1) >>> BLOCK_SHIFT;
  const blockLast = new Uint32Array(blocks);
  const blockMax = new Float64Array(blocks);
  const base = k1 * (1 - b);
  const scale = (k1 * b) / avgdl;
  let all = 0;
  for (let j = 0; j < blocks; j++) {
    const end = Math.min(list.n, (j + 1) << BLOCK_SHIFT);
    let m = 0;
    for (let i = j << BLOCK_SHIFT; i < end; i++) {
      let tf = list.tfs[i]!;
      if (tf === TF_OVERFLOW) tf = overflowTf(list.big, list.docs[i]!);
      const sat = tf / (tf + base + scale * docLen[list.docs[i]!]!);
      if (sat > m) m = sat;
    }
    blockLast[j] = list.docs[end - 1]!;
    blockMax[j] = m;
    if (m > all) all = m;
  }
  return { blockLast, blockMax, sat: all };
}
