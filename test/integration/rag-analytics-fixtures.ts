/**
 * What the RAG and recommendation report tests share: the stack with its two datasets and store, a
 * seeded random source, user events to seed, the oracle's time buckets and stamps, range, sort and
 * paging checks in plain JavaScript, the report call and its refusals, and SQL writes on a stack's
 * store (to set what no API writes: hallucination figures, a topic's creation time).
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { expect } from 'vitest';
import { openStore } from '../../store/open-store.js';
import type { Store } from '../../store/repository.js';
import { client, type Client } from '../helpers/api.js';
import { createDataset, createTenant, type Tenant } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import type { StoreLocation } from '../helpers/store-snapshot.js';

/** The seeded random source of the oracle tests (mulberry32). */
export { rng } from '../helpers/random-corpus.js';

/** A report test's stack: dataset A (`ds`) for the seeded rows, dataset B (`realDs`) for a real record. */
export interface ReportStack {
  stack: Stack;
  tenant: Tenant;
  store: Store;
  ds: Client;
  datasetId: string;
  realDs: Client;
  realDatasetId: string;
}

/** Starts the stack, its tenant (dataset A) and dataset B with `serverConfiguration`, and opens its store to seed. */
export async function startReportStack(serverConfiguration: Record<string, unknown>): Promise<ReportStack> {
  const stack = await startStack();
  const tenant = await createTenant(stack);
  const realDatasetId = await createDataset(stack, tenant.orgId, tenant.ownerKey, { server_configuration: serverConfiguration });
  const realDs = client(stack.baseUrl, { authorization: tenant.ownerKey, 'tr-dataset': realDatasetId });
  const store = await openStore(stack);
  return { stack, tenant, store, ds: tenant.ds, datasetId: tenant.datasetId, realDs, realDatasetId };
}

/** Closes what {@link startReportStack} opened (either may be absent when the start failed). */
export async function stopReportStack(s: Partial<ReportStack> | undefined): Promise<void> {
  await s?.store?.close();
  await s?.stack?.stop();
}

/** The analytics tests' user-event builder. */
export { userEvent } from '../helpers/user-event.js';

/** The answer of one report asked at `route` (asserting 200). */
export async function postReport(on: Client, route: string, body: Record<string, unknown>): Promise<any> {
  const res = await on.post(route, body);
  expect(res.status, `${JSON.stringify(body)} → ${res.text}`).toBe(200);
  return res.body;
}

/** Asserts each body is refused at `route` with 400 and a message matching its pattern. */
export async function expectRefusals(on: Client, route: string, cases: readonly (readonly [unknown, RegExp])[]): Promise<void> {
  for (const [body, message] of cases) {
    const res = await on.post(route, body);
    expect(res.status, `${JSON.stringify(body)} → ${res.text}`).toBe(400);
    expect(res.body.message).toMatch(message);
  }
}

/** A listing's order: by `key` (descending when `desc`), ties by id in code-point order, as the reports sort. */
export const byKeyThenId =
  <T>(key: (item: T) => number, desc: boolean, id: (item: T) => string) =>
  (x: T, y: T): number =>
    (desc ? key(y) - key(x) : key(x) - key(y)) || byCodePoint(id(x), id(y));


export const MINUTE = 60_000;
export const HOUR = 3_600_000;
export const DAY = 86_400_000;

/** Bucket sizes of the graphs. */
export type Granularity = 'second' | 'minute' | 'hour' | 'day' | 'month';

/** The start (epoch ms, UTC) of the bucket holding `ms`. */
export function bucketOf(ms: number, g: Granularity): number {
  if (g === 'month') {
    const d = new Date(ms);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  }
  const size = { second: 1000, minute: MINUTE, hour: HOUR, day: DAY }[g];
  return Math.floor(ms / size) * size;
}

/** A report time stamp: `YYYY-MM-DD HH:MM:SS` UTC. */
export const stamp = (ms: number): string => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');

/** A wire timestamp without a zone (read as UTC) for `ms`. */
export const wireTime = (ms: number): string => new Date(ms).toISOString().slice(0, 23).replace('T', ' ');

/** `{gt, gte, lt, lte}` bounds in epoch ms. */
export interface Bounds {
  gt?: number;
  gte?: number;
  lt?: number;
  lte?: number;
}

/** Whether `v` lies within `b` (absent bounds are open; null never lies within a bound). */
export function within(v: number | null, b: Bounds | undefined): boolean {
  if (!b) return true;
  if (v === null) return false;
  return (b.gt === undefined || v > b.gt) && (b.gte === undefined || v >= b.gte) && (b.lt === undefined || v < b.lt) && (b.lte === undefined || v <= b.lte);
}

/** The same bounds as wire timestamps. */
export function wireRange(b: Bounds): Record<string, string> {
  return Object.fromEntries(Object.entries(b).map(([k, v]) => [k, wireTime(v)]));
}

/** One graph point. */
export interface Point {
  time_stamp: string;
  point: number;
}

/**
 * Points of `items` grouped by the bucket of `at(item)`, oldest first, each valued by `value` over
 * the bucket's items.
 */
export function pointsOf<T>(items: readonly T[], at: (item: T) => number, g: Granularity, value: (bucket: T[]) => number): Point[] {
  const buckets = new Map<number, T[]>();
  for (const item of items) {
    const b = bucketOf(at(item), g);
    buckets.set(b, [...(buckets.get(b) ?? []), item]);
  }
  return [...buckets.entries()].sort((a, b) => a[0] - b[0]).map(([b, group]) => ({ time_stamp: stamp(b), point: value(group) }));
}

/** `a / b`, 0 when `b` is 0. */
export const ratio = (a: number, b: number): number => (b === 0 ? 0 : a / b);

/** Distinct values. */
export const distinct = <T>(values: readonly T[]): number => new Set(values).size;

/** Code-point order of strings (as the reports order text). */
export const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** `{query, count}` of texts, most frequent first, then in code-point order; one page of 10. */
export function topTexts(texts: readonly string[], page = 1): { query: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const t of texts) counts.set(t, (counts.get(t) ?? 0) + 1);
  return [...counts.entries()]
    .map(([query, count]) => ({ query, count }))
    .sort((a, b) => b.count - a.count || byCodePoint(a.query, b.query))
    .slice((page - 1) * 10, page * 10);
}

/** Asserts graph points alike up to floating-point noise: returns the points with values rounded to 9 places. */
export const rounded = (points: readonly Point[]): Point[] => points.map((p) => ({ time_stamp: p.time_stamp, point: Math.round(p.point * 1e9) / 1e9 }));

/** Runs write statements (`?` placeholders) on the stack's store, in one transaction. */
export async function writeStore(loc: StoreLocation, statements: readonly (readonly [string, ...unknown[]])[]): Promise<void> {
  if (loc.databaseUrl !== null) {
    const client = new pg.Client({ connectionString: loc.databaseUrl });
    client.on('error', () => {});
    await client.connect();
    try {
      await client.query('BEGIN');
      for (const [sql, ...params] of statements) {
        let n = 0;
        await client.query(
          sql.replace(/\?/g, () => `$${++n}`),
          params,
        );
      }
      await client.query('COMMIT');
    } finally {
      await client.end();
    }
    return;
  }
  const db = new Database(path.join(loc.dataDir, 'quarry.sqlite'), { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 10000');
    db.transaction(() => {
      for (const [sql, ...params] of statements) db.prepare(sql).run(...params);
    })();
  } finally {
    db.close();
  }
}

/**
 * Asserts a rate graph (`total`, `points`) against the oracle: the share of `items` meeting `hit`,
 * over all of them and per bucket of `at`.
 */
export function expectShare<T>(total: number, points: readonly Point[], items: readonly T[], at: (item: T) => number, g: Granularity, hit: (item: T) => boolean): void {
  expect(total).toBeCloseTo(ratio(items.filter(hit).length, items.length), 9);
  expect(rounded(points)).toEqual(rounded(pointsOf(items, at, g, (b) => ratio(b.filter(hit).length, b.length))));
}

/**
 * Asserts a per-user graph against the oracle: records with a user per distinct user, over all of
 * them and per bucket of `at` (records without a user left out).
 */
export function expectPerUser<T>(total: number, points: readonly Point[], items: readonly T[], at: (item: T) => number, g: Granularity, user: (item: T) => string | null): void {
  const withUser = items.filter((i) => user(i) !== null);
  expect(total).toBeCloseTo(ratio(withUser.length, distinct(withUser.map(user))), 9);
  expect(rounded(points)).toEqual(rounded(pointsOf(withUser, at, g, (b) => ratio(b.length, distinct(b.map(user))))));
}
