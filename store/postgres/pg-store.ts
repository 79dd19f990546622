/** The store beyond one machine: every repository over one PostgreSQL database. */
import type pg from 'pg';
import type { Store } from '../repository.js';
import { pgAnalytics } from './analytics.js';
import { pgReportSql } from './reports.js';
import { pgUserEvents } from './user-events.js';
import { pgApiKeys } from './api-keys.js';
import { CHANGES_CHANNEL, pgChangeLog } from './change-log.js';
import { pgChunks } from './chunks.js';
import { PgDb, type PgOptions } from './database.js';
import { pgDatasets } from './datasets.js';
import { pgExperiments } from './experiments.js';
import { pgFiles } from './files.js';
import { pgGroups } from './groups.js';
import { pgIndexReads } from './index-reads.js';
import { pgMessages } from './messages.js';
import { pgOrganizations } from './organizations.js';
import { pgPurger } from './purge.js';
import { pgSparseVectors } from './sparse-vectors.js';
import { pgTopics } from './topics.js';
import { pgUsers } from './users.js';
import { pgDatasetEvents, pgVectors } from './vectors.js';

/** Pause before the change listener connects again after losing its connection, in ms. */
const LISTEN_RETRY_MS = 1000;

/** The PostgreSQL store, with what only it offers. */
export interface PgStore extends Store {
  /** The pool (for tools that copy or check whole tables). */
  readonly db: PgDb;
  /** See {@link Store.watchChanges} (LISTEN/NOTIFY on {@link CHANGES_CHANNEL}). */
  watchChanges(onChange: (datasetId: string | null) => void): Promise<() => Promise<void>>;
}

/** Options of {@link openPgStore}: the pool's, and the deadline of each analytics report statement (none when absent; see reports.ts). */
export type PgStoreOptions = PgOptions & { readonly reportTimeoutMs?: number };

/** Connects to the database at `url` (postgres://...), migrating it as needed. */
export async function openPgStore(url: string, options: PgStoreOptions = {}): Promise<PgStore> {
  const db = await PgDb.open(url, options);
  const purger = pgPurger(db);
  return {
    db,
    organizations: pgOrganizations(db, purger),
    users: pgUsers(db),
    apiKeys: pgApiKeys(db),
    datasets: pgDatasets(db, purger),
    chunks: pgChunks(db),
    groups: pgGroups(db),
    changeLog: pgChangeLog(db),
    vectors: pgVectors(db),
    sparseVectors: pgSparseVectors(db),
    events: pgDatasetEvents(db),
    analytics: pgAnalytics(db),
    topics: pgTopics(db),
    messages: pgMessages(db),
    files: pgFiles(db),
    userEvents: pgUserEvents(db),
    experiments: pgExperiments(db),
    reports: pgReportSql(db, options.reportTimeoutMs),
    indexReads: pgIndexReads(db),
    async ping() {
      await db.run('SELECT 1');
    },
    // No read caches here: several processes on several machines write, and a cache would need
    // every one of them to announce its writes.
    pinReads() {},
    async watchChanges(onChange) {
      let stopped = false;
      let client: pg.Client | null = null;
      let retry: NodeJS.Timeout | null = null;
      let listenedBefore = false;
      // One LISTEN connection, opened again after it is lost (the server restarted); notices sent
      // while it was down are gone, so the listener is told to check everything once it is back.
      const listen = async (): Promise<void> => {
        let c: pg.Client | null = null;
        try {
          c = await db.dedicatedClient();
          if (stopped) {
            await c.end().catch(() => {});
            return;
          }
          c.on('notification', (n) => {
            if (n.channel === CHANGES_CHANNEL && n.payload) onChange(n.payload);
          });
          const mine = c;
          const lost = (): void => {
            if (client !== mine) return;
            client = null;
            if (!stopped) retry = setTimeout(() => void listen(), LISTEN_RETRY_MS);
          };
          c.on('error', lost);
          c.on('end', lost);
          await c.query(`LISTEN ${CHANGES_CHANNEL}`);
          client = c;
          retry = null;
          if (listenedBefore) onChange(null);
          listenedBefore = true;
        } catch {
          if (c && client !== c) await c.end().catch(() => {});
          if (!stopped) retry = setTimeout(() => void listen(), LISTEN_RETRY_MS);
        }
      };
      await listen();
      return async () => {
        stopped = true;
        if (retry) clearTimeout(retry);
        const c = client;
        client = null;
        await c?.end().catch(() => {});
      };
    },
    async close() {
      await db.close();
    },
  };
}
