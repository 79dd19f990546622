/**
 * Which embedded engine should answer the analytics reports: the store's SQLite tables as they
 * are, SQLite with extra covering indexes, or a DuckDB file with the same columns. Issue 15's
 * goal: every report under 100 ms p50 on 10,000,000 events on this machine. A seeded generator
 * (lib/analytics-engine-data.ts) loads the same events into both (SQLite through the store's own
 * openDatabase, DuckDB through its appender); each report (lib/analytics-engine-reports.ts) runs
 * with no date filter and over the last 7 days, once to warm up and then `--runs` times (fewer
 * when a report's runs pass `--budget` seconds, never fewer than `--min-runs`), timed in wall
 * and in CPU time (the machine is shared: CPU time is the engine's cost without the queueing for
 * a core); the answers of the two
 * engines must be equal. Then the extra indexes (lib/analytics-engine-sqlite.ts) are added one
 * at a time (build time, bytes), the SQLite reports run again with the index the planner took,
 * and the insert rate is measured before and after them.
 *
 *   npx tsx bench/analytics-engines.ts [--events 10000000] [--runs 10] [--budget 5] [--min-runs 3] [--dir DIR --reuse]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { analyticsEvents, DAY_MS, MAIN_DATASET, SMALL_DATASET, TABLES, type Batch, type EventOptions, type Row } from './lib/analytics-engine-data.js';
import { DuckEngine } from './lib/analytics-engine-duckdb.js';
import { REPORTS, type DateRange, type Engine, type Report } from './lib/analytics-engine-reports.js';
import { EXTRA_INDEXES, SqliteEngine } from './lib/analytics-engine-sqlite.js';
import { quantile } from './lib/metrics.js';
import { machine } from './lib/spawn-stack.js';

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '10000000' },
    runs: { type: 'string', default: '10' },
    budget: { type: 'string', default: '5' },
    'min-runs': { type: 'string', default: '3' },
    seed: { type: 'string', default: '42' },
    dir: { type: 'string' },
    reuse: { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    'duck-threads': { type: 'string', default: String(os.cpus().length) },
    'duck-memory': { type: 'string', default: '4GB' },
    'skip-tuning': { type: 'boolean', default: false },
  },
});
const EVENTS = Number(args.events);
const RUNS = Number(args.runs);
const BUDGET_MS = Number(args.budget) * 1000;
const MIN_RUNS = Number(args['min-runs']);
/** Fixed, so the same seed gives the same rows on every machine and day. */
const END = Date.UTC(2026, 0, 1);
const LAST_WEEK: DateRange = { from: END - 7 * DAY_MS, to: END };
const PROBE_DATASET = '0190a000-0000-7000-8000-0000000000ff';
const dir = args.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-analytics-engines-'));
const duckFile = path.join(dir, 'analytics.duckdb');

/** Timings and the answer of one report on one engine. */
interface Timed {
  p50: number;
  p99: number;
  /** CPU time (user + system, all threads) of the median run: what the engine costs without the machine's contention. */
  cpu50: number;
  runs: number;
  answer: string;
}

/** The machine is shared: the 1-minute load average says how contended each table's timings were. */
const loadAverage = (): string => os.loadavg()[0]!.toFixed(1);
const ms = (t: number): string => (t >= 100 ? t.toFixed(0) : t.toFixed(1));
const mb = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MB`;

/** JSON of an answer with fractions to 9 digits: sums and averages differ in the last bits between engines. */
function normalize(rows: unknown[]): string {
  return JSON.stringify(rows, (_k, v: unknown) => {
    if (typeof v === 'bigint') return Number(v);
    if (typeof v === 'number' && !Number.isInteger(v)) return Number(v.toPrecision(9));
    return v;
  });
}

/** One run of a report: its statements in order, then its answer. */
async function runReport(engine: Engine, sqlite: SqliteEngine, duck: DuckEngine, report: Report, dataset: string, range: DateRange | undefined): Promise<unknown[]> {
  const results: unknown[][] = [];
  for (const s of report.statements(engine, dataset, range)) results.push(engine === 'sqlite' ? sqlite.run(s) : await duck.run(s));
  return report.combine ? report.combine(engine, results) : results[0]!;
}

/** Warm-up, then up to `runs` timed runs (at least 3, stopping once past the budget). */
async function time(engine: Engine, sqlite: SqliteEngine, duck: DuckEngine, report: Report, dataset: string, range: DateRange | undefined, runs: number): Promise<Timed> {
  const answer = normalize(await runReport(engine, sqlite, duck, report, dataset, range));
  const samples: number[] = [];
  const cpu: number[] = [];
  let spent = 0;
  while (samples.length < runs && (samples.length < MIN_RUNS || spent < BUDGET_MS)) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await runReport(engine, sqlite, duck, report, dataset, range);
    const t = performance.now() - t0;
    const c = process.cpuUsage(c0);
    samples.push(t);
    cpu.push((c.user + c.system) / 1000);
    spent += t;
  }
  samples.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  return { p50: quantile(samples, 0.5), p99: quantile(samples, 0.99), cpu50: quantile(cpu, 0.5), runs: samples.length, answer };
}

/** Loads `EVENTS` events into both engines, timing each engine's share apart from generation. */
async function load(sqlite: SqliteEngine, duck: DuckEngine): Promise<void> {
  const options: EventOptions = { events: EVENTS, batch: 100_000, seed: Number(args.seed), end: END };
  const rows = Object.fromEntries(TABLES.map((t) => [t.name, 0])) as Record<keyof Batch, number>;
  let gen = 0;
  let sqliteMs = 0;
  let duckMs = 0;
  let done = 0;
  const started = performance.now();
  let t = performance.now();
  for (const batch of analyticsEvents(options)) {
    gen += performance.now() - t;
    t = performance.now();
    sqlite.load(batch);
    sqliteMs += performance.now() - t;
    t = performance.now();
    duck.load(batch);
    duckMs += performance.now() - t;
    for (const table of TABLES) rows[table.name] += batch[table.name].length;
    done += options.batch;
    if (done % 1_000_000 === 0 || done >= EVENTS) {
      console.error(`  ${Math.min(done, EVENTS).toLocaleString()} events, ${((performance.now() - started) / 1000).toFixed(0)} s: generate ${(gen / 1000).toFixed(0)} s, SQLite ${(sqliteMs / 1000).toFixed(0)} s, DuckDB ${(duckMs / 1000).toFixed(0)} s`);
    }
    t = performance.now();
  }
  t = performance.now();
  const sqliteSize = sqlite.size();
  sqliteMs += performance.now() - t;
  t = performance.now();
  await duck.finishLoad();
  duckMs += performance.now() - t;
  const duckSize = duck.size();
  console.log(`\nRows: ${TABLES.map((table) => `${table.name} ${rows[table.name].toLocaleString()}`).join(', ')}; generating them took ${(gen / 1000).toFixed(0)} s (not counted below).\n`);
  console.log('| engine | load s | events/s | file | bytes/event |');
  console.log('|---|---|---|---|---|');
  console.log(`| SQLite (store schema, WAL, synchronous=FULL, 100k-event transactions) | ${(sqliteMs / 1000).toFixed(0)} | ${Math.round(EVENTS / (sqliteMs / 1000)).toLocaleString()} | ${mb(sqliteSize)} | ${Math.round(sqliteSize / EVENTS)} |`);
  console.log(`| DuckDB (appender, checkpointed) | ${(duckMs / 1000).toFixed(0)} | ${Math.round(EVENTS / (duckMs / 1000)).toLocaleString()} | ${mb(duckSize)} | ${Math.round(duckSize / EVENTS)} |`);
}

/** Row counts per table and dataset on both engines; they must agree before any report is compared. */
async function checkCounts(sqlite: SqliteEngine, duck: DuckEngine): Promise<void> {
  for (const table of TABLES) {
    const s = { sql: `SELECT dataset_id, COUNT(*) AS n FROM ${table.name} WHERE dataset_id <> '${PROBE_DATASET}' GROUP BY dataset_id ORDER BY dataset_id`, params: [] };
    const a = normalize(sqlite.run(s));
    const b = normalize(await duck.run(s));
    if (a !== b) throw new Error(`${table.name}: row counts differ: SQLite ${a}, DuckDB ${b}`);
  }
}

/** Times every report on both engines for one dataset and range; returns the SQLite timings by report. */
async function compare(sqlite: SqliteEngine, duck: DuckEngine, dataset: string, range: DateRange | undefined, runs: number, label: string): Promise<Map<string, Timed>> {
  console.log(`\n### ${label} (load average ${loadAverage()})\n`);
  console.log('| report | SQLite p50 ms | p99 | CPU p50 | runs | DuckDB p50 ms | p99 | CPU p50 | runs | same answer |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  const out = new Map<string, Timed>();
  for (const report of REPORTS) {
    const s = await time('sqlite', sqlite, duck, report, dataset, range, runs);
    const d = await time('duckdb', sqlite, duck, report, dataset, range, runs);
    out.set(report.name, s);
    const same = s.answer === d.answer ? 'yes' : `NO: SQLite ${s.answer.slice(0, 160)} / DuckDB ${d.answer.slice(0, 160)}`;
    console.log(`| ${report.name} | ${ms(s.p50)} | ${ms(s.p99)} | ${ms(s.cpu50)} | ${s.runs} | ${ms(d.p50)} | ${ms(d.p99)} | ${ms(d.cpu50)} | ${d.runs} | ${same} |`);
  }
  return out;
}

/** Rows for the insert-rate probe: a dataset of their own, after the 90 days, so no report sees them. */
function probeRows(events: number, seed: number): { searches: Row[]; userEvents: Row[] } {
  const searches: Row[] = [];
  const userEvents: Row[] = [];
  for (const batch of analyticsEvents({ events, batch: events, seed, end: END + 100 * DAY_MS })) {
    for (const row of batch.search_queries) searches.push(Object.assign([...row], { 1: PROBE_DATASET }));
    for (const row of batch.user_events) userEvents.push(Object.assign([...row], { 1: PROBE_DATASET }));
  }
  return { searches, userEvents };
}

/** Insert rate of searches and user events, in the recorder's batch size and in large transactions. */
function insertRates(sqlite: SqliteEngine, seed: number): string {
  const small = probeRows(60_000, seed);
  const large = probeRows(300_000, seed + 1);
  const r = (n: number): string => Math.round(n).toLocaleString();
  return [
    `searches ${r(sqlite.insertRate('search_queries', small.searches, 64))}/s, user events ${r(sqlite.insertRate('user_events', small.userEvents, 64))}/s in 64-row transactions`,
    `searches ${r(sqlite.insertRate('search_queries', large.searches, 5000))}/s, user events ${r(sqlite.insertRate('user_events', large.userEvents, 5000))}/s in 5,000-row transactions`,
  ].join('; ');
}

/** Adds the extra indexes, then reruns the SQLite reports beside the base timings. */
async function tune(sqlite: SqliteEngine, duck: DuckEngine, base: Map<string, Map<string, Timed>>): Promise<void> {
  console.log('\n## SQLite with extra indexes\n');
  const before = insertRates(sqlite, 7);
  console.log('| index | for | build s | size |');
  console.log('|---|---|---|---|');
  let total = 0;
  for (const index of EXTRA_INDEXES) {
    const { seconds, bytes } = sqlite.addIndex(index.sql);
    total += bytes;
    console.log(`| \`${index.sql.replace(/^CREATE INDEX \w+ ON /, '')}\` | ${index.for} | ${seconds.toFixed(1)} | ${mb(bytes)} |`);
  }
  console.log(`\nExtra indexes: ${mb(total)} in all; ANALYZE (analysis_limit 1000) ${sqlite.analyze().toFixed(1)} s; file now ${mb(sqlite.size())}.`);
  sqlite.resetStatements();
  console.log(`Insert rate before the extra indexes: ${before}.`);
  console.log(`Insert rate with them: ${insertRates(sqlite, 9)}.`);
  for (const [label, range] of [['no date filter', undefined], ['last 7 days', LAST_WEEK]] as const) {
    console.log(`\n### SQLite + extra indexes, ${label} (load average ${loadAverage()})\n`);
    console.log('| report | base p50 ms | base CPU p50 | indexed p50 ms | p99 | CPU p50 | runs | plan |');
    console.log('|---|---|---|---|---|---|---|---|');
    for (const report of REPORTS) {
      const t = await time('sqlite', sqlite, duck, report, MAIN_DATASET, range, RUNS);
      const plan = report.statements('sqlite', MAIN_DATASET, range).map((s) => sqlite.plan(s)).join(' ; ');
      const was = base.get(label)!.get(report.name)!;
      const ok = t.answer === was.answer ? '' : ' (ANSWER CHANGED)';
      console.log(`| ${report.name} | ${ms(was.p50)} | ${ms(was.cpu50)} | ${ms(t.p50)} | ${ms(t.p99)} | ${ms(t.cpu50)} | ${t.runs} | ${plan}${ok} |`);
    }
  }
}

async function main(): Promise<void> {
  console.log(`# Analytics engines: ${EVENTS.toLocaleString()} events\n\n${machine()}; DuckDB ${args['duck-threads']} threads, memory_limit ${args['duck-memory']}; data in ${dir}\n`);
  const reuse = args.reuse && fs.existsSync(duckFile);
  if (!reuse) {
    fs.rmSync(path.join(dir, 'quarry.sqlite'), { force: true });
    fs.rmSync(duckFile, { force: true });
  }
  const sqlite = new SqliteEngine(dir);
  const duck = await DuckEngine.create(duckFile, Number(args['duck-threads']), args['duck-memory'], reuse);
  try {
    if (reuse) {
      for (const index of EXTRA_INDEXES) sqlite.db.exec(`DROP INDEX IF EXISTS ${index.name}`);
      sqlite.db.exec('DROP TABLE IF EXISTS sqlite_stat1');
      sqlite.db.prepare('DELETE FROM search_queries WHERE dataset_id = ?').run(PROBE_DATASET);
      sqlite.db.prepare('DELETE FROM user_events WHERE dataset_id = ?').run(PROBE_DATASET);
      console.log(`Reusing the loaded files: SQLite ${mb(sqlite.size())}, DuckDB ${mb(duck.size())}.`);
    } else {
      await load(sqlite, duck);
    }
    await checkCounts(sqlite, duck);
    const base = new Map<string, Map<string, Timed>>();
    console.log('\n## Main dataset (~98% of the events)');
    base.set('no date filter', await compare(sqlite, duck, MAIN_DATASET, undefined, RUNS, 'no date filter'));
    base.set('last 7 days', await compare(sqlite, duck, MAIN_DATASET, LAST_WEEK, RUNS, 'last 7 days'));
    console.log('\n## Small dataset (~2% of the events): per-dataset filtering');
    await compare(sqlite, duck, SMALL_DATASET, undefined, 3, 'no date filter, 3 runs');
    if (!args['skip-tuning']) await tune(sqlite, duck, base);
  } finally {
    sqlite.close();
    duck.close();
    if (!args.keep && !args.dir) fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
