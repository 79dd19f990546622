/**
 * The analytics worker in a thread of its own (started by ./analytics-host.ts): the BullMQ worker
 * of the analytics queue, its group commit and its own store connection, in Linux's SCHED_IDLE
 * class. Nothing here is waited on by a user, and at nice 10 in the job process's main thread
 * (taking jobs, decoding them, the store's transactions: ~70 us a search) it held the search p99
 * at one connection ~1 ms higher (bench/README.md, search-latency).
 */
import { parentPort } from 'node:worker_threads';
import { Redis } from 'ioredis';
import { loadConfig } from '../../core/config.js';
import { idleThisThread } from '../../core/domain/thread-entry.js';
import { createLogger } from '../../core/logger.js';
import { openStore } from '../../store/open-store.js';
import { analyticsWorker, GROUP_DEFAULTS } from './analytics.js';

if (!parentPort) throw new Error('workers/jobs/analytics-thread runs as a worker thread (see workers/jobs/analytics-host.ts)');
const port = parentPort;
const priority = idleThisThread();
const config = loadConfig();
const logger = createLogger(config, 'jobs-analytics');
const store = await openStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, poolSize: 2 });
// BullMQ workers block on Redis; maxRetriesPerRequest null is what BullMQ requires for them.
const connection = new Redis(config.redisUrl, { maxRetriesPerRequest: null });
connection.on('error', (err) => logger.warn({ err: err.message }, 'redis connection error (analytics)'));
const worker = analyticsWorker(store, connection, logger, { ...GROUP_DEFAULTS, lingerMs: config.analyticsGroupMs });

port.on('message', (m: { close: true }) => {
  if (!('close' in m)) return;
  // Active jobs finish (their group is stored) before the worker closes; then the rest.
  void worker
    .close()
    .catch((err: unknown) => logger.warn({ err }, 'analytics worker close failed'))
    .then(async () => {
      connection.disconnect();
      await store.close();
    })
    .finally(() => port.close());
});
port.postMessage({ ready: true, priority });
