/**
 * The analytics reports over a large history (issue 15): loads N events (default 10,000,000:
 * searches, recommendations, RAG answers and user events, seeded, over 90 days; see
 * bench/lib/analytics-load.ts) straight into a fresh store through the real migrations (then
 * rebuilds the search and user event rollups from the loaded rows, as the migrations' backfills do), starts
 * the service from dist/ on that data, and asks every report variant of `POST
 * /api/analytics/search`, `/rag`, `/recommendations`, `/events/ctr` and `/top` over HTTP, K times
 * each, over the whole history and over its last 7 days, printing the first (cold) answer's time,
 * p50 and p99. A variant that answers an error is printed as such and the run goes on. Then the
 * event ingest rate: `PUT /api/analytics/events` from C keep-alive connections for S seconds
 * (accepted events/s, PUT latency), and how long until the accepted events are all in the store.
 *
 * The service runs with analytics retention off (QUARRY_ANALYTICS_RETENTION_DAYS=0), so that the
 * hourly purge does not eat the oldest day of the history during the run. Graph variants use the
 * default granularity (hour). A variant's runs stop early once they have taken `--variant-budget-s`.
 *
 *   npm run build && npx tsx bench/analytics-reports.ts [--events 10000000] [--runs 20] [--seed 15]
 *       [--variant-budget-s 60] [--ingest-s 10] [--connections 16] [--only search,rag,recommendations,ctr,events,top]
 *       [--store sqlite|postgres] [--pg-url postgres://user@host:port/db] [--keep] [--reuse DIR]
 *
 * `--keep` keeps a SQLite run's data directory (and what was loaded, in `bench-data.json`);
 * `--reuse DIR` runs the reports on such a directory instead of loading: the build's migrations run
 * on it first (timed: what an upgrade from the kept build's schema costs at this size).
 *
 * With `--store postgres`, `--pg-url` names a server (and a database to connect to first); the
 * bench creates a database of its own there and drops it at the end.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { EVENT_LINK_TARGETS, EVENT_ROLLUP_TABLES, eventLinkBackfillSql, eventRollupBackfillSql } from '../store/event-rollup-batch.js';
import { FOLLOWUP_BACKFILL, FOLLOWUP_TOTALS_TABLES } from '../store/followup-batch.js';
import {
  MESSAGE_TOTALS,
  MESSAGE_TOTALS_BACKFILL,
  RECORD_EVENT_ROLLUP_TABLES,
  RECORD_ROLLUP_TABLES,
  RECORD_SOURCES,
  recordRollupBackfillSql,
} from '../store/record-rollup-batch.js';
import { QUERY_TOTALS, QUERY_TOTALS_BACKFILL, ROLLUP_TABLES, rollupBackfillSql } from '../store/search-rollup-batch.js';
import { clientSql } from '../store/postgres/database.js';
import { fillUserRollups as fillUserRollupsPg } from '../store/postgres/user-rollup.js';
import { fillUserRollups as fillUserRollupsSqlite } from '../store/sqlite/user-rollup.js';
import { USER_ORDINALS, USER_ROLLUP_TABLES } from '../store/user-rollup-batch.js';
import { openDatabase } from '../store/sqlite/database.js';
import { FILTER_ROLLUP_TABLES } from '../store/filter-rollup-batch.js';
import { fillPgFilterRollup } from '../store/postgres/filter-rollup.js';
import { fillSqliteFilterRollup } from '../store/sqlite/filter-rollup.js';
import { QUERY_PERIOD_TABLES, queryPeriodBackfillSql } from '../store/search-query-periods.js';
import { loadAnalytics, type LoadedData } from './lib/analytics-load.js';
import { quantile } from './lib/metrics.js';
import { machine, startBenchStack, type BenchStack } from './lib/spawn-stack.js';

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '10000000' },
    runs: { type: 'string', default: '20' },
    seed: { type: 'string', default: '15' },
    'variant-budget-s': { type: 'string', default: '60' },
    'ingest-s': { type: 'string', default: '10' },
    connections: { type: 'string', default: '16' },
    only: { type: 'string', default: 'search,rag,recommendations,ctr,events,top' },
    store: { type: 'string', default: 'sqlite' },
    'pg-url': { type: 'string' },
    keep: { type: 'boolean', default: false },
    reuse: { type: 'string' },
  },
});
const EVENTS = Number(args.events);
const RUNS = Number(args.runs);
const SEED = Number(args.seed);
const VARIANT_BUDGET_MS = Number(args['variant-budget-s']) * 1000;
const INGEST_MS = Number(args['ingest-s']) * 1000;
const CONNECTIONS = Number(args.connections);
const ONLY = new Set(args.only.split(','));
const POSTGRES = args.store === 'postgres';
if (!POSTGRES && args.store !== 'sqlite') throw new Error('--store takes sqlite or postgres');
if (POSTGRES && !args['pg-url']) throw new Error('--store postgres needs --pg-url');
const DAY_MS = 86_400_000;
/** A report slower than this is reported as failed (the client gave up). */
const REPORT_TIMEOUT_MS = 600_000;

/** One report variant: where, what, and whether a date range applies to it. */
interface Variant {
  readonly route: 'search' | 'rag' | 'recommendations' | 'events/ctr' | 'events/all' | 'top';
  readonly name: string;
  /** The body; `range` is the wire date range to add, or undefined for the whole history. */
  readonly body: (range: Record<string, string> | undefined) => Record<string, unknown>;
  /** False for the detail variants (one record by id): a range means nothing there. */
  readonly ranged: boolean;
}

/** A variant whose body is `{type, filter: {date_range}, ...extra}`. */
const filtered = (route: Variant['route'], type: string, extra: Record<string, unknown> = {}, label = ''): Variant => ({
  route,
  name: `${type}${label}`,
  body: (range) => ({ type, ...extra, ...(range ? { filter: { date_range: range } } : {}) }),
  ranged: true,
});

const byId = (route: Variant['route'], type: string, body: Record<string, unknown>): Variant => ({ route, name: type, body: () => ({ type, ...body }), ranged: false });

function variants(data: LoadedData): Variant[] {
  const { sample } = data;
  return [
    filtered('search', 'latency_graph'),
    filtered('search', 'search_usage_graph'),
    filtered('search', 'search_metrics'),
    filtered('search', 'head_queries'),
    filtered('search', 'low_confidence_queries', { threshold: 0.6 }),
    filtered('search', 'no_result_queries'),
    filtered('search', 'search_queries'),
    filtered('search', 'search_queries', { has_clicks: true }, ' has_clicks'),
    filtered('search', 'search_queries', { sort_by: 'latency', sort_order: 'desc' }, ' by latency'),
    filtered('search', 'count_queries'),
    byId('search', 'query_details', { request_id: sample.searchIds[0] }),
    filtered('search', 'popular_filters'),
    filtered('search', 'ctr_metrics_over_time'),
    filtered('search', 'search_conversion_rate'),
    filtered('search', 'searches_per_user'),
    filtered('search', 'search_average_rating'),
    filtered('search', 'event_funnel'),
    filtered('search', 'search_revenue'),
    filtered('search', 'search_revenue', { direct: true }, ' direct'),
    filtered('rag', 'rag_queries'),
    filtered('rag', 'rag_queries', { sort_by: 'top_score', sort_order: 'desc' }, ' by top_score'),
    filtered('rag', 'rag_queries', { sort_by: 'hallucination_score', sort_order: 'desc' }, ' by hallucination_score'),
    filtered('rag', 'rag_usage'),
    filtered('rag', 'rag_usage_graph'),
    byId('rag', 'rag_query_details', { request_id: sample.ragIds[0] }),
    filtered('rag', 'rag_query_ratings'),
    filtered('rag', 'followup_queries'),
    filtered('rag', 'topic_queries'),
    byId('rag', 'topic_details', { topic_id: sample.topicIds[0] }),
    filtered('rag', 'topics_over_time'),
    filtered('rag', 'ctr_metrics_over_time'),
    filtered('rag', 'messages_per_user'),
    filtered('rag', 'chat_average_rating'),
    filtered('rag', 'chat_conversion_rate'),
    filtered('rag', 'event_funnel'),
    byId('rag', 'events_for_topic', { topic_id: sample.topicIds[0] }),
    filtered('rag', 'chat_revenue'),
    filtered('rag', 'chat_revenue', { direct: true }, ' direct'),
    filtered('rag', 'popular_chats'),
    filtered('recommendations', 'low_confidence_recommendations', { threshold: 0.6 }),
    filtered('recommendations', 'recommendation_queries'),
    byId('recommendations', 'query_details', { request_id: sample.recommendationIds[0] }),
    filtered('recommendations', 'recommendation_usage_graph'),
    filtered('recommendations', 'recommendations_per_user'),
    filtered('recommendations', 'recommendations_ctr_rate'),
    filtered('recommendations', 'recommendation_conversion_rate'),
    filtered('recommendations', 'event_funnel'),
    filtered('events/ctr', 'search_ctr_metrics'),
    filtered('events/ctr', 'searches_with_clicks'),
    filtered('events/ctr', 'searches_without_clicks'),
    filtered('events/ctr', 'recommendation_ctr_metrics'),
    filtered('events/ctr', 'recommendations_with_clicks'),
    filtered('events/ctr', 'recommendations_without_clicks'),
    ...(['search', 'rag', 'recommendation'] as const).map(
      (type): Variant => ({ route: 'top', name: type, body: (range) => ({ type, ...(range ? { date_range: range } : {}) }), ranged: true }),
    ),
    // The user events listing (no `type`): newest first, all of them, one type, or conversions.
    ...[{}, { event_type: 'purchase' }, { is_conversion: true }].map(
      (filter): Variant => ({
        route: 'events/all',
        name: `events ${JSON.stringify(filter)}`,
        body: (range) => ({ page: 1, filter: { ...filter, ...(range ? { date_range: range } : {}) } }),
        ranged: true,
      }),
    ),
  ].filter((v) => ONLY.has(v.route === 'events/ctr' ? 'ctr' : v.route === 'events/all' ? 'events' : v.route));
}

/** One answer: its status, time, size and (for an error) its message. */
interface Answer {
  readonly status: number;
  readonly ms: number;
  readonly bytes: number;
  readonly message?: string;
}

async function ask(url: string, headers: Record<string, string>, body: unknown): Promise<Answer> {
  const t = performance.now();
  try {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), signal: AbortSignal.timeout(REPORT_TIMEOUT_MS) });
    const text = await res.text();
    const ms = performance.now() - t;
    if (res.ok) return { status: res.status, ms, bytes: text.length };
    let message = text;
    try {
      message = (JSON.parse(text) as { message?: string }).message ?? text;
    } catch {
      // Not JSON: the text is the message.
    }
    return { status: res.status, ms, bytes: text.length, message: message.slice(0, 140) };
  } catch (err) {
    return { status: 0, ms: performance.now() - t, bytes: 0, message: (err as Error).message };
  }
}

const f1 = (ms: number): string => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));

/** Runs every variant, printing a line per variant and range as it completes. */
async function runReports(stack: BenchStack, data: LoadedData, endMs: number): Promise<void> {
  const week = { gte: new Date(endMs - 7 * DAY_MS).toISOString().slice(0, 19).replace('T', ' ') };
  const auth = { authorization: stack.adminKey };
  console.log(`\n## Reports (${RUNS} runs each, at most ${VARIANT_BUDGET_MS / 1000} s of runs per line; times in ms)\n`);
  console.log('| route | variant | range | runs | first | p50 | p99 | answer bytes |');
  console.log('|---|---|---|---:|---:|---:|---:|---:|');
  for (const v of variants(data)) {
    const headers = v.route === 'top' ? { ...auth, 'tr-organization': data.organizationId } : { ...auth, 'tr-dataset': data.datasetIds[0]! };
    for (const range of v.ranged ? [undefined, week] : [undefined]) {
      const times: number[] = [];
      let first: Answer | undefined;
      let failed: Answer | undefined;
      const started = performance.now();
      for (let i = 0; i < RUNS; i++) {
        const a = await ask(`${stack.baseUrl}/api/analytics/${v.route}`, headers, v.body(range));
        first ??= a;
        if (a.status < 200 || a.status >= 300) {
          failed = a;
          break;
        }
        times.push(a.ms);
        if (performance.now() - started > VARIANT_BUDGET_MS) break;
      }
      const rangeLabel = !v.ranged ? '—' : range ? '7 days' : 'all';
      if (failed) {
        console.log(`| ${v.route} | ${v.name} | ${rangeLabel} | ${times.length} | error ${failed.status} | ${(failed.message ?? '').replace(/\|/g, '/').replace(/\n/g, ' ')} | | |`);
        continue;
      }
      const sorted = Float64Array.from(times).sort();
      console.log(
        `| ${v.route} | ${v.name} | ${rangeLabel} | ${times.length} | ${f1(first!.ms)} | ${f1(quantile(sorted, 0.5))} | ${f1(quantile(sorted, 0.99))} | ${first!.bytes} |`,
      );
    }
  }
}

/** Bodies of user events linked to loaded searches and recommendations, as a storefront sends them. */
function eventBodies(data: LoadedData): string[] {
  const out: string[] = [];
  const { searchIds, recommendationIds } = data.sample;
  for (let i = 0; i < 1000; i++) {
    const fromRec = i % 10 === 0;
    const request = { request_type: fromRec ? 'recommendation' : 'search', request_id: fromRec ? recommendationIds[i % recommendationIds.length] : searchIds[i % searchIds.length] };
    const user_id = `user-${(i * 7919) % 20_000}`;
    const chunk = `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
    const kind = i % 20;
    const body =
      kind < 9
        ? { event_type: 'view', event_name: 'view', items: [chunk], request, user_id }
        : kind < 16
          ? { event_type: 'click', event_name: 'click', clicked_items: { chunk_id: chunk, position: 1 + (i % 10) }, request, user_id }
          : kind < 19
            ? { event_type: 'add_to_cart', event_name: 'add to cart', items: [chunk], request, user_id }
            : { event_type: 'purchase', event_name: 'checkout', items: [{ tracking_id: `sku-${i}`, revenue: 10 + (i % 90) }], request, user_id };
    out.push(JSON.stringify(body));
  }
  return out;
}

/** Rows in user_events, read behind the service's back. */
async function storedEvents(dataDir: string, pgUrl: string | null): Promise<number> {
  if (pgUrl) {
    const c = new pg.Client({ connectionString: pgUrl });
    await c.connect();
    try {
      return Number((await c.query('SELECT COUNT(*) AS n FROM user_events')).rows[0].n);
    } finally {
      await c.end();
    }
  }
  const db = new Database(path.join(dataDir, 'quarry.sqlite'), { readonly: true });
  try {
    return (db.prepare('SELECT COUNT(*) AS n FROM user_events').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** PUT /api/analytics/events from CONNECTIONS keep-alive connections for INGEST_MS. */
async function runIngest(stack: BenchStack, data: LoadedData, dataDir: string, pgUrl: string | null): Promise<void> {
  const bodies = eventBodies(data);
  const before = await storedEvents(dataDir, pgUrl);
  const url = new URL(`${stack.baseUrl}/api/analytics/events`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const statuses = new Map<number, number>();
  const latencies: number[] = [];
  let firstError = '';
  let next = 0;
  const put = (body: string) =>
    new Promise<void>((resolve) => {
      const t = performance.now();
      const req = http.request(
        url,
        { method: 'PUT', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: stack.adminKey, 'tr-dataset': data.datasetIds[0]! } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            latencies.push(performance.now() - t);
            const status = res.statusCode ?? 0;
            statuses.set(status, (statuses.get(status) ?? 0) + 1);
            if (status >= 300 && !firstError) firstError = `${status} ${Buffer.concat(chunks).toString().slice(0, 140)}`;
            resolve();
          });
        },
      );
      req.on('error', (err) => {
        statuses.set(0, (statuses.get(0) ?? 0) + 1);
        if (!firstError) firstError = err.message;
        resolve();
      });
      req.end(body);
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() - started < INGEST_MS) await put(bodies[next++ % bodies.length]!);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  const accepted = [...statuses].filter(([s]) => s >= 200 && s < 300).reduce((a, [, n]) => a + n, 0);
  const sorted = Float64Array.from(latencies).sort();
  console.log(`\n## Event ingest (PUT /api/analytics/events, ${CONNECTIONS} keep-alive connections, ${seconds.toFixed(1)} s, Node http client on the same machine)\n`);
  console.log(`- answers: ${[...statuses].map(([s, n]) => `${s}: ${n}`).join(', ')}${firstError ? ` (first error: ${firstError})` : ''}`);
  console.log(`- accepted: ${(accepted / seconds).toFixed(0)} events/s; PUT latency p50 ${f1(quantile(sorted, 0.5))} ms, p99 ${f1(quantile(sorted, 0.99))} ms`);
  if (accepted === 0) return;
  const waitStarted = performance.now();
  let stored = 0;
  while (performance.now() - waitStarted < 60_000) {
    stored = (await storedEvents(dataDir, pgUrl)) - before;
    if (stored >= accepted) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const waited = (performance.now() - waitStarted) / 1000;
  console.log(`- in the store: ${stored} of ${accepted} accepted events, ${waited.toFixed(1)} s after the load ended${stored < accepted ? ' (gave up waiting after 60 s)' : ''}`);
}

/**
 * The search rollups and query totals (store/search-rollup-batch.ts), the user event rollups
 * (store/event-rollup-batch.ts), the record rollups, the answers' follow-up flags and totals
 * (store/followup-batch.ts), the filter rollups (store/filter-rollup-batch.ts) and the per-user
 * rollups (store/user-rollup-batch.ts) rebuilt from the loaded rows with the migrations' own fills:
 * the loader inserts rows behind the repositories, which are what keep them. Returns the seconds
 * it took.
 */
async function fillRollups(dataDir: string, pgUrl: string | null): Promise<number> {
  const started = performance.now();
  const statements = (dialect: 'sqlite' | 'postgres'): string[] => [
    ...ROLLUP_TABLES.flatMap((t) => [`DELETE FROM ${t.table}`, rollupBackfillSql(t, dialect)]),
    `DELETE FROM ${QUERY_TOTALS}`,
    QUERY_TOTALS_BACKFILL,
    ...QUERY_PERIOD_TABLES.flatMap((t) => [`DELETE FROM ${t.table}`, queryPeriodBackfillSql(t)]),
    ...EVENT_ROLLUP_TABLES.flatMap((t) => [`DELETE FROM ${t.table}`, eventRollupBackfillSql(t), ...EVENT_LINK_TARGETS.map((target) => eventLinkBackfillSql(t, target))]),
    ...[...RECORD_ROLLUP_TABLES, ...RECORD_EVENT_ROLLUP_TABLES].map((t) => `DELETE FROM ${t.table}`),
    ...RECORD_SOURCES.map(recordRollupBackfillSql),
    `DELETE FROM ${MESSAGE_TOTALS}`,
    MESSAGE_TOTALS_BACKFILL,
    'UPDATE rag_queries SET followup = 0 WHERE followup <> 0',
    ...FOLLOWUP_TOTALS_TABLES.map((t) => `DELETE FROM ${t.table}`),
    FOLLOWUP_BACKFILL,
    ...FILTER_ROLLUP_TABLES.map((t) => `DELETE FROM ${t.table}`),
  ];
  // The per-user rollups' fill is TypeScript (it builds the sets of users), one transaction.
  const userRollupWipe = [...USER_ROLLUP_TABLES.map((t) => `DELETE FROM ${t.table}`), `DELETE FROM ${USER_ORDINALS}`];
  if (pgUrl) {
    const c = new pg.Client({ connectionString: pgUrl });
    await c.connect();
    try {
      for (const s of statements('postgres')) await c.query(s);
      await c.query('BEGIN');
      for (const s of userRollupWipe) await c.query(s);
      await fillUserRollupsPg(clientSql(c));
      await fillPgFilterRollup(clientSql(c));
      await c.query('COMMIT');
    } finally {
      await c.end();
    }
  } else {
    const db = new Database(path.join(dataDir, 'quarry.sqlite'));
    try {
      for (const s of statements('sqlite')) db.exec(s);
      db.transaction(() => {
        for (const s of userRollupWipe) db.exec(s);
        fillUserRollupsSqlite(db);
        fillSqliteFilterRollup(db);
      })();
    } finally {
      db.close();
    }
  }
  return (performance.now() - started) / 1000;
}

/** A fresh database on the server of `url`, and how to drop it. */
async function freshDatabase(url: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `quarry_analytics_bench_${process.pid}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const own = new URL(url);
  own.pathname = `/${name}`;
  return {
    url: own.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** Loads the events into a fresh store and fills its rollups, as a run without `--reuse` does. */
async function load(dataDir: string, database: { url: string } | null): Promise<{ data: LoadedData; endMs: number }> {
  const endMs = Date.now();
  const data = await loadAnalytics(database ? { pgUrl: database.url } : { dataDir }, {
    events: EVENTS,
    seed: SEED,
    endMs,
    onProgress: (done, total, ms) => console.error(`  loaded ${done.toLocaleString('en')} of ~${total.toLocaleString('en')} rows, ${((done / ms) * 1000).toFixed(0)} rows/s`),
  });
  const c = data.counts;
  console.log(
    `- loaded: ${c.searches.toLocaleString('en')} searches, ${c.recommendations.toLocaleString('en')} recommendations, ${c.rags.toLocaleString('en')} RAG answers, ` +
      `${c.userEvents.toLocaleString('en')} user events (${c.clicks.toLocaleString('en')} clicks, ${c.purchases.toLocaleString('en')} purchases), ${c.ratings.toLocaleString('en')} ratings ` +
      `in ${data.seconds.toFixed(0)} s (${((EVENTS + c.ratings) / data.seconds).toFixed(0)} rows/s)`,
  );
  const rollupSeconds = await fillRollups(dataDir, database?.url ?? null);
  console.log(`- search, user event, record and per-user rollups filled from the loaded rows in ${rollupSeconds.toFixed(1)} s (the loader writes the raw tables only)`);
  return { data, endMs };
}

/** A kept directory's data, migrated to this build's schema (timed). */
async function reuse(dataDir: string, kept: string): Promise<{ data: LoadedData; endMs: number }> {
  const saved = JSON.parse(fs.readFileSync(kept, 'utf8')) as { data: LoadedData; endMs: number };
  const started = performance.now();
  openDatabase(dataDir).close();
  console.log(`- reused ${dataDir} (loaded ${new Date(saved.endMs).toISOString()}); this build's migrations ran on it in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return saved;
}

async function main(): Promise<void> {
  console.log(`# Analytics reports over ${EVENTS.toLocaleString('en')} events (${POSTGRES ? 'PostgreSQL' : 'SQLite'})\n`);
  console.log(`- machine: ${machine()}`);
  console.log(`- data: seed ${SEED}, 90 days, 20,000 users, 50,000 distinct queries (Zipf s=1.05), 5 datasets of one organization (80% in the one reported on)`);
  if (args.reuse && POSTGRES) throw new Error('--reuse takes a kept SQLite directory');
  const dataDir = args.reuse ?? fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-analytics-bench-'));
  const database = POSTGRES ? await freshDatabase(args['pg-url']!) : null;
  const kept = path.join(dataDir, 'bench-data.json');
  let stack: BenchStack | undefined;
  try {
    const { data, endMs } = args.reuse ? await reuse(dataDir, kept) : await load(dataDir, database);
    if (args.keep && !database) fs.writeFileSync(kept, JSON.stringify({ data, endMs }));
    if (!database) {
      const bytes = fs.readdirSync(dataDir).reduce((sum, f) => sum + fs.statSync(path.join(dataDir, f)).size, 0);
      console.log(`- SQLite file: ${(bytes / 2 ** 30).toFixed(2)} GiB`);
    }
    stack = await startBenchStack({
      QUARRY_DATA_DIR: dataDir,
      QUARRY_ANALYTICS_RETENTION_DAYS: '0',
      QUARRY_EMBED_JOBS: 'false',
      // The bench times every report to its end: the service's deadline (30 s) would cut the slowest.
      QUARRY_ANALYTICS_REPORT_TIMEOUT_MS: '3600000',
      ...(database ? { QUARRY_DATABASE_URL: database.url } : {}),
    });
    await runReports(stack, data, endMs);
    await runIngest(stack, data, dataDir, database?.url ?? null);
  } finally {
    await stack?.stop();
    if (!args.keep && !args.reuse) fs.rmSync(dataDir, { recursive: true, force: true });
    else console.log(`\n(data kept in ${dataDir})`);
    if (database && !args.keep) await database.drop();
  }
}

await main();
