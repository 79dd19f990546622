/**
 * One shard of one dataset, living in exactly one thread: the BM25 index, the filterable fields
 * (keyed by the index's internal ids) and the change-log sequence it has applied.
 */
import type { Filter } from '../../core/domain/filter.js';
import { evaluateFilter, liveSet } from './filter/evaluate.js';
import { checkStop } from './task-stop.js';
import { FieldStore } from './filter/field-store.js';
import type { Bm25Params, ScrollShardReply, SearchShardReply, ShardDoc, ShardStatsReply, TermStatsReply } from './protocol.js';
import { DenseIndex } from './dense/dense-index.js';
import { denseMetricFor, passesScoreThreshold, type DenseMetric } from './dense/dense-metric.js';
import { Bm25Index } from './bm25/bm25-index.js';
import { SparseVectorIndex } from './splade/sparse-vector-index.js';
import type { TieBreak } from './top-k-heap.js';
import { Vocabulary, type VocabularyAnswer, type VocabularyLookup } from './typo/vocabulary.js';
import { ChunkWords } from './typo/chunk-words.js';

import { sparseDot, type SparseVector } from '../../core/domain/sparse-vector.js';
import { PAIR_WEIGHT, queryPairs } from './bm25/proximity.js';
import { lastWordBeingTyped, MAX_COMPLETIONS, withCompletions } from '../../core/domain/completions.js';
import { withFields } from '../../core/domain/with-fields.js';

/** Sort key of a document for scroll-by-field; NaN when the document has none. */
function sortKey(fields: FieldStore, id: number, field: string): number {
  if (field === 'num_value') return FieldStore.value(fields.numValue, id);
  if (field === 'time_stamp') return FieldStore.value(fields.timeStamp, id);
  if (field.startsWith('metadata.')) {
    let v: unknown = fields.metadata(id);
    for (const k of field.slice(9).split('.')) v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
    return typeof v === 'number' ? v : Number.NaN;
  }
  return Number.NaN;
}

/** A shard's state and operations. */
export class Shard {
  index: Bm25Index;
  fields = new FieldStore();
  appliedSeq = 0;
  /** Dense vectors keyed by the BM25 index's internal ids; created with the first vector. */
  dense: DenseIndex | null = null;
  readonly metric: DenseMetric;
  /** SPLADE vectors keyed by the BM25 index's internal ids (fulltext with a sparse encoder). */
  readonly sparse = new SparseVectorIndex();
  /**
   * The words of this shard's chunks with document counts, for typo correction; null until the
   * dataset's first typo-corrected query turns it on (it costs about as much indexing time and
   * memory as the BM25 index itself, so datasets that never correct typos do not pay for it).
   */
  vocabulary: Vocabulary | null = null;
  /**
   * Whether the snapshot this shard was loaded from had its typo vocabulary on. The load leaves
   * the vocabulary off; the core turns it on and fills it from the store in slices
   * (persist/shard-snapshot.ts, decodeShard).
   */
  typoWanted = false;
  /** Per internal id: the vocabulary ids of the chunk's words (to uncount them when it changes), relative to its BM25 terms. */
  readonly chunkWords = new ChunkWords();

  constructor(readonly params: Bm25Params, index?: Bm25Index, dense?: DenseIndex | null) {
    this.index = index ?? new Bm25Index({ k1: params.k1, b: params.b });
    this.metric = denseMetricFor(params.distance ?? 'cosine');
    this.dense = dense ?? null;
  }

  /** Applies upserts and deletes recorded through `seq` (idempotent: replays are harmless). */
  apply(upserts: readonly ShardDoc[], deletes: readonly string[], seq: number): void {
    for (const chunkId of deletes) {
      const id = this.index.internalId(chunkId);
      if (id !== undefined) {
        this.fields.clear(id);
        this.dense?.remove(id);
        this.sparse.remove(id);
        this.forgetWords(id);
      }
      this.index.remove(chunkId);
    }
    for (const doc of upserts) this.upsert(doc);
    this.appliedSeq = Math.max(this.appliedSeq, seq);
  }

  /** Indexes one document, replacing any previous version. */
  upsert(doc: ShardDoc): void {
    const old = this.index.internalId(doc.chunkId);
    if (old !== undefined) {
      this.fields.clear(old);
      this.dense?.remove(old);
      this.sparse.remove(old);
      this.forgetWords(old);
    }
    const id = this.index.upsert(doc.chunkId, doc.text, doc.boost ?? null);
    this.fields.set(id, doc);
    this.countText(id, doc.text);
    if (doc.sparse && doc.sparse.indices.length > 0) this.sparse.upsert(id, doc.sparse);
    if (doc.vector) {
      // A vector of another length means the dataset changed models: the old vectors must go.
      if (this.dense && this.dense.dimension !== doc.vector.length) this.dense = null;
      this.dense ??= new DenseIndex({ dimension: doc.vector.length, metric: this.metric });
      this.dense.upsert(id, doc.vector);
    } else {
      this.dense?.remove(id);
    }
  }

  /** Orders internal ids by chunk id: how every index of this shard breaks score ties, as the core's merge does. */
  private readonly byChunkId: TieBreak = (a, b) => this.index.compareChunkIds(a, b);

  /** Top `k` by dense similarity (or distance), restricted by the filter and threshold. */
  searchDense(vector: Float32Array, k: number, filter: Filter | null, threshold: number | null, countTotal: boolean): SearchShardReply {
    const dense = this.dense;
    if (!dense || dense.size === 0) return { chunkIds: [], scores: [], total: 0 };
    const allow = this.allow(filter);
    // Thresholds keep a prefix of the ranking, except the spec's dot-product rule (drop scores
    // above it), which keeps the worst matches: that one, and counting, need every candidate.
    const want = countTotal || (threshold && this.metric === 'ip') ? dense.size : k;
    const hits = dense.search(vector, Math.max(1, want), allow, { tieBreak: this.byChunkId });
    const chunkIds: string[] = [];
    const scores: number[] = [];
    let total = 0;
    for (let i = 0; i < hits.ids.length; i++) {
      const score = hits.scores[i]!;
      if (!passesScoreThreshold(this.metric, score, threshold ?? undefined)) continue;
      total++;
      if (chunkIds.length < k) {
        chunkIds.push(this.index.chunkId(hits.ids[i]!)!);
        scores.push(score);
      }
    }
    return { chunkIds, scores, total: countTotal ? total : 0 };
  }

  /** The analyzed query with this shard's corpus statistics and document frequencies for it. */
  termStats(text: string, withPairs = false, prefix = false): TermStatsReply {
    const terms = this.index.analyzer.analyze(text);
    const s = this.index.stats();
    let reply: TermStatsReply = { terms, docCount: s.docCount, totalLength: s.totalLength, docFreqs: Array.from(this.index.termDocFreqs(terms)) };
    if (withPairs) {
      const pairs = queryPairs(terms, (t) => this.index.isStopTerm(t));
      reply = withFields(reply, { pairs, pairDocFreqs: this.index.pairDocFreqs(pairs) });
    }
    if (prefix) {
      const last = lastWordBeingTyped(text);
      const found = last === null ? { terms: [], docFreqs: [] } : this.index.termsWithPrefix(last, MAX_COMPLETIONS);
      reply = withFields(reply, { completions: found.terms, completionDocFreqs: found.docFreqs });
    }
    return reply;
  }

  /**
   * Top `k` by BM25, restricted by the filter and `minScore`. `global` carries statistics summed
   * over every shard of the dataset (so scores do not depend on the shard count); null means
   * this shard is the only one and its own statistics are global.
   */
  search(
    text: string,
    global: TermStatsReply | null,
    k: number,
    filter: Filter | null,
    minScore: number | null,
    countTotal: boolean,
    fulltext = false,
    boost: { phrase: string; factor: number } | null = null,
    prefix = false,
  ): SearchShardReply {
    const stats = global ?? withCompletions(this.termStats(text, fulltext, prefix));
    const terms = stats.terms;
    const allow = this.allow(filter);
    const live = this.fields.size;
    const want = countTotal ? live : k;
    const pairs = fulltext && stats.pairs ? { pairs: stats.pairs, docFreqs: stats.pairDocFreqs ?? [], weight: PAIR_WEIGHT } : null;
    const termBoost = boost ? { terms: new Set(this.index.analyzer.analyze(boost.phrase)), factor: boost.factor } : null;
    const hits = this.index.search(terms, want, stats, allow, pairs, termBoost, k);
    const chunkIds: string[] = [];
    const scores: number[] = [];
    let total = 0;
    for (let i = 0; i < hits.scores.length; i++) {
      const s = hits.scores[i]!;
      if (minScore !== null && s < minScore) break;
      total++;
      if (chunkIds.length < k) {
        chunkIds.push(hits.chunkIds[i]!);
        scores.push(s);
      }
    }
    return { chunkIds, scores, total: countTotal ? total : 0 };
  }

  /** Counts a chunk's text in the typo vocabulary. */
  private countText(id: number, text: string): void {
    if (!this.vocabulary) return;
    this.chunkWords.set(id, this.vocabulary.addText(text), this.index, this.vocabulary);
  }

  /** Vocabulary ids of a live chunk's words, ascending (empty when not counted): a view valid until the next call. */
  wordIdsOf(id: number): Uint32Array {
    return this.chunkWords.wordIds(id, this.index);
  }

  /** Uncounts a chunk's words. */
  private forgetWords(id: number): void {
    if (!this.vocabulary) return;
    this.vocabulary.removeIds(this.chunkWords.wordIds(id, this.index));
    this.chunkWords.clear(id);
  }

  /** Turns the typo vocabulary on; returns whether it was on already (then it is complete). */
  enableTypo(): boolean {
    if (this.vocabulary) return true;
    this.vocabulary = new Vocabulary();
    return false;
  }

  /**
   * Counts the texts of chunks the vocabulary does not hold yet (filling it from the store after
   * {@link enableTypo}); chunks written since it was turned on are counted already and skipped.
   */
  fillTypo(docs: readonly { chunkId: string; text: string }[]): void {
    if (!this.vocabulary) return;
    for (const d of docs) {
      const id = this.index.internalId(d.chunkId);
      if (id !== undefined && !this.chunkWords.has(id)) this.countText(id, d.text);
    }
  }

  /** Answers typo lookups (no vocabulary: every word unknown, no candidates). */
  typoAnswers(lookups: readonly VocabularyLookup[]): VocabularyAnswer[] {
    return this.vocabulary ? this.vocabulary.answer(lookups) : lookups.map(() => ({ exact: 0, candidates: [] }));
  }

  /** Top `k` by SPLADE dot product, restricted by the filter and threshold. */
  searchSparse(vector: SparseVector, k: number, filter: Filter | null, threshold: number | null, countTotal: boolean): SearchShardReply {
    if (this.sparse.size === 0) return { chunkIds: [], scores: [], total: 0 };
    const hits = this.sparse.search(vector, k, this.allow(filter), threshold, this.byChunkId);
    return { chunkIds: hits.ids.map((id) => this.index.chunkId(id)!), scores: hits.scores, total: countTotal ? hits.total : 0 };
  }

  /** SPLADE scores of these chunks against a query vector (NaN for a chunk without a vector here). */
  sparseScores(vector: SparseVector, chunkIds: readonly string[]): number[] {
    return chunkIds.map((cid) => {
      const id = this.index.internalId(cid);
      const v = id === undefined ? undefined : this.sparse.get(id);
      return v ? sparseDot(v, vector) : Number.NaN;
    });
  }

  /** Dense scores of these chunks against a query vector (NaN for a chunk without a vector here). */
  denseScores(vector: Float32Array, chunkIds: readonly string[]): number[] {
    return chunkIds.map((cid) => {
      const id = this.index.internalId(cid);
      return id !== undefined && this.dense?.has(id) ? this.dense.scoreOf(id, vector) : Number.NaN;
    });
  }

  /** The filter's bitset over this shard's ids (null: no restriction). */
  allow(filter: Filter | null) {
    const capacity = Math.max(this.index.capacity, this.fields.capacity);
    return evaluateFilter(filter, this.fields, capacity, (cid) => this.index.internalId(cid), (text, prefix) => this.index.docsContaining(text, capacity, prefix));
  }

  /**
   * Up to `limit` ids passing the filter: by chunk id ascending from `afterId` (inclusive: the
   * spec's offset_chunk_id is where the page starts), or by a field (documents without the field last).
   */
  scroll(filter: Filter | null, afterId: string | null, limit: number, sortField: string | null, descending: boolean): ScrollShardReply {
    const capacity = Math.max(this.index.capacity, this.fields.capacity);
    const allow = this.allow(filter) ?? liveSet(this.fields, capacity);
    const picked: { id: string; key: number }[] = [];
    allow.forEach((internal) => {
      checkStop();
      const chunkId = this.index.chunkId(internal);
      if (chunkId === undefined) return;
      if (sortField === null) {
        if (afterId === null || chunkId >= afterId) picked.push({ id: chunkId, key: Number.NaN });
      } else {
        picked.push({ id: chunkId, key: sortKey(this.fields, internal, sortField) });
      }
    });
    // Sorting cannot be polled; it is bounded by the shard's size, the loop above by time.
    checkStop(picked.length);
    if (sortField === null) {
      picked.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    } else {
      const dir = descending ? -1 : 1;
      picked.sort((a, b) => {
        const an = Number.isNaN(a.key);
        const bn = Number.isNaN(b.key);
        if (an !== bn) return an ? 1 : -1;
        if (!an && a.key !== b.key) return (a.key - b.key) * dir;
        return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
      });
    }
    const page = picked.slice(0, limit);
    return { chunkIds: page.map((p) => p.id), keys: page.map((p) => p.key) };
  }

  /** Size figures. */
  stats(): ShardStatsReply {
    const s = this.index.stats();
    return { chunkCount: s.docCount, appliedSeq: this.appliedSeq, tokenCount: s.totalLength };
  }
}
