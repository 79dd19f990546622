/**
 * Seeded analytics events for bench/analytics-engines.ts: searches, user events (views, clicks,
 * add-to-carts, purchases linked to the searches and recommendations they follow),
 * recommendations and RAG answers, plus ratings, over 90 days, in time order (as the recorder
 * appends them). Rows are arrays in the column order of {@link TABLES}, which are the SQLite
 * store's columns (store/sqlite/migrations.ts), checked against the migrated file at start.
 */
import { sfc32, syntheticWord } from './synthetic.js';

/** How a column is stored: TEXT, REAL, INTEGER (small), INTEGER epoch ms. */
export type ColumnKind = 'text' | 'real' | 'int' | 'ms';

/** One analytics table: name and columns in row order. */
export interface TableSpec {
  readonly name: TableName;
  readonly columns: readonly (readonly [string, ColumnKind])[];
}

/** The tables the reports read. */
export type TableName = 'search_queries' | 'user_events' | 'recommendation_queries' | 'rag_queries' | 'query_ratings';

/** A row: values in its table's column order; null for SQL NULL. */
export type Row = (string | number | null)[];

/** The analytics tables, in the SQLite schema's column order. */
export const TABLES: readonly TableSpec[] = [
  {
    name: 'search_queries',
    columns: [
      ['id', 'text'], ['dataset_id', 'text'], ['search_type', 'text'], ['search_method', 'text'], ['query', 'text'],
      ['request_params', 'text'], ['latency', 'real'], ['top_score', 'real'], ['results', 'text'], ['result_count', 'int'],
      ['user_id', 'text'], ['metadata', 'text'], ['query_rating', 'text'], ['created_at', 'ms'],
    ],
  },
  {
    name: 'user_events',
    columns: [
      ['id', 'text'], ['dataset_id', 'text'], ['event_type', 'text'], ['event_name', 'text'], ['items', 'text'],
      ['metadata', 'text'], ['user_id', 'text'], ['is_conversion', 'int'], ['request_id', 'text'], ['request_type', 'text'],
      ['location', 'text'], ['position', 'int'], ['clicked_chunk_id', 'text'], ['revenue', 'real'], ['created_at', 'ms'],
      ['updated_at', 'ms'],
    ],
  },
  {
    name: 'recommendation_queries',
    columns: [
      ['id', 'text'], ['dataset_id', 'text'], ['recommendation_type', 'text'], ['positive_ids', 'text'], ['negative_ids', 'text'],
      ['positive_tracking_ids', 'text'], ['negative_tracking_ids', 'text'], ['request_params', 'text'], ['results', 'text'],
      ['top_score', 'real'], ['user_id', 'text'], ['metadata', 'text'], ['created_at', 'ms'],
    ],
  },
  {
    name: 'rag_queries',
    columns: [
      ['id', 'text'], ['dataset_id', 'text'], ['rag_type', 'text'], ['user_message', 'text'], ['search_id', 'text'],
      ['topic_id', 'text'], ['results', 'text'], ['llm_response', 'text'], ['top_score', 'real'], ['user_id', 'text'],
      ['metadata', 'text'], ['prompt_tokens', 'int'], ['completion_tokens', 'int'], ['latency', 'real'], ['query_rating', 'text'],
      ['hallucination_score', 'real'], ['detected_hallucinations', 'text'], ['created_at', 'ms'],
    ],
  },
  {
    name: 'query_ratings',
    columns: [['query_id', 'text'], ['kind', 'text'], ['dataset_id', 'text'], ['rating', 'int'], ['note', 'text'], ['metadata', 'text'], ['created_at', 'ms']],
  },
];

/** Rows of one slice of time, per table. */
export type Batch = Record<TableName, Row[]>;

/** The generated data's shape; every figure in the report depends on it. */
export interface EventOptions {
  /** Events (searches + user events + recommendations + RAG answers; ratings come on top). */
  events: number;
  /** Events per yielded batch. */
  batch: number;
  seed: number;
  /** Last instant (epoch ms, exclusive); events spread evenly over the 90 days before it. */
  end: number;
}

/** Dataset that holds ~98% of the events. */
export const MAIN_DATASET = '0190a000-0000-7000-8000-000000000001';
/** A small second dataset: reports filtered on it must not see the main one's rows. */
export const SMALL_DATASET = '0190a000-0000-7000-8000-000000000002';
/** Days of history. */
export const SPAN_DAYS = 90;
/** Milliseconds in a day. */
export const DAY_MS = 86_400_000;

const USERS = 20_000;
const DISTINCT_QUERIES = 50_000;
const CHUNK_POOL = 100_000;
const RECENT = 4096;

/** Cumulative-weight sampler over ranks 0..n-1 with weight 1/(r+1)^s (binary search per draw). */
function zipf(n: number, s: number): (u: number) => number {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let r = 0; r < n; r++) cdf[r] = sum += 1 / (r + 1) ** s;
  for (let r = 0; r < n; r++) cdf[r] = cdf[r]! / sum;
  return (u) => {
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

const hex = (rand: () => number, digits: number): string =>
  Math.floor(rand() * 16 ** digits).toString(16).padStart(digits, '0');

/** A v7-shaped UUID for time `ms`, as core/domain/ids.ts makes them (time-ordered, so appends land at index ends). */
function uuid7(ms: number, rand: () => number): string {
  const t = ms.toString(16).padStart(12, '0');
  return `${t.slice(0, 8)}-${t.slice(8)}-7${hex(rand, 3)}-${(8 + Math.floor(rand() * 4)).toString(16)}${hex(rand, 3)}-${hex(rand, 6)}${hex(rand, 6)}`;
}

const SEARCH_TYPES: readonly [string, number][] = [['search', 0.7], ['autocomplete', 0.2], ['search_over_groups', 0.07], ['search_within_groups', 0.03]];
const SEARCH_METHODS: readonly [string, number][] = [['hybrid', 0.45], ['fulltext', 0.25], ['semantic', 0.2], ['bm25', 0.1]];
const EVENT_NAMES: Record<string, readonly string[]> = {
  view: ['product_view', 'page_view', 'category_view'],
  click: ['search_click', 'Click', 'recommendation_click'],
  add_to_cart: ['add_to_cart', 'quick_add'],
  purchase: ['purchase', 'checkout_complete'],
};
const pick = (table: readonly [string, number][], u: number): string => {
  for (const [name, p] of table) if ((u -= p) < 0) return name;
  return table[table.length - 1]![0];
};

/** Generates `o.events` events in time order, `o.batch` at a time. Same options, same rows. */
export function* analyticsEvents(o: EventOptions): Generator<Batch> {
  const rand = sfc32(o.seed);
  const start = o.end - SPAN_DAYS * DAY_MS;
  const queryRank = zipf(DISTINCT_QUERIES, 1.0);
  const userRank = zipf(USERS, 0.7);
  const queries = Array.from({ length: DISTINCT_QUERIES }, (_, q) => {
    const words = 1 + (q % 4);
    let text = '';
    for (let w = 0; w < words; w++) text += (w ? ' ' : '') + syntheticWord((q * 7919 + w * 104_729) % 30_000);
    return `${text} ${q.toString(36)}`;
  });
  // One query in 12 never finds anything, so no-result reports have a tail to page through.
  const noResult = (q: number): boolean => q % 12 === 7;
  const chunks = Array.from({ length: CHUNK_POOL }, () => `${hex(rand, 8)}-${hex(rand, 4)}-4${hex(rand, 3)}-a${hex(rand, 3)}-${hex(rand, 6)}${hex(rand, 6)}`);
  const users = Array.from({ length: USERS }, (_, u) => `user-${u}`);
  // A query's result list comes in a few variants (the corpus changes over 90 days), each a real
  // JSON array of ~10 {id, score}: the rows are as wide as the recorder's.
  const resultCache = new Map<number, string>();
  const results = (q: number, variant: number, size: number): [string, number] => {
    const key = q * 4 + variant;
    let json = resultCache.get(key);
    if (json === undefined) {
      let score = 0.5 + rand() * 0.5;
      const parts: string[] = [];
      for (let i = 0; i < size; i++) {
        parts.push(`{"id":"${chunks[Math.floor(rand() * CHUNK_POOL)]!}","score":${score.toFixed(6)}}`);
        score *= 0.85 + rand() * 0.14;
      }
      json = `[${parts.join(',')}]`;
      resultCache.set(key, json);
    }
    return [json, Number(json.slice(json.indexOf('"score":') + 8, json.indexOf('}')))];
  };
  const user = (): string | null => (rand() < 0.08 ? null : users[userRank(rand())]!);
  const gauss = (): number => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  const recentSearches: string[] = [];
  const recentRecs: string[] = [];
  const LLM = Array.from({ length: 16 }, (_, i) => Array.from({ length: 60 }, (_, w) => syntheticWord((i * 61 + w) % 2000)).join(' '));

  let batch: Batch = emptyBatch();
  let inBatch = 0;
  for (let i = 0; i < o.events; i++) {
    const at = start + Math.floor((i * SPAN_DAYS * DAY_MS) / o.events);
    const dataset = rand() < 0.02 ? SMALL_DATASET : MAIN_DATASET;
    const kind = rand();
    if (kind < 0.6) {
      const q = queryRank(rand());
      const type = pick(SEARCH_TYPES, rand());
      const method = pick(SEARCH_METHODS, rand());
      const [json, top] = noResult(q) ? ['[]', 0] : results(q, Math.floor(rand() * 4), type === 'autocomplete' ? 5 : 10);
      const latency = Math.round(Math.exp(Math.log(type === 'autocomplete' ? 12 : 30) + 0.6 * gauss()) * 1000) / 1000;
      const id = uuid7(at, rand);
      const params = `{"query":${JSON.stringify(queries[q])},"search_type":"${method}","page":1,"page_size":10,"score_threshold":null,"highlight_options":{"highlight_results":true},"filters":null}`;
      batch.search_queries.push([
        id, dataset, type, method, queries[q]!, params, latency, top, json, json === '[]' ? 0 : type === 'autocomplete' ? 5 : 10,
        user(), rand() < 0.3 ? '{"component_name":"search-bar"}' : null, null, at,
      ]);
      if (dataset === MAIN_DATASET) recentSearches[i % RECENT] = id;
      if (rand() < 0.01) batch.query_ratings.push([id, 'search', dataset, [-1, 0, 1, 1, 1][Math.floor(rand() * 5)]!, null, null, at + 30_000]);
    } else if (kind < 0.9) {
      batch.user_events.push(userEvent(at, dataset));
    } else if (kind < 0.95) {
      const id = uuid7(at, rand);
      const [json, top] = results(queryRank(rand()), Math.floor(rand() * 4), 10);
      batch.recommendation_queries.push([
        id, dataset, rand() < 0.8 ? 'Chunk' : 'Group', `["${chunks[Math.floor(rand() * CHUNK_POOL)]!}"]`, '[]', '[]', '[]',
        '{"strategy":"average_vector","limit":10}', json, top, user(), null, at,
      ]);
      if (dataset === MAIN_DATASET) recentRecs[i % RECENT] = id;
    } else {
      const id = uuid7(at, rand);
      const q = queryRank(rand());
      const [json, top] = results(q, 0, 5);
      batch.rag_queries.push([
        id, dataset, rand() < 0.7 ? 'all_chunks' : 'chosen_chunks', queries[q]!, rand() < 0.5 ? uuid7(at, rand) : null, uuid7(at, rand),
        json, LLM[Math.floor(rand() * LLM.length)]!, top, user(), null, 400 + Math.floor(rand() * 800), 50 + Math.floor(rand() * 300),
        Math.round(Math.exp(Math.log(1500) + 0.4 * gauss())), null, 0, '[]', at,
      ]);
      if (rand() < 0.03) batch.query_ratings.push([id, 'rag', dataset, rand() < 0.7 ? 1 : 0, null, null, at + 60_000]);
    }
    if (++inBatch === o.batch) {
      yield batch;
      batch = emptyBatch();
      inBatch = 0;
    }
  }
  if (inBatch > 0) yield batch;

  /** A view, click, add-to-cart or purchase; clicks and conversions mostly follow a recent search. */
  function userEvent(at: number, dataset: string): Row {
    const u = rand();
    const type = u < 0.45 ? 'view' : u < 0.75 ? 'click' : u < 0.9 ? 'add_to_cart' : 'purchase';
    let requestId: string | null = null;
    let requestType: string | null = null;
    const linked = dataset === MAIN_DATASET && recentSearches.length > 0 && type !== 'view' && rand() < 0.85;
    if (linked) {
      const fromRec = type === 'click' && recentRecs.length > 0 && rand() < 0.2;
      const pool = fromRec ? recentRecs : recentSearches;
      requestId = pool[Math.floor(rand() * pool.length)] ?? null;
      requestType = fromRec ? 'recommendation' : 'search';
    }
    const item = `tr-${Math.floor(rand() * CHUNK_POOL)}`;
    const revenue = type === 'purchase' ? Math.round((5 + rand() * 195) * 100) / 100 : 0;
    const choices = EVENT_NAMES[type]!;
    return [
      uuid7(at, rand), dataset, type, choices[Math.floor(rand() * choices.length)]!,
      type === 'purchase' ? `[{"tracking_id":"${item}","revenue":${revenue}}]` : `["${item}"]`,
      rand() < 0.2 ? '{"page":"/search"}' : null, user(),
      type === 'view' ? 0 : type === 'click' ? (rand() < 0.5 ? 1 : 0) : 1,
      requestId, requestType, null,
      type === 'click' ? Math.min(9, Math.floor(-Math.log(1 - rand()) * 2)) : null,
      type === 'click' ? chunks[Math.floor(rand() * CHUNK_POOL)]! : null, revenue, at, at,
    ];
  }
}

function emptyBatch(): Batch {
  return { search_queries: [], user_events: [], recommendation_queries: [], rag_queries: [], query_ratings: [] };
}
