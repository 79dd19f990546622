/**
 * A seeded analytics history for bench/analytics-reports.ts, written straight into a store's
 * tables (never through the service): N events over `days` days, in time order as the recorder
 * appends them, about 60% searches, 5% recommendations, 5% RAG answers and 30% user events
 * (views, clicks on a recent search's results at a 1-based position, add-to-carts, purchases with
 * revenue, a few filter clicks), most linked to the search or recommendation they followed by its
 * id. Queries come from `queries` distinct ones with a Zipf head (s = 1.05), users from `users`,
 * ~2% of searches and ~5% of RAG answers are rated. One organization; most events go to the first
 * of its datasets (the one the reports are asked about), the rest to four smaller ones (for
 * `POST /api/analytics/top`).
 *
 * SQLite: the file of a fresh data directory, migrated by the store's own openDatabase, rows
 * inserted through prepared statements in transactions of {@link BATCH_ROWS}. PostgreSQL: the
 * store's migrations (openPgStore) and one INSERT per table and batch (json_populate_recordset),
 * one transaction per batch.
 */
import pg from 'pg';
import { openPgStore } from '../../store/postgres/pg-store.js';
import type { Store } from '../../store/repository.js';
import { openDatabase, type Db } from '../../store/sqlite/database.js';
import { sqliteStoreOn } from '../../store/sqlite/sqlite-store.js';
import { sfc32, syntheticWord } from './synthetic.js';

/** What to load. */
export interface LoadOptions {
  /** Events in total (searches + recommendations + RAG answers + user events). */
  readonly events: number;
  /** @defaultValue 15 */
  readonly seed?: number;
  /** The history ends here (epoch ms). @defaultValue now */
  readonly endMs?: number;
  /** @defaultValue 90 */
  readonly days?: number;
  /** @defaultValue 20,000 */
  readonly users?: number;
  /** Distinct queries. @defaultValue 50,000 */
  readonly queries?: number;
  /** Called every few seconds with the rows written so far. */
  readonly onProgress?: (done: number, total: number, elapsedMs: number) => void;
}

/** What was loaded, for the report and for the requests that name records. */
export interface LoadedData {
  readonly organizationId: string;
  /** The organization's datasets; the first gets most events and is the one reported on. */
  readonly datasetIds: readonly string[];
  readonly counts: Readonly<Record<'searches' | 'recommendations' | 'rags' | 'userEvents' | 'clicks' | 'purchases' | 'ratings', number>>;
  /** Ids of the main dataset's records among the last written, for detail reports and linked events. */
  readonly sample: { readonly searchIds: readonly string[]; readonly recommendationIds: readonly string[]; readonly ragIds: readonly string[]; readonly topicIds: readonly string[] };
  readonly seconds: number;
}

/** Rows per write transaction. */
export const BATCH_ROWS = 50_000;
const DAY_MS = 86_400_000;
const MAIN_SHARE = 0.8;
const EXTRA_DATASETS = 4;
const RING = 4096;
const TOPICS = 300;
const RESULTS_PER_SEARCH = 10;
const CHUNKS_PER_DATASET = 20_000;
/** Ids kept of each kind of record: among the last ones written. */
const SAMPLE = 1000;

type Table = 'search_queries' | 'recommendation_queries' | 'rag_queries' | 'user_events' | 'query_ratings';

const COLUMNS: Record<Table, readonly string[]> = {
  search_queries: ['id', 'dataset_id', 'search_type', 'search_method', 'query', 'request_params', 'latency', 'top_score', 'results', 'result_count', 'user_id', 'metadata', 'created_at'],
  recommendation_queries: [
    'id', 'dataset_id', 'recommendation_type', 'positive_ids', 'negative_ids', 'positive_tracking_ids', 'negative_tracking_ids', 'request_params', 'results',
    'top_score', 'user_id', 'metadata', 'created_at',
  ],
  rag_queries: [
    'id', 'dataset_id', 'rag_type', 'user_message', 'search_id', 'topic_id', 'results', 'llm_response', 'top_score', 'user_id', 'metadata',
    'prompt_tokens', 'completion_tokens', 'latency', 'hallucination_score', 'detected_hallucinations', 'created_at',
  ],
  user_events: [
    'id', 'dataset_id', 'event_type', 'event_name', 'items', 'metadata', 'user_id', 'is_conversion', 'request_id', 'request_type', 'location',
    'position', 'clicked_chunk_id', 'revenue', 'created_at', 'updated_at',
  ],
  query_ratings: ['query_id', 'kind', 'dataset_id', 'rating', 'note', 'metadata', 'created_at'],
};
const TABLES = Object.keys(COLUMNS) as Table[];

type Row = unknown[];

/** Where rows go: buffered batches, one transaction each. */
interface Sink {
  write(batch: ReadonlyMap<Table, Row[]>): Promise<void>;
}

function sqliteSink(db: Db): Sink {
  const statements = new Map(
    TABLES.map((t) => [t, db.prepare(`INSERT INTO ${t} (${COLUMNS[t].join(', ')}) VALUES (${COLUMNS[t].map(() => '?').join(', ')})`)]),
  );
  const writeAll = db.transaction((batch: ReadonlyMap<Table, Row[]>) => {
    for (const [t, rows] of batch) {
      const s = statements.get(t)!;
      for (const r of rows) s.run(r);
    }
  });
  return {
    async write(batch) {
      writeAll(batch);
    },
  };
}

function pgSink(client: pg.Client): Sink {
  // One parameter per table and batch: the rows as a JSON array of objects, spread into the
  // table's own column types by json_populate_recordset (~5x the rows/s of multi-row VALUES).
  return {
    async write(batch) {
      await client.query('BEGIN');
      for (const [t, rows] of batch) {
        if (rows.length === 0) continue;
        const cols = COLUMNS[t];
        const objects = rows.map((r) => Object.fromEntries(cols.map((c, i) => [c, r[i]])));
        await client.query(`INSERT INTO ${t} (${cols.join(', ')}) SELECT ${cols.join(', ')} FROM json_populate_recordset(NULL::${t}, $1::json)`, [JSON.stringify(objects)]);
      }
      await client.query('COMMIT');
    },
  };
}

/** Hex of a 32-bit unsigned integer, 8 digits. */
const hex8 = (n: number): string => (n >>> 0).toString(16).padStart(8, '0');

/** Rank sampler of a Zipf law over `n` ranks (cumulative weights, binary search). */
function zipf(n: number, s: number, rand: () => number): () => number {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) cdf[i] = sum += 1 / Math.pow(i + 1, s);
  return () => {
    const x = rand() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cdf[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** The text of query rank `r`: one to three pseudo-words, distinct per rank. */
function queryText(r: number): string {
  const words = [syntheticWord(r % 2000)];
  if (r >= 2000) words.push(syntheticWord(2000 + (Math.floor(r / 2000) % 500)));
  if (r % 7 === 3) words.push(syntheticWord(2500 + (r % 97)));
  return words.join(' ');
}

interface Recent {
  readonly id: string;
  readonly results: readonly string[];
}

/** Opens the store, makes the organization, its datasets and topics, and writes the history. */
export async function loadAnalytics(target: { readonly dataDir: string } | { readonly pgUrl: string }, options: LoadOptions): Promise<LoadedData> {
  const started = performance.now();
  let store: Store;
  let sink: Sink;
  let finish: () => Promise<void>;
  if ('dataDir' in target) {
    const db = openDatabase(target.dataDir);
    // A bulk load into a fresh file: a crash means loading again, so no fsync per transaction.
    db.pragma('synchronous = OFF');
    store = sqliteStoreOn(db);
    sink = sqliteSink(db);
    finish = async () => {
      db.pragma('synchronous = FULL');
      db.pragma('wal_checkpoint(TRUNCATE)');
      await store.close();
    };
  } else {
    store = await openPgStore(target.pgUrl, { poolSize: 2 });
    const client = new pg.Client({ connectionString: target.pgUrl });
    await client.connect();
    sink = pgSink(client);
    finish = async () => {
      // A store in service has been vacuumed by autovacuum: index-only scans need its visibility map.
      await client.query('VACUUM ANALYZE');
      await client.end();
      await store.close();
    };
  }

  const seed = options.seed ?? 15;
  const rand = sfc32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const uuid = (): string => {
    const a = hex8(rand() * 2 ** 32);
    const b = hex8(rand() * 2 ** 32);
    const c = hex8(rand() * 2 ** 32);
    const d = hex8(rand() * 2 ** 32);
    return `${a}-${b.slice(0, 4)}-4${b.slice(5, 8)}-${'89ab'[(rand() * 4) | 0]}${c.slice(1, 4)}-${c.slice(4)}${d}`;
  };

  const org = await store.organizations.create({ name: `analytics-bench-${seed}` });
  const datasetIds: string[] = [];
  for (let i = 0; i <= EXTRA_DATASETS; i++) {
    const ds = await store.datasets.create({ organizationId: org.id, name: `shop ${i}`, trackingId: i === 0 ? 'main-shop' : `shop-${i}`, serverConfiguration: {} });
    datasetIds.push(ds.id);
  }
  const topicIds: string[] = [];
  for (let i = 0; i < TOPICS; i++) {
    topicIds.push((await store.topics.create({ datasetId: datasetIds[0]!, name: `topic ${i}`, ownerId: `user-${i}`, metadata: null })).id);
  }

  const total = options.events;
  const endMs = options.endMs ?? Date.now();
  const spanMs = (options.days ?? 90) * DAY_MS;
  const startMs = endMs - spanMs;
  const users = options.users ?? 20_000;
  const queryRank = zipf(options.queries ?? 50_000, 1.05, rand);
  const positionRank = zipf(RESULTS_PER_SEARCH, 1.2, rand);
  const chunkIds = datasetIds.map((_, d) => Array.from({ length: CHUNKS_PER_DATASET }, (_, k) => `${hex8(d)}-0000-4000-8000-${k.toString(16).padStart(12, '0')}`));
  const recentSearches = datasetIds.map((): Recent[] => []);
  const recentRecs = datasetIds.map((): Recent[] => []);
  const counts = { searches: 0, recommendations: 0, rags: 0, userEvents: 0, clicks: 0, purchases: 0, ratings: 0 };
  const sample = { searchIds: [] as string[], recommendationIds: [] as string[], ragIds: [] as string[], topicIds };
  const kept = new Map<string[], number>();
  const keep = (list: string[], id: string) => {
    const n = kept.get(list) ?? 0;
    list[n % SAMPLE] = id;
    kept.set(list, n + 1);
  };
  const remember = (ring: Recent[], r: Recent) => {
    if (ring.length < RING) ring.push(r);
    else ring[(rand() * RING) | 0] = r;
  };

  let batch = new Map<Table, Row[]>(TABLES.map((t) => [t, []]));
  let buffered = 0;
  const push = (t: Table, row: Row) => {
    batch.get(t)!.push(row);
    buffered++;
  };
  let written = 0;
  let lastProgress = performance.now();
  const flush = async () => {
    await sink.write(batch);
    written += buffered;
    batch = new Map<Table, Row[]>(TABLES.map((t) => [t, []]));
    buffered = 0;
    if (options.onProgress && performance.now() - lastProgress > 5000) {
      lastProgress = performance.now();
      options.onProgress(written, total, performance.now() - started);
    }
  };

  const COMPONENTS = ['search-bar', 'results-page', 'quick-view', 'chat-widget'];
  const TAGS = ['outdoor', 'kitchen', 'office', 'audio', 'apparel', 'sale', 'eco'];
  for (let i = 0; i < total; i++) {
    const at = Math.floor(startMs + (spanMs * i) / total + rand() * 1000);
    const d = rand() < MAIN_SHARE ? 0 : 1 + Math.floor(rand() * EXTRA_DATASETS);
    const datasetId = datasetIds[d]!;
    const userId = `user-${Math.floor(rand() * rand() * users)}`;
    const component = rand() < 0.6 ? pick(COMPONENTS) : null;
    const metadata = component === null ? null : JSON.stringify({ component_name: component });
    const roll = rand();
    if (roll < 0.6) {
      // A search: ~5% find nothing; a query's results are the same chunks each time, in a varying order.
      const rank = queryRank();
      const query = queryText(rank);
      const found = rand() < 0.05 ? 0 : RESULTS_PER_SEARCH;
      const results: string[] = [];
      const scored: { id: string; score: number }[] = [];
      let score = found === 0 ? 0 : 0.5 + rand() * 0.5;
      for (let k = 0; k < found; k++) {
        const id = chunkIds[d]![(rank * 13 + k * 7 + (rand() < 0.2 ? 1 : 0)) % CHUNKS_PER_DATASET]!;
        results.push(id);
        scored.push({ id, score: Math.round(score * 1e6) / 1e6 });
        score *= 0.9;
      }
      const method = pick(['bm25', 'bm25', 'hybrid', 'hybrid', 'semantic', 'fulltext']);
      const params: Record<string, unknown> = { query, search_type: method, page_size: RESULTS_PER_SEARCH };
      if (rand() < 0.2) params.filters = { must: [{ field: 'tag_set', match_any: [pick(TAGS)] }] };
      const id = uuid();
      const kind = rand() < 0.85 ? 'search' : rand() < 0.7 ? 'autocomplete' : 'search_over_groups';
      push('search_queries', [id, datasetId, kind, method, query, JSON.stringify(params), 5 + rand() * rand() * 300, scored[0]?.score ?? 0, JSON.stringify(scored), found, userId, metadata, at]);
      counts.searches++;
      remember(recentSearches[d]!, { id, results });
      if (d === 0) keep(sample.searchIds, id);
      if (rand() < 0.02) {
        push('query_ratings', [id, 'search', datasetId, rand() < 0.7 ? 1 : 0, null, null, at + 30_000]);
        counts.ratings++;
      }
    } else if (roll < 0.65) {
      const id = uuid();
      const results = Array.from({ length: RESULTS_PER_SEARCH }, () => pick(chunkIds[d]!));
      const positive = [pick(chunkIds[d]!)];
      push('recommendation_queries', [
        id, datasetId, rand() < 0.8 ? 'Chunk' : 'Group', JSON.stringify(positive), '[]', '[]', '[]',
        JSON.stringify({ positive_chunk_ids: positive, limit: RESULTS_PER_SEARCH }),
        JSON.stringify(results.map((r, k) => ({ id: r, score: Math.round((0.9 - k * 0.05) * 1e6) / 1e6 }))), 0.9 - rand() * 0.5, userId, metadata, at,
      ]);
      counts.recommendations++;
      remember(recentRecs[d]!, { id, results });
      if (d === 0) keep(sample.recommendationIds, id);
    } else if (roll < 0.7) {
      const id = uuid();
      const query = queryText(queryRank());
      const docs = Array.from({ length: 5 }, () => ({ id: pick(chunkIds[d]!), score: Math.round(rand() * 1e6) / 1e6 }));
      const topicId = d === 0 && rand() < 0.7 ? pick(topicIds) : null;
      push('rag_queries', [
        id, datasetId, rand() < 0.5 ? 'chosen_chunks' : 'all_chunks', query, null, topicId, JSON.stringify(docs),
        `An answer about ${query}: ${'the retrieved documents say so. '.repeat(1 + Math.floor(rand() * 6))}`, docs[0]!.score, userId, metadata,
        200 + Math.floor(rand() * 2000), 20 + Math.floor(rand() * 300), 300 + rand() * 3000, 0, '[]', at,
      ]);
      counts.rags++;
      if (d === 0) keep(sample.ragIds, id);
      if (rand() < 0.05) {
        push('query_ratings', [id, 'rag', datasetId, rand() < 0.6 ? 1 : -1, null, null, at + 60_000]);
        counts.ratings++;
      }
    } else {
      // A user event, most following a recent search (some a recommendation) of the same dataset.
      const type = ((r) => (r < 0.45 ? 'view' : r < 0.8 ? 'click' : r < 0.92 ? 'add_to_cart' : r < 0.98 ? 'purchase' : 'filter_clicked'))(rand());
      const fromRec = rand() < 0.1 && recentRecs[d]!.length > 0;
      const ring = fromRec ? recentRecs[d]! : recentSearches[d]!;
      const linked = ring.length > 0 && rand() < (type === 'click' ? 1 : 0.8) ? pick(ring) : null;
      let items: string[] = [];
      let position: number | null = null;
      let clicked: string | null = null;
      let revenue = 0;
      let eventType: string = type;
      if (type === 'click' && linked && linked.results.length > 0) {
        position = Math.min(positionRank() + 1, linked.results.length);
        clicked = linked.results[position - 1]!;
        items = [JSON.stringify({ chunk_id: clicked, position })];
        counts.clicks++;
      } else if (type === 'purchase') {
        const n = 1 + Math.floor(rand() * 3);
        for (let k = 0; k < n; k++) {
          const r = Math.round((5 + rand() * 195) * 100) / 100;
          revenue += r;
          items.push(JSON.stringify({ tracking_id: `sku-${Math.floor(rand() * 5000)}`, revenue: r }));
        }
        revenue = Math.round(revenue * 100) / 100;
        counts.purchases++;
      } else if (type === 'filter_clicked') {
        items = [];
      } else {
        // A view or an add-to-cart (a click on a search that found nothing is a view).
        if (type === 'click') eventType = 'view';
        items = [linked?.results[0] ?? pick(chunkIds[d]!)];
      }
      const eventMetadata = type === 'filter_clicked' ? JSON.stringify({ 'match_any::tag_set': pick(TAGS) }) : metadata;
      push('user_events', [
        uuid(), datasetId, eventType, eventType === 'purchase' ? 'checkout' : eventType, JSON.stringify(items), eventMetadata, userId,
        eventType === 'add_to_cart' || eventType === 'purchase' ? 1 : 0, linked?.id ?? null, linked ? (fromRec ? 'recommendation' : 'search') : null,
        null, position, clicked, revenue, at, at,
      ]);
      counts.userEvents++;
    }
    if (buffered >= BATCH_ROWS) await flush();
  }
  await flush();
  await finish();
  return { organizationId: org.id, datasetIds, counts, sample, seconds: (performance.now() - started) / 1000 };
}
