/**
 * Per-shard BM25 (Okapi) index over typed-array postings. Scores use corpus statistics passed in
 * by the caller, so a coordinator that sums `stats()` and `termDocFreqs()` over all shards gets
 * scores that do not depend on the shard count.
 */
import { lastWordBeingTyped } from '../../../core/domain/completions.js';
import { createAnalyzer, ENGLISH_STOP_WORDS, type Analyzer, type AnalyzerOptions } from './analyzer.js';
import { Bitset } from './bitset.js';
import { DocIdMap } from './doc-id-map.js';
import { grown } from './grow.js';
import { MaxScoreScratch, maxScoreTopK } from './max-score.js';
import type { MemoryParts } from './memory-report.js';
import { MAX_TF, PostingsStore } from './postings-store.js';
import { listBounds, pairPostings, type PairPostings } from './proximity.js';
import { SequenceStore } from './sequence-store.js';
import { TermScanner } from './term-scanner.js';
import { checkYield } from '../task-stop.js';
import { TopKHeap } from '../top-k-heap.js';
import { withFields } from '../../../core/domain/with-fields.js';

/** BM25 index options; defaults in {@link DEFAULT_BM25_OPTIONS}. */
export interface Bm25Options {
  /**
   * Term-frequency saturation.
   * @defaultValue 0.9 (the Anserini/Pyserini BEIR setting; no k1/b tried on SciFact train beat it by more than noise)
   */
  readonly k1: number;
  /**
   * Document-length normalisation strength, 0 (none) to 1 (full).
   * @defaultValue 0.4
   */
  readonly b: number;
  /**
   * Tombstoned documents are purged from postings once they exceed this fraction of live documents.
   * @defaultValue 0.25
   */
  readonly compactDeadRatio: number;
  /**
   * ...and also number at least this many (small shards do not churn their postings for one delete).
   * @defaultValue 1024
   */
  readonly compactMinDead: number;
  /** Options of the analyzer used by {@link Bm25Index.upsert} (queries must use the same). */
  readonly analyzer: Partial<AnalyzerOptions>;
}

/** Defaults for {@link Bm25Options}. */
export const DEFAULT_BM25_OPTIONS: Readonly<Bm25Options> = Object.freeze({
  k1: 0.9,
  b: 0.4,
  compactDeadRatio: 0.25,
  compactMinDead: 1024,
  analyzer: {},
});

/** Corpus statistics of one shard, summed across shards by the coordinator. */
export interface CorpusStats {
  /** Live documents (empty documents included). */
  docCount: number;
  /** Sum of live document lengths in tokens. */
  totalLength: number;
}

/** Global statistics for one query: corpus totals plus doc frequencies aligned with the query terms. */
export interface GlobalStats extends CorpusStats {
  /** `docFreqs[i]` is the number of live documents, over all shards, containing `terms[i]`. */
  docFreqs: ArrayLike<number>;
}

/** Top-k result of one shard, best first (score desc, then chunk id asc). */
export interface Bm25Hits {
  /** Internal ids. */
  ids: Uint32Array;
  /** BM25 scores aligned with `ids`. */
  scores: Float64Array;
  /** Chunk ids aligned with `ids`. */
  chunkIds: string[];
}

/** Plain data form of an index, used by the snapshot codec; postings are concatenated per term. */
export interface Bm25State {
  k1: number;
  b: number;
  analyzer: AnalyzerOptions;
  /** `chunkIds[id]`; undefined marks a free id. */
  chunkIds: (string | undefined)[];
  freeIds: Uint32Array;
  docLen: Uint32Array;
  terms: string[];
  df: Uint32Array;
  maxTf: Uint16Array;
  minDl: Uint32Array;
  /** Term t's postings are entries `postingOffsets[t] .. postingOffsets[t + 1]`. */
  postingOffsets: Uint32Array;
  postingDocs: Uint32Array;
  postingTfs: Uint16Array;
  /**
   * Doc d's distinct terms and content positions, coded as {@link SequenceStore} keeps them, are
   * `tokenCodes[tokenOffsets[d] .. tokenOffsets[d + 1]]`.
   */
  tokenOffsets: Uint32Array;
  tokenCodes: Uint8Array;
  totalLength: number;
}

/** Query words whose weight is multiplied (fulltext_boost at query time). */
export interface TermBoost {
  /** Analyzed words of the boost phrase. */
  readonly terms: ReadonlySet<string>;
  /** Positive multiplier. */
  readonly factor: number;
}

/** Proximity pairs of a query with their document frequencies over every shard. */
export interface PairQuery {
  /** Pairs of analyzed query terms (see proximity.ts). */
  readonly pairs: readonly (readonly [string, string])[];
  /** `docFreqs[i]`: live documents, over all shards, where `pairs[i]` occurs. */
  readonly docFreqs: ArrayLike<number>;
  /** Weight of the pair scores against the term scores. */
  readonly weight: number;
}

/** Most completions a prefix in a content filter expands to. */
const MAX_PREFIX_TERMS = 10_000;

/** Pair postings kept between writes (a few queries' worth). */
const PAIR_CACHE_SIZE = 256;

/** List ids of pair lists in the MaxScore scratch (term ids stay far below). */
const PAIR_LIST_BASE = 0xfff00000;

const emptyHits = (): Bm25Hits => ({ ids: new Uint32Array(0), scores: new Float64Array(0), chunkIds: [] });

/** Idf as Lucene computes it; always positive, which MaxScore relies on. */
export const bm25Idf = (docCount: number, df: number): number => Math.log(1 + (docCount - df + 0.5) / (df + 0.5));

/**
 * Okapi BM25 over per-term postings. Deletes tombstone the internal id (the document's stored
 * tokens keep doc frequencies exact at once) and postings are purged lazily by {@link Bm25Index.compact}.
 * Repeated query terms count once per occurrence (weight = query term frequency), as Lucene's
 * bag-of-words queries in Anserini/Pyserini do.
 */
export class Bm25Index {
  /** Resolved options. */
  readonly options: Readonly<Bm25Options>;
  /** The analyzer used for documents; analyze queries with it too. */
  readonly analyzer: Analyzer;
  private ids = new DocIdMap();
  private readonly post: PostingsStore;
  private docLen = new Uint32Array(64);
  private alive = new Uint8Array(64);
  private liveCount = 0;
  private totalLength = 0;
  /** Tombstoned ids whose postings are not purged yet. */
  private dead: number[] = [];
  /** Upsert scratch: per-term counts (zero between upserts) and the distinct terms of the doc. */
  private tfCount = new Uint32Array(1024);
  private docTerms = new Uint32Array(256);
  /** Text -> term ids, with its own token cache (term ids never change, so cached ids stay valid). */
  private readonly scanner: TermScanner;
  private readonly heap: TopKHeap;
  private readonly scratch = new MaxScoreScratch();
  /**
   * Each document's distinct terms (stop words included) and content-term positions: proximity
   * reads the positions, and a removal or purge finds the document's terms there (one store
   * instead of a forward index of distinct terms beside content-term sequences).
   */
  private seq = new SequenceStore();
  /** `stopTerm[t]` is 1 when term t is the stem of a stop word (no position in sequences, left out of pairs). */
  private stopTerm = new Uint8Array(1024);
  private readonly stopStems: ReadonlySet<string>;
  /**
   * Pair postings built since the last write: a fulltext query builds them to count the pairs'
   * document frequencies and again to score, and the intersection is the costly part.
   */
  private pairCache = new Map<string, PairPostings>();
  /** Term ids in string order (for prefix lookups), rebuilt when terms were added since. */
  private sortedTerms: Uint32Array | null = null;

  /** An empty index. */
  constructor(options: Partial<Bm25Options> = {}) {
    this.options = Object.freeze(Object.assign({}, DEFAULT_BM25_OPTIONS, options));
    if (!(this.options.k1 >= 0) || !(this.options.b >= 0 && this.options.b <= 1)) {
      throw new RangeError(`invalid BM25 parameters k1=${this.options.k1} b=${this.options.b}`);
    }
    this.analyzer = createAnalyzer(this.options.analyzer);
    this.post = new PostingsStore(this.options.k1, this.options.b);
    this.stopStems = new Set([...ENGLISH_STOP_WORDS].map((w) => this.analyzer.stem(w)));
    this.scanner = new TermScanner(this.analyzer, (stem) => this.intern(stem));
    this.heap = new TopKHeap((a, b) => this.ids.compare(a, b));
  }

  /** Term id of a stem (new ones are added), recording whether it is a stop word. */
  private intern(stem: string): number {
    const t = this.post.intern(stem);
    if (t >= this.stopTerm.length) this.stopTerm = grown(this.stopTerm, t + 1);
    if (this.stopStems.has(stem)) this.stopTerm[t] = 1;
    return t;
  }

  /** Whether an analyzed term is the stem of a stop word. */
  isStopTerm(term: string): boolean {
    return this.stopStems.has(term);
  }

  /** Upper bound (exclusive) of internal ids: the capacity an `allow` bitset needs. */
  get capacity(): number {
    return this.ids.capacity;
  }

  /** Internal id of a live chunk, or undefined. */
  internalId(chunkId: string): number | undefined {
    return this.ids.idOf(chunkId);
  }

  /** Order of two live internal ids' chunk ids (as JS compares the strings), without decoding them: score ties. */
  compareChunkIds(a: number, b: number): number {
    return this.ids.compare(a, b);
  }

  /** Distinct term ids of a live chunk, ascending (a view valid until the next sequence read: removal, purge, proximity). */
  docTermIds(id: number): Uint32Array {
    return this.seq.terms(id);
  }

  /** Live chunks holding term id `t`. */
  termDocFreq(t: number): number {
    return t < this.post.size ? this.post.df[t]! : 0;
  }

  /** Term id of `word` when it analyzes to exactly one term the dictionary holds, else -1. */
  termIdOfWord(word: string): number {
    const terms = this.analyzer.analyze(word);
    return terms.length === 1 ? (this.post.termIds.get(terms[0]!) ?? -1) : -1;
  }

  /** Chunk id of a live internal id, or undefined. */
  chunkId(id: number): string | undefined {
    return this.ids.chunkIdOf(id);
  }

  /**
   * Indexes `text` under `chunkId`, replacing any previous version; returns the internal id.
   * With `boost` (the chunk's fulltext_boost), the term frequencies of the phrase's words that
   * occur in the text are multiplied by its factor (rounded, at least 1).
   */
  upsert(chunkId: string, text: string, boost: { phrase: string; factor: number } | null = null): number {
    const len = this.scanner.scan(text);
    if (!boost || boost.phrase.trim() === '' || !(boost.factor > 0) || boost.factor === 1) return this.index(chunkId, len);
    const ids = new Set<number>();
    for (const term of this.analyzer.analyze(boost.phrase)) {
      const t = this.post.termIds.get(term);
      if (t !== undefined) ids.add(t);
    }
    return this.index(chunkId, len, ids, boost.factor);
  }

  /** Like {@link upsert} with already analyzed tokens (same analyzer options, please). */
  upsertTokens(chunkId: string, tokens: readonly string[]): number {
    return this.index(chunkId, this.scanner.internAll(tokens));
  }

  /** Indexes the `len` term ids in `scanner.ids` (the document's tokens in order) under `chunkId`. */
  private index(chunkId: string, len: number, boosted: ReadonlySet<number> | null = null, factor = 1): number {
    if (this.ids.idOf(chunkId) !== undefined) this.remove(chunkId);
    const id = this.ids.allocate(chunkId);
    this.ensureDocCapacity(id + 1);
    // Count with a dense array indexed by term id instead of a Map per doc: no hashing, no boxing.
    const post = this.post;
    const tokenIds = this.scanner.ids;
    let distinct = 0;
    for (let i = 0; i < len; i++) {
      const t = tokenIds[i]!;
      if (t >= this.tfCount.length) this.tfCount = grown(this.tfCount, t + 1);
      if (this.tfCount[t]!++ === 0) {
        if (distinct === this.docTerms.length) this.docTerms = grown(this.docTerms, distinct + 1);
        this.docTerms[distinct++] = t;
      }
    }
    const tfCount = this.tfCount;
    const docTerms = this.docTerms;
    for (let j = 0; j < distinct; j++) {
      const t = docTerms[j]!;
      let count = tfCount[t]!;
      tfCount[t] = 0;
      if (boosted !== null && boosted.has(t)) count = Math.max(1, Math.round(count * factor));
      post.append(t, id, count < MAX_TF ? count : MAX_TF, len);
    }
    this.seq.setDistinct(id, tokenIds, len, docTerms, distinct, this.stopTerm);
    if (this.pairCache.size > 0) this.pairCache.clear();
    this.docLen[id] = len;
    this.alive[id] = 1;
    this.liveCount++;
    this.totalLength += len;
    return id;
  }

  /** Removes a chunk; returns whether it was present. Its postings stop counting at once. */
  remove(chunkId: string): boolean {
    const id = this.ids.release(chunkId);
    if (id === undefined) return false;
    this.alive[id] = 0;
    if (this.pairCache.size > 0) this.pairCache.clear();
    // The sequence stays until compact() purges the postings its terms name.
    const terms = this.seq.terms(id);
    for (let j = 0; j < terms.length; j++) this.post.release(terms[j]!);
    this.liveCount--;
    this.totalLength -= this.docLen[id]!;
    this.dead.push(id);
    const o = this.options;
    if (this.dead.length >= o.compactMinDead && this.dead.length > o.compactDeadRatio * this.liveCount) this.compact();
    return true;
  }

  /** Number of distinct terms that occur in at least one live document (terms whose documents were all deleted do not count). */
  get termCount(): number {
    return this.post.liveTerms;
  }

  /** This shard's corpus statistics. */
  stats(): CorpusStats {
    return { docCount: this.liveCount, totalLength: this.totalLength };
  }

  /** Live document frequency of each term (0 when unknown), aligned with `terms`. */
  termDocFreqs(terms: readonly string[]): Uint32Array {
    const out = new Uint32Array(terms.length);
    for (let i = 0; i < terms.length; i++) {
      const t = this.post.termIds.get(terms[i]!);
      out[i] = t === undefined ? 0 : this.post.df[t]!;
    }
    return out;
  }

  /**
   * Live documents containing every analyzed word of `text` (none when it has no word), as a
   * bitset of `capacity` ids: the `content` filter, quoted query phrases and negated words. With
   * `prefixLastWord` (autocomplete) a last word still being typed matches any word it begins.
   */
  docsContaining(text: string, capacity: number, prefixLastWord = false): Bitset {
    const out = new Bitset(capacity);
    const post = this.post;
    const ids: number[] = [];
    const prefix = prefixLastWord ? lastWordBeingTyped(text) : null;
    let completions: Bitset | null = null;
    if (prefix !== null) {
      const words = this.analyzer.unstemmed(text);
      words.pop();
      text = words.join(' ');
      completions = new Bitset(capacity);
      for (const term of this.termsWithPrefix(prefix, MAX_PREFIX_TERMS).terms) {
        const t = post.termIds.get(term)!;
        const docs = post.docsOf(t);
        for (let j = 0; j < docs.length; j++) if (docs[j]! < capacity && this.alive[docs[j]!] === 1) completions.set(docs[j]!);
      }
      if (words.length === 0) return completions;
    }
    for (const term of new Set(this.analyzer.analyze(text))) {
      const t = post.termIds.get(term);
      if (t === undefined || post.len[t] === 0) return out;
      ids.push(t);
    }
    if (ids.length === 0) return out;
    ids.sort((x, y) => post.len[x]! - post.len[y]!);
    const first = post.docsOf(ids[0]!).subarray(0, post.len[ids[0]!]);
    for (const d of first) if (d < capacity && this.alive[d] === 1) out.set(d);
    for (let i = 1; i < ids.length; i++) {
      const other = new Bitset(capacity);
      const docs = post.docsOf(ids[i]!);
      const n = post.len[ids[i]!]!;
      for (let j = 0; j < n; j++) if (docs[j]! < capacity) other.set(docs[j]!);
      out.and(other);
    }
    if (completions) out.and(completions);
    return out;
  }

  /**
   * Live terms beginning with `prefix` (a lowercased, unstemmed word start), most frequent first,
   * at most `limit`: autocomplete's completions of the word being typed.
   */
  termsWithPrefix(prefix: string, limit: number): { terms: string[]; docFreqs: number[] } {
    const post = this.post;
    if (prefix === '' || limit <= 0) return { terms: [], docFreqs: [] };
    let sorted = this.sortedTerms;
    if (!sorted || sorted.length !== post.size) {
      const terms = post.terms;
      sorted = this.sortedTerms = Uint32Array.from({ length: post.size }, (_, i) => i).sort((a, b) => (terms[a]! < terms[b]! ? -1 : terms[a]! > terms[b]! ? 1 : 0));
    }
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (post.terms[sorted[mid]!]! < prefix) lo = mid + 1;
      else hi = mid;
    }
    const found: { term: string; df: number }[] = [];
    for (let i = lo; i < sorted.length; i++) {
      const term = post.terms[sorted[i]!]!;
      if (!term.startsWith(prefix)) break;
      const df = post.df[sorted[i]!]!;
      if (df > 0) found.push({ term, df });
    }
    found.sort((a, b) => b.df - a.df || (a.term < b.term ? -1 : 1));
    const top = found.slice(0, limit);
    return { terms: top.map((f) => f.term), docFreqs: top.map((f) => f.df) };
  }

  /** The postings of a proximity pair in this shard (empty when either term is unknown here). */
  pairPostings(a: string, b: string): PairPostings {
    const post = this.post;
    const ta = post.termIds.get(a);
    const tb = post.termIds.get(b);
    if (ta === undefined || tb === undefined || post.len[ta] === 0 || post.len[tb] === 0) {
      return { docs: new Uint32Array(0), tfs: new Uint8Array(0), big: null, n: 0 };
    }
    const key = ta < tb ? `${ta}:${tb}` : `${tb}:${ta}`;
    const cached = this.pairCache.get(key);
    if (cached) return cached;
    post.ensureSorted(ta);
    post.ensureSorted(tb);
    const list = pairPostings(post.blockDocs(ta), post.blockDocs(tb), this.alive, this.seq, ta, tb);
    if (this.pairCache.size >= PAIR_CACHE_SIZE) this.pairCache.delete(this.pairCache.keys().next().value!);
    this.pairCache.set(key, list);
    return list;
  }

  /** Live documents of this shard where each pair occurs, aligned with `pairs`. */
  pairDocFreqs(pairs: readonly (readonly [string, string])[]): number[] {
    return pairs.map(([a, b]) => this.pairPostings(a, b).n);
  }

  /**
   * Top-k live documents for `queryTerms` scored with `global` statistics, restricted to `allow`
   * when given; with `pairs`, each pair adds `weight` times its own BM25 score (fulltext search).
   * Exact: equal to exhaustive scoring, MaxScore only skips hopeless documents. `chunkIds` names
   * the first `nameFirst` hits only (`ids` and `scores` hold all k).
   */
  search(
    queryTerms: readonly string[],
    k: number,
    global: GlobalStats,
    allow: Bitset | null = null,
    pairs: PairQuery | null = null,
    boost: TermBoost | null = null,
    nameFirst = Number.POSITIVE_INFINITY,
  ): Bm25Hits {
    if (k <= 0 || global.docCount <= 0 || global.totalLength <= 0) return emptyHits();
    const { k1, b } = this.options;
    const post = this.post;
    const lists = this.scratch;
    lists.reset();
    // Merge repeated terms into one list whose weight counts each occurrence (in query order,
    // so the sum is the same float on every shard).
    for (let i = 0; i < queryTerms.length; i++) {
      const t = post.termIds.get(queryTerms[i]!);
      if (t === undefined || post.len[t] === 0) continue;
      let w = bm25Idf(global.docCount, global.docFreqs[i] ?? 0) * (k1 + 1);
      if (boost && boost.terms.has(queryTerms[i]!)) w *= boost.factor;
      const j = lists.indexOf(t);
      if (j >= 0) lists.weight[j] = lists.weight[j]! + w;
      else lists.add(t, w);
    }
    const termLists = lists.m;
    const avgdl = global.totalLength / global.docCount;
    const pairLists: PairPostings[] = [];
    if (pairs && pairs.weight > 0) {
      // A pair repeated in the query is one list with the summed weight, like repeated terms.
      const seen = new Map<string, number>();
      pairs.pairs.forEach(([a, b], i) => {
        const df = pairs.docFreqs[i] ?? 0;
        if (df === 0) return;
        const key = a < b ? `${a}\u0001${b}` : `${b}\u0001${a}`;
        const w = pairs.weight * bm25Idf(global.docCount, df) * (k1 + 1);
        const j = seen.get(key);
        if (j !== undefined) {
          lists.weight[j] = lists.weight[j]! + w;
          return;
        }
        const list = this.pairPostings(a, b);
        if (list.n === 0) return;
        seen.set(key, lists.add(PAIR_LIST_BASE + pairLists.length, w));
        pairLists.push(list);
      });
    }
    if (lists.m === 0) return emptyHits();
    for (let j = termLists; j < lists.m; j++) {
      const list = pairLists[j - termLists]!;
      const bounds = listBounds(list, this.docLen, k1, b, avgdl);
      lists.setPostings(j, list.docs, list.tfs, list.big, list.n, bounds.blockLast, bounds.blockMax, bounds.sat);
      checkYield(list.n);
    }
    for (let j = 0; j < termLists; j++) {
      const t = lists.term[j]!;
      post.ensureSorted(t);
      const sat = post.ensureBounds(t, avgdl, this.docLen);
      const n = post.len[t]!;
      lists.setBlockPostings(j, post.basesOf(t), post.shiftOf(t), post.lowsOf(t), post.tfsOf(t), post.overflowOf(t), n, post.blockLast[t]!, post.blockMax[t]!, sat);
      checkYield(post.len[t]! >> 4);
    }
    this.heap.reset(k);
    maxScoreTopK(lists, { docLen: this.docLen, alive: this.alive, allow, k1, b, avgdl }, this.heap);
    // The views may point into a postings arena that a later append reallocates: do not keep it alive.
    lists.detach();
    const { ids, scores } = this.heap.drain();
    // A count asks for every match but names only the page (strings for 10^5 ids cost ms).
    const named = Math.min(ids.length, nameFirst);
    const chunkIds = new Array<string>(named);
    for (let i = 0; i < named; i++) chunkIds[i] = this.ids.chunkIdOf(ids[i]!)!;
    return { ids, scores, chunkIds };
  }

  /**
   * Bytes of each structure of the index (see memory-report.ts for what is exact and what is
   * estimated); the token table and analyzer caches, a few MiB whatever the corpus, are not in it.
   */
  memoryReport(): MemoryParts {
    const seq = this.seq.memoryParts();
    return withFields(this.post.memoryParts(), {
      sequences: seq.data,
      'sequences slack': seq.slack,
      'doc tables': this.docLen.byteLength + this.alive.byteLength + seq.tables + this.stopTerm.byteLength,
      'chunk ids (arena, hash table)': this.ids.memoryBytes(),
    });
  }

  /** Purges tombstoned documents from postings and makes their ids reusable. */
  compact(): void {
    if (this.dead.length === 0) return;
    const touched = new Set<number>();
    for (const id of this.dead) {
      const terms = this.seq.terms(id);
      for (let j = 0; j < terms.length; j++) touched.add(terms[j]!);
      this.seq.clear(id);
      this.docLen[id] = 0;
    }
    for (const t of touched) this.post.purge(t, this.alive, this.docLen);
    this.ids.recycle(this.dead);
    this.dead = [];
  }

  /**
   * Gives back the growth room of the postings, the chunk-id table and the doc tables, so that
   * the index takes what a snapshot load of it takes. Called once a dataset's writes stop
   * (the `compact` shard task, QUARRY_COMPACT_IDLE_MS). Two 1M-chunk builds in one process, one
   * compacted, answered the same queries equally fast (bench/README.md); separate-process runs had
   * once suggested otherwise under load.
   */
  compactStorage(): void {
    this.compact();
    this.post.compactStorage();
    this.ids.compactStorage();
    const cap = Math.max(64, this.ids.capacity);
    if (this.docLen.length > cap) {
      this.docLen = this.docLen.slice(0, cap);
      this.alive = this.alive.slice(0, cap);
    }
  }

  /** Exports a compacted plain-data copy of the index (for snapshots). */
  exportState(): Bm25State {
    this.compact();
    const cap = this.ids.capacity;
    const post = this.post;
    const T = post.size;
    const postingOffsets = new Uint32Array(T + 1);
    for (let t = 0; t < T; t++) {
      post.ensureSorted(t);
      postingOffsets[t + 1] = postingOffsets[t]! + post.len[t]!;
    }
    const postingDocs = new Uint32Array(postingOffsets[T]!);
    const postingTfs = new Uint16Array(postingOffsets[T]!);
    for (let t = 0; t < T; t++) {
      postingDocs.set(post.docsOf(t), postingOffsets[t]);
      postingTfs.set(post.exactTfsOf(t), postingOffsets[t]);
    }
    const chunkIds: (string | undefined)[] = [];
    for (let d = 0; d < cap; d++) chunkIds.push(this.ids.chunkIdOf(d));
    return {
      k1: this.options.k1,
      b: this.options.b,
      analyzer: { ...this.analyzer.options },
      chunkIds,
      freeIds: this.ids.freeIds(),
      docLen: this.docLen.slice(0, cap),
      terms: post.terms.slice(),
      df: post.df.slice(0, T),
      maxTf: post.maxTf.slice(0, T),
      minDl: post.minDl.slice(0, T),
      postingOffsets,
      postingDocs,
      postingTfs,
      ...(({ offsets, codes }) => ({ tokenOffsets: offsets, tokenCodes: codes }))(this.seq.export(cap)),
      totalLength: this.totalLength,
    };
  }

  /** Rebuilds an index from {@link exportState} output; `options` may override compaction settings. */
  static fromState(state: Bm25State, options: Partial<Bm25Options> = {}): Bm25Index {
    const index = new Bm25Index(withFields(options, { k1: state.k1, b: state.b, analyzer: state.analyzer }));
    const cap = state.chunkIds.length;
    const T = state.terms.length;
    index.ids = DocIdMap.restore(state.chunkIds, state.freeIds);
    index.ensureDocCapacity(cap);
    index.docLen.set(state.docLen);
    for (let d = 0; d < cap; d++) {
      if (state.chunkIds[d] !== undefined) {
        index.alive[d] = 1;
        index.liveCount++;
      }
    }
    index.seq = SequenceStore.restore(state.tokenOffsets, state.tokenCodes);
    // One arena allocation for every short list instead of one per growth step.
    let arenaWords = 0;
    for (let t = 0; t < T; t++) arenaWords += PostingsStore.arenaWords(state.postingOffsets[t + 1]! - state.postingOffsets[t]!);
    index.post.reserveArena(arenaWords);
    for (let t = 0; t < T; t++) {
      if (index.intern(state.terms[t]!) !== t) throw new Error(`duplicate term in state: ${state.terms[t]}`);
      const from = state.postingOffsets[t]!;
      const to = state.postingOffsets[t + 1]!;
      // load copies the entries (into the arena or exact-size own arrays), so views suffice here.
      index.post.load(t, state.postingDocs.subarray(from, to), state.postingTfs.subarray(from, to), state.df[t]!, state.maxTf[t]!, state.minDl[t]!);
    }
    index.totalLength = state.totalLength;
    return index;
  }

  private ensureDocCapacity(need: number): void {
    this.docLen = grown(this.docLen, need);
    this.alive = grown(this.alive, need);
  }
}
