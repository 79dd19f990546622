/** Entry point of the job workers (BullMQ). */
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { loadConfig } from '../../core/config.js';
import { Queues } from '../../core/domain/queues.js';
import { createLogger } from '../../core/logger.js';
import { onShutdown } from '../../core/shutdown.js';
import { openSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { maintenanceProcessor, sweepDeleted } from './maintenance.js';

const SWEEP_INTERVAL_MS = 60_000;

const config = loadConfig();
const logger = createLogger(config, 'jobs');
const store = openSqliteStore(config.dataDir);
// BullMQ workers block on Redis; maxRetriesPerRequest null is what BullMQ requires for them.
const connection = new Redis(config.redisUrl, { maxRetriesPerRequest: null });
connection.on('error', (err) => logger.warn({ err: err.message }, 'redis connection error'));

const maintenance = new Worker(Queues.maintenance, maintenanceProcessor(store, config.dataDir, logger), { connection, concurrency: 1 });
maintenance.on('failed', (job, err) => logger.error({ job: job?.name, id: job?.data.id, err }, 'job failed'));

const sweep = () => sweepDeleted(store, config.dataDir, logger).catch((err: unknown) => logger.error({ err }, 'sweep failed'));
await sweep();
const timer = setInterval(sweep, SWEEP_INTERVAL_MS);
logger.info('jobs started');

onShutdown(logger, async () => {
  clearInterval(timer);
  // close() waits for the jobs in progress to finish.
  await maintenance.close();
  connection.disconnect();
  await store.close();
});
