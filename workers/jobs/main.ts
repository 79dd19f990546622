/** Entry point of the job workers (BullMQ): maintenance purges, embedding, file imports, RAG answers and analytics flushes. */
import type { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { connectCore } from '../../core/client/core-client.js';
import { connectJobs } from '../../core/client/jobs-client.js';
import { loadConfig } from '../../core/config.js';
import { embeddingSpec, embedsDense, spladeSpec } from '../../core/domain/dataset-config.js';
import { EMBED_ATTEMPTS, Queues, type EmbedJob } from '../../core/domain/queues.js';
import { createLogger } from '../../core/logger.js';
import { niceThisProcess } from '../../core/domain/thread-entry.js';
import { onShutdown } from '../../core/shutdown.js';
import { openStore } from '../../store/open-store.js';
import { EmbedderCache } from '../../core/embed/embedder-cache.js';
import { analyticsWorker, GROUP_DEFAULTS, startAnalyticsRetention } from './analytics.js';
import { startAnalyticsThread } from './analytics-host.js';
import { bulkDeleteWorker } from './bulk-delete.js';
import { fileImportWorker } from './file-import.js';
import { openBlobStore } from '../../core/blob/blob-store.js';
import { embedProcessor } from './embed.js';
import { jobWorker, lockOptions } from './job-worker.js';
import { watchEventLoop } from './loop-monitor.js';
import { maintenanceProcessor, sweepDeleted } from './maintenance.js';
import { ragLanes, ragProcessor } from './rag.js';
import { LocalModel } from '../../core/llm/llama-cpp.js';
import { RAG_QUEUE, type GenerationJob } from '../../core/domain/rag.js';

const SWEEP_INTERVAL_MS = 60_000;
/** How often datasets with pending embeddings are (re-)enqueued: the safety net for lost or refused jobs. */
const EMBED_SWEEP_MS = 15_000;
/** A dataset whose embedding was dead-lettered is not retried by the sweep before this pause. */
const DEAD_LETTER_PAUSE_MS = 10 * 60_000;

const config = loadConfig();
// Everything here is background work (embedding, analytics batches, purges): it yields the CPU to
// the event loops that answer requests. Set first, for every thread V8 has started already, so
// that the threads started below (the model's, libuv's) inherit it.
niceThisProcess(config.threadNice);
const logger = createLogger(config, 'jobs');
// The signal handler goes in first: a SIGTERM while the store, Redis and the workers are still
// opening (a restart, or a supervisor stopping everything) must end the process cleanly, not by
// the signal's default action. Until the workers run, there is nothing to close but the process.
let stopAll: () => Promise<void> = async () => {};
onShutdown(logger, () => stopAll(), config.shutdownGraceMs);
const store = await openStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, poolSize: config.databasePoolSize });
// Watched from here: opening a SQLite store can wait, synchronously, for another process's
// migration of a fresh data dir (SQLite's busy handler, migrate's retries), which a loaded
// machine stretched to 0.3-1.5 s. Nothing is on this loop yet then, no job lock to renew, and
// the monitor's first window reported that wait as a stall of the jobs it watches.
const stopLoopMonitor = watchEventLoop(logger, { intervalMs: config.loopMonitorMs });
const core = connectCore(config.coreAddress, config.coreDeadlineMs, config.coreToken);
const jobs = connectJobs(config.redisUrl, { embedBackoffMs: config.embedBackoffMs });
// BullMQ workers block on Redis; maxRetriesPerRequest null is what BullMQ requires for them.
const connection = new Redis(config.redisUrl, { maxRetriesPerRequest: null });
connection.on('error', (err) => logger.warn({ err: err.message }, 'redis connection error'));

// Uploaded files: imports read them, purges remove a dataset's.
const blobs = await openBlobStore(config);
const purgeFiles = { dataDir: config.dataDir, blobs };
// Every worker comes from jobWorker() (job-worker.ts): the same Redis error handling for all.
const maintenance = jobWorker(Queues.maintenance, maintenanceProcessor(store, purgeFiles, logger), connection, logger, { concurrency: 1 });
maintenance.on('failed', (job, err) => logger.error({ job: job?.name, id: job?.data.id, err }, 'job failed'));

const embedders = new EmbedderCache(config.embedThreads);
const deadLettered = new Map<string, number>();
// Embedding is CPU-bound with the embedded model: one job at a time. Each job runs one turn of
// about a second and goes back to the tail of the queue (round-robin across datasets, see
// embed.ts). The model runs in worker threads, so the lock is renewed on time however slow a
// batch is; a short lock (QUARRY_JOB_LOCK_MS) lets a restarted worker take over a killed
// worker's job within ~15 s by default.
const embed = jobWorker<EmbedJob, { embedded: number }>(Queues.embed, embedProcessor(store, core, embedders, logger), connection, logger, {
  concurrency: 1,
  ...lockOptions(config.jobLockMs),
  autorun: config.embedJobs,
});
embed.on('failed', (job, err) => {
  if (!job) return;
  const last = job.attemptsMade >= (job.opts.attempts ?? EMBED_ATTEMPTS);
  logger.warn({ dataset: job.data.datasetId, attempt: job.attemptsMade, last, err: err.message }, 'embedding job failed');
  if (!last) return;
  deadLettered.set(job.data.datasetId, Date.now());
  void store.events
    .add(job.data.datasetId, 'embedding_failed', { error: err.message, attempts: job.attemptsMade })
    .catch((e: unknown) => logger.error({ err: e }, 'could not record embedding failure'));
});

// The operator's GGUF model: loaded at the first answer, but what would stop it is said now.
const localModel = config.llmModelPath === null
  ? undefined
  : new LocalModel({
      modelPath: config.llmModelPath,
      threads: config.llmModelThreads,
      sequences: config.llmModelSequences,
      contextSize: config.llmModelContext,
      onLoadError: (err) => logger.error({ err, modelPath: config.llmModelPath }, 'the local language model could not be loaded'),
      onLog: (level, message) => logger[level]({ source: 'llama.cpp' }, message),
    });
const localProblem = localModel?.problem() ?? null;
if (localProblem !== null) logger.error({ modelPath: config.llmModelPath }, `LLM_MODEL_PATH is set, but answers will fail: ${localProblem}`);
else if (localModel) logger.info({ modelPath: config.llmModelPath, threads: config.llmModelThreads }, 'datasets without LLM_BASE_URL answer with the local model');

// RAG answers wait on the language model: many at once. A stalled answer is failed, never run
// again (maxStalledCount 0): its text went out once already, and the facade has ended it. A short
// lock lets a restarted worker clear a killed worker's answers from the active set within ~15 s.
// Auto-pipelining: the stream writes of all answers made in one turn leave in one socket write.
const ragRedis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableAutoPipelining: true });
ragRedis.on('error', (err) => logger.warn({ err: err.message }, 'redis connection error (rag streams)'));
const ragProcess = ragProcessor(ragRedis, embedders, logger, { timeoutMs: config.llmTimeoutMs, maxRetries: config.llmMaxRetries, sentenceVectors: config.ragSentenceVectors, localModel });
// Several workers share the process's answers (rag.ts, RAG_LANE_CONCURRENCY): a burst of answers
// starts while the rest of its jobs are still being taken.
const ragWorkers = ragLanes(config.ragConcurrency).map((concurrency) =>
  jobWorker<GenerationJob, { completed: boolean }>(RAG_QUEUE, ragProcess, connection, logger, { concurrency, maxStalledCount: 0, ...lockOptions(config.jobLockMs) }),
);

// The analytics batches are taken and stored by a thread of their own in SCHED_IDLE
// (analytics-thread.ts): ~70 us a search that never holds a core a search, or this process's RAG
// answers, could use. QUARRY_ANALYTICS_IDLE=false keeps the worker here, at the process's nice.
const analyticsThread = config.analyticsIdle ? await startAnalyticsThread(logger) : null;
if (analyticsThread) logger.info({ priority: analyticsThread.priority }, 'analytics worker started in a thread of its own');
const analytics = analyticsThread ? null : analyticsWorker(store, connection, logger, { ...GROUP_DEFAULTS, lingerMs: config.analyticsGroupMs });
const bulkDelete = bulkDeleteWorker(store, core, connection, logger);
const fileImport = fileImportWorker({ store, core, blobs, jobs, config, logger }, connection);
const stopRetention = startAnalyticsRetention(store, config.analyticsRetentionDays, logger);

const sweep = () => sweepDeleted(store, purgeFiles, logger).catch((err: unknown) => logger.error({ err }, 'sweep failed'));
let embedSweeping = false;
const embedSweep = async (): Promise<void> => {
  if (embedSweeping) return;
  embedSweeping = true;
  try {
    for (const id of await store.datasets.listIds()) {
      const paused = deadLettered.get(id);
      if (paused !== undefined && Date.now() - paused < DEAD_LETTER_PAUSE_MS) continue;
      const dataset = await store.datasets.get(id);
      if (!dataset) continue;
      const cfg = dataset.serverConfiguration;
      const splade = spladeSpec(cfg);
      const dense = embedsDense(cfg) && (await store.vectors.pendingCount(id, embeddingSpec(cfg).modelKey)) > 0;
      const sparse = splade !== null && (await store.sparseVectors.pendingCount(id, splade.modelKey)) > 0;
      if (dense || sparse) await jobs.embedDataset(id);
    }
  } catch (err) {
    logger.warn({ err: (err as Error).message }, 'embedding sweep failed');
  } finally {
    embedSweeping = false;
  }
};
await sweep();
const timers = [setInterval(() => void sweep(), SWEEP_INTERVAL_MS)];
if (config.embedJobs) {
  void embedSweep();
  timers.push(setInterval(() => void embedSweep(), EMBED_SWEEP_MS));
}
logger.info('jobs started');

/**
 * Closes a BullMQ worker, waiting for its job in progress, but at most `ms`: a close() called
 * while the worker's blocking connection is reconnecting (shortly after Redis restarted) never
 * resolves in BullMQ 6. Every job is idempotent, so one cut short is simply run again.
 */
async function closeWithin(worker: Worker, name: string, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const closed = await Promise.race([
    worker.close().then(() => true),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]);
  clearTimeout(timer);
  if (!closed) logger.warn({ worker: name, waitedMs: ms }, 'worker did not close in time; exiting without it');
}

stopAll = async () => {
  for (const t of timers) clearInterval(t);
  stopRetention();
  stopLoopMonitor();
  await Promise.all([
    closeWithin(maintenance, 'maintenance', config.shutdownGraceMs),
    closeWithin(embed, 'embed', config.shutdownGraceMs),
    analytics ? closeWithin(analytics, 'analytics', config.shutdownGraceMs) : analyticsThread?.close(config.shutdownGraceMs),
    closeWithin(bulkDelete, 'bulk delete', config.shutdownGraceMs),
    closeWithin(fileImport, 'file import', config.shutdownGraceMs),
    ...ragWorkers.map((worker) => closeWithin(worker, 'rag', config.shutdownGraceMs)),
  ]);
  await embedders.close();
  await localModel?.close();
  await jobs.close();
  core.close();
  connection.disconnect();
  ragRedis.disconnect();
  await store.close();
};
