/** Entry point of the HTTP facade: builds the services, listens, and drains on shutdown. */
import http from 'node:http';
import { openBlobStore } from '../core/blob/blob-store.js';
import { connectCore } from '../core/client/core-client.js';
import { inProcessCore } from '../core/client/inproc-client.js';
import { startCore } from '../core/host.js';
import { VERSION } from '../core/version.js';
import { connectJobs } from '../core/client/jobs-client.js';
import { loadConfig } from '../core/config.js';
import { applyHeapGrowth } from '../core/heap-growth.js';
import { createLogger } from '../core/logger.js';
import { onShutdown } from '../core/shutdown.js';
import { openStore } from '../store/open-store.js';
import { startAnalytics } from './analytics/start-analytics.js';
import { createApp } from './app.js';

const config = loadConfig();
// Fewer mark-compacts on the event loop that answers searches (core/heap-growth.ts).
applyHeapGrowth(config.heapGrowingPercent);
const logger = createLogger(config, 'facade');
// SQLite writes in a thread of their own: a batch write's transaction would hold the event loop
// that every tenant's requests share (see store/sqlite/threaded-store.ts).
const store = await openStore({
  dataDir: config.dataDir,
  databaseUrl: config.databaseUrl,
  poolSize: config.databasePoolSize,
  readCacheBytes: config.readCacheBytes,
  writeThread: config.storeWriteThread ? { nice: config.threadNice } : null,
  // Reports run off the event loop, whatever QUARRY_STORE_WRITE_THREAD says, and under a deadline.
  reports: { nice: config.threadNice, timeoutMs: config.analyticsReportTimeoutMs },
});
const analytics = startAnalytics(config.redisUrl, store.analytics, logger);
// With QUARRY_CORE_IN_PROCESS the core (and its gRPC server, for the job workers) runs here and
// searches skip the gRPC hop; otherwise the core is another process reached over gRPC.
const hosted = config.coreInProcess ? await startCore(config, createLogger(config, 'core'), store) : undefined;
const services = {
  config,
  logger,
  store,
  core: hosted
    ? inProcessCore(config, logger, VERSION, hosted.engine, config.coreDeadlineMs)
    : connectCore(config.coreAddress, config.coreDeadlineMs, config.coreToken),
  jobs: connectJobs(config.redisUrl, { embedBackoffMs: config.embedBackoffMs }),
  analytics: analytics.recorder,
  blobs: await openBlobStore(config),
};
// Koa's callback handles its own rejections (ctx.onerror answers and logs them).
// eslint-disable-next-line @typescript-eslint/no-misused-promises
const server = http.createServer(createApp(services).callback());
server.keepAliveTimeout = 65_000;
// No limit on a whole request's time (Node's default is 5 minutes): a presigned upload of a large
// file on a slow link takes longer. Headers still must arrive within headersTimeout, keyless
// bodies are refused before they are read (middleware/gate.ts), and an upload that stops sending
// is dropped after routes/blob.ts UPLOAD_IDLE_MS.
server.requestTimeout = 0;
await new Promise<void>((resolve, reject) => {
  server.once('error', reject);
  server.listen(config.httpPort, config.httpHost, resolve);
});
const address = server.address();
logger.info({ host: config.httpHost, port: typeof address === 'object' && address ? address.port : config.httpPort }, 'facade listening');

onShutdown(logger, async () => {
  // Stop accepting, let in-flight requests finish (bounded by the grace period), then close.
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const timer = setTimeout(() => server.closeAllConnections(), config.shutdownGraceMs).unref();
  await closed;
  clearTimeout(timer);
  // After the drain, so every answered request's record is flushed (or written to the store).
  await analytics.close();
  await services.jobs.close();
  services.core.close();
  await hosted?.stop();
  await services.store.close();
}, config.shutdownGraceMs);
