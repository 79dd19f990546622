/**
 * Data sets of bench/compare-libraries.ts. Documents are kept serialized (one JSON buffer) so that
 * each engine parses its own fresh copy inside its measured region: an engine that keeps the
 * text (Orama keeps every document) is charged for it, one that does not is not.
 */
import type { Qrels } from './metrics.js';
import type { BenchDoc } from './compare-engines.js';
import { DEFAULT_SYNTHETIC_OPTIONS, syntheticCorpus, syntheticQueries } from './synthetic.js';
import { loadQrels, loadSciFact, scifactDir } from './scifact.js';
import { fnv1a } from '../../core/domain/fnv1a.js';

/** Number of distinct tags. */
export const TAG_COUNT = 20;

/** A loaded data set. */
export interface BenchData {
  /** One line for the report. */
  readonly description: string;
  readonly docCount: number;
  /** `JSON.stringify(BenchDoc[])` as UTF-8. */
  readonly docsJson: Buffer;
  /** Document id -> tags, to check filtered results. */
  readonly tagsOf: ReadonlyMap<string, readonly string[]>;
  /** The tag query `i` is restricted to in the filtered runs (rotates over all tags). */
  tagFor(i: number): string;
  /** Share of documents carrying a tag, on average over tags (the filter's selectivity). */
  readonly tagShare: number;
  /** Query ids (the qrels keys for SciFact) and texts. */
  readonly queries: readonly { readonly id: string; readonly text: string }[];
  /** Relevance judgements when the data set has them. */
  readonly qrels: Qrels | null;
}

function pack(docs: readonly BenchDoc[]): { docsJson: Buffer; tagsOf: Map<string, readonly string[]>; tagShare: number } {
  const tagsOf = new Map<string, readonly string[]>();
  let tagged = 0;
  for (const d of docs) {
    tagsOf.set(d.id, d.tags);
    tagged += d.tags.length;
  }
  return { docsJson: Buffer.from(JSON.stringify(docs), 'utf8'), tagsOf, tagShare: tagged / TAG_COUNT / Math.max(1, docs.length) };
}

/** BEIR SciFact: title + " " + text as the one text field, one tag `tag{fnv1a(id) % 20}`, test-split queries. */
export function sciFactData(): BenchData {
  const sf = loadSciFact();
  const qrels = loadQrels('test');
  const docs: BenchDoc[] = sf.docs.map((d) => ({ id: d.id, text: `${d.title} ${d.text}`, tags: [`tag${fnv1a(d.id) % TAG_COUNT}`] }));
  const queries = [...qrels.keys()].map((id) => ({ id, text: sf.queries.get(id) ?? '' }));
  const words = docs.reduce((n, d) => n + d.text.split(/\s+/).length, 0);
  return {
    description:
      `BEIR SciFact (${scifactDir}, corpus sha256 ${sf.corpusSha256.slice(0, 12)}...): ${docs.length} docs, title + " " + text ` +
      `(~${Math.round(words / docs.length)} words/doc); ${queries.length} test-split queries with qrels; one tag per doc, tag{fnv1a(id) % ${TAG_COUNT}}`,
    docCount: docs.length,
    tagFor: (i) => `tag${i % TAG_COUNT}`,
    ...pack(docs),
    queries,
    qrels,
  };
}

/** bench/lib/synthetic.ts: its seeded Zipf corpus (1-3 tags per document) and `queryCount` queries. */
export function syntheticData(docCount: number, queryCount: number): BenchData {
  const o = { ...DEFAULT_SYNTHETIC_OPTIONS, docs: docCount, tags: TAG_COUNT };
  const docs: BenchDoc[] = [];
  for (const d of syntheticCorpus(o)) docs.push({ id: d.id, text: d.text, tags: d.tags });
  const queries = syntheticQueries(queryCount, 7, o).map((text, i) => ({ id: `q${i}`, text }));
  const packed = pack(docs);
  return {
    description:
      `synthetic (bench/lib/synthetic.ts): ${docCount} docs of ${o.wordsPerDoc / 2}-${(o.wordsPerDoc * 3) / 2} words ` +
      `(mean ${o.wordsPerDoc}) from a ${o.vocabulary}-word Zipf(s=${o.zipfS}) vocabulary, seed ${o.seed}, 1-3 of ${TAG_COUNT} tags per doc; ` +
      `${queryCount} queries of 2-3 distinct Zipf-drawn words (seed 7); no relevance judgements`,
    docCount,
    ...packed,
    tagFor: (i) => `tag-${i % TAG_COUNT}`,
    queries,
    qrels: null,
  };
}
