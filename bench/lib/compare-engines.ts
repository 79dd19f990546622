/**
 * The engines compared by bench/compare-libraries.ts, behind one small interface: build an index
 * from documents, then answer "top 10 ids for this query text, optionally restricted to one tag".
 * Each adapter creates everything it retains inside `build`, so the caller's heap delta charges
 * the engine (and nothing else) for it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { create, insertMultiple, search as oramaSearch, type Results, type Tokenizer } from '@orama/orama';
import FlexSearch from 'flexsearch';
import MiniSearch from 'minisearch';
import type { Filter } from '../../core/domain/filter.js';
import type { ShardDoc } from '../../workers/shard/protocol.js';
import { Shard } from '../../workers/shard/shard.js';
import { createAnalyzer } from '../../workers/shard/bm25/analyzer.js';
import { textDoc } from '../../workers/shard/text-doc.js';
import { repoRoot } from './scifact.js';

/** One document as every engine receives it: one text field and a filterable tag set. */
export interface BenchDoc {
  readonly id: string;
  readonly text: string;
  readonly tags: readonly string[];
}

/** A built index. */
export interface BuiltEngine {
  /** Top `k` document ids, best first; only documents tagged `tag` when it is not null. */
  search(query: string, k: number, tag: string | null): string[];
}

/**
 * How text is analyzed by the libraries: `shared` gives every library quarry's analyzer (NFKC,
 * lowercase, Unicode word split, Porter stemming, stop words kept) and quarry's BM25 k1/b where the
 * library exposes them, so that differences come from the engines; `native` uses each library's
 * out-of-the-box tokenizer and scoring parameters.
 */
export type AnalyzerMode = 'shared' | 'native';

/** An engine under comparison. */
export interface EngineAdapter {
  readonly name: string;
  /** Package version as installed. */
  readonly version: string;
  /** How it was configured, for the report. */
  readonly config: string;
  build(docs: readonly BenchDoc[]): BuiltEngine | Promise<BuiltEngine>;
}

/** BM25 parameters of quarry (and given to the libraries in `shared` mode). */
export const BM25 = { k1: 0.9, b: 0.4 } as const;

/** Installed version of a package, read from its package.json. */
export function packageVersion(name: string): string {
  const file = path.join(repoRoot, 'node_modules', ...name.split('/'), 'package.json');
  return String((JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown }).version ?? '?');
}

/** quarry's shard in-process: the same code a shard thread runs, without gRPC or piscina. */
export function quarryEngine(): EngineAdapter {
  return {
    name: 'quarry',
    version: 'working tree',
    config: `Shard({k1: ${BM25.k1}, b: ${BM25.b}}), apply() in batches of 1000, tag filter as a tag_set match_any Filter`,
    build(docs) {
      const shard = new Shard({ k1: BM25.k1, b: BM25.b });
      for (let i = 0; i < docs.length; i += 1000) {
        const batch: ShardDoc[] = docs.slice(i, i + 1000).map((d) => textDoc(d.id, d.text, d.tags));
        shard.apply(batch, [], 1);
      }
      return {
        search(query, k, tag) {
          const filter: Filter | null = tag === null ? null : { must: [{ field: { field: 'tag_set', match_any: [{ text: tag }] } }] };
          // As the coordinator runs a query: analyze + statistics (termStats), then the shard search.
          const st = shard.termStats(query);
          return shard.search(query, st, k, filter, null, false).chunkIds;
        },
      };
    },
  };
}

/** MiniSearch: BM25+ over a radix tree; filter callback on a stored field; returns every match sorted. */
export function miniSearchEngine(mode: AnalyzerMode): EngineAdapter {
  return {
    name: 'MiniSearch',
    version: packageVersion('minisearch'),
    config:
      mode === 'shared'
        ? `fields [text], storeFields [tags], quarry analyzer as tokenize, bm25 {k: ${BM25.k1}, b: ${BM25.b}, d: 0.5 (default)}, combineWith OR, filter callback`
        : 'fields [text], storeFields [tags], default tokenizer and bm25 {k 1.2, b 0.7, d 0.5}, combineWith OR, filter callback',
    build(docs) {
      const analyzer = createAnalyzer();
      const ms = new MiniSearch<BenchDoc>({
        fields: ['text'],
        storeFields: ['tags'],
        ...(mode === 'shared' ? { tokenize: (s: string) => analyzer.analyze(s), processTerm: (t: string) => t } : {}),
        searchOptions: { combineWith: 'OR', ...(mode === 'shared' ? { bm25: { k: BM25.k1, b: BM25.b, d: 0.5 } } : {}) },
      });
      ms.addAll(docs);
      return {
        search(query, k, tag) {
          const hits = tag === null ? ms.search(query) : ms.search(query, { filter: (r) => (r.tags as string[]).includes(tag) });
          const out: string[] = [];
          for (let i = 0; i < Math.min(k, hits.length); i++) out.push(String(hits[i]!.id));
          return out;
        },
      };
    },
  };
}

/** Appended to every Orama token in `shared` mode (a control character no analyzer emits). */
const END = '\u0001';

/** Orama: radix tree + BM25 per property; `where` on an enum property. Keeps every document. */
export function oramaEngine(mode: AnalyzerMode): EngineAdapter {
  return {
    name: 'Orama',
    version: packageVersion('@orama/orama'),
    config:
      mode === 'shared'
        ? `schema {id string, text string, tags enum[]}, quarry analyzer as tokenizer (deduplicated per text, as Orama's own tokenizer does; end-of-term marker so terms match exactly instead of as prefixes), relevance {k: ${BM25.k1}, b: ${BM25.b}, d: 0.5 (default)}, threshold 1 (OR), where {tags: {containsAny: [tag]}}`
        : 'schema {id string, text string, tags enum[]}, default english tokenizer (no stemming; every query term prefix-matches) and relevance {k 1.2, b 0.75, d 0.5}, threshold 1 (OR), where {tags: {containsAny: [tag]}}',
    async build(docs) {
      const analyzer = createAnalyzer();
      const tokenizer: Tokenizer = {
        language: 'english',
        normalizationCache: new Map(),
        // Orama counts a token's document frequency once per returned token: duplicates must go.
        // Its radix tree prefix-matches every query term ("cell" also finds "cellular"); an end
        // marker on every token makes a term match only itself, as in the other engines.
        tokenize: (raw: string) => [...new Set(analyzer.analyze(raw))].map((t) => t + END),
      };
      const db = create({
        schema: { id: 'string', text: 'string', tags: 'enum[]' } as const,
        ...(mode === 'shared' ? { components: { tokenizer } } : {}),
      });
      await insertMultiple(db, docs as { id: string; text: string; tags: string[] }[], 1000);
      const relevance = mode === 'shared' ? { k: BM25.k1, b: BM25.b, d: 0.5 } : undefined;
      return {
        search(query, k, tag) {
          const res = oramaSearch(db, {
            term: query,
            properties: ['text'],
            limit: k,
            threshold: 1,
            ...(relevance ? { relevance } : {}),
            ...(tag === null ? {} : { where: { tags: { containsAny: [tag] } } }),
          });
          if (res instanceof Promise) throw new Error('Orama search went asynchronous; the timing loop needs it synchronous');
          return (res as Results<BenchDoc>).hits.map((h) => h.id);
        },
      };
    },
  };
}

/** Result shape of a FlexSearch Document query (one entry per searched field). */
type FlexFieldResult = { field?: string; result: (number | string)[] }[];

/**
 * How FlexSearch restricts to a tag. `tag-option`: its Document `tag` index and search option, which
 * returns fewer than `limit` results when enough exist (FlexSearch issues #459, #524, #533; still so
 * in 0.8.212). `post-filter`: an untagged query with a growing limit (100, x4) until `k` tagged
 * results are found or the matches run out; tags kept in an array beside the index.
 */
export type FlexTagMode = 'tag-option' | 'post-filter';

/**
 * FlexSearch Document: one indexed field. Numeric ids, as its documentation recommends; the id
 * strings are kept in an array that counts as its memory. Multi-term queries intersect unless
 * `suggest: true`, which is how FlexSearch does OR.
 */
export function flexSearchEngine(mode: AnalyzerMode, tagMode: FlexTagMode): EngineAdapter {
  const common = 'tokenize strict, resolution 9 (default), suggest true (OR), numeric ids; ranks by term position, not BM25';
  const tagging = tagMode === 'tag-option' ? 'tag: native Document tag index + search option' : 'tag: post-filter of an untagged query, limit 100 x4 until 10 tagged hits';
  return {
    name: tagMode === 'tag-option' ? 'FlexSearch (tag option)' : 'FlexSearch',
    version: packageVersion('flexsearch'),
    config: `Document {index [text]}, ${mode === 'shared' ? 'quarry analyzer as encode' : 'default encoder'}, ${common}; ${tagging}`,
    build(docs) {
      const analyzer = createAnalyzer();
      const ids: string[] = new Array<string>(docs.length);
      const tags: (readonly string[])[] = tagMode === 'post-filter' ? new Array<readonly string[]>(docs.length) : [];
      const field = mode === 'shared' ? { field: 'text', tokenize: 'strict' as const, encode: (s: string) => analyzer.analyze(s) } : { field: 'text', tokenize: 'strict' as const };
      const index = new FlexSearch.Document({ document: { id: 'n', index: [field], ...(tagMode === 'tag-option' ? { tag: 'tag' } : {}) } });
      for (let i = 0; i < docs.length; i++) {
        const d = docs[i]!;
        ids[i] = d.id;
        if (tagMode === 'post-filter') tags[i] = d.tags;
        index.add(tagMode === 'tag-option' ? { n: i, text: d.text, tag: [...d.tags] } : { n: i, text: d.text });
      }
      const query = (q: string, limit: number, tag: string | null): (number | string)[] => {
        const opts = tag === null ? { index: 'text', limit, suggest: true } : { index: 'text', limit, suggest: true, tag: { tag } };
        return (index.search(q, opts) as unknown as FlexFieldResult)[0]?.result ?? [];
      };
      return {
        search(q, k, tag) {
          const out: string[] = [];
          if (tag === null || tagMode === 'tag-option') {
            for (const n of query(q, k, tag)) out.push(ids[Number(n)]!);
            return out;
          }
          for (let limit = 100; ; limit *= 4) {
            const hits = query(q, limit, null);
            out.length = 0;
            for (const n of hits) {
              if (!tags[Number(n)]!.includes(tag)) continue;
              out.push(ids[Number(n)]!);
              if (out.length === k) return out;
            }
            if (hits.length < limit) return out;
          }
        },
      };
    },
  };
}
