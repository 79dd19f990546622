/** Entry point of the search core process. */
import { openSqliteStore } from '../store/sqlite/sqlite-store.js';
import { loadConfig } from './config.js';
import { createLogger } from './logger.js';
import { ShardPool } from './pool/shard-pool.js';
import { Engine } from './router/engine.js';
import { startCoreServer } from './server.js';
import { onShutdown } from './shutdown.js';
import { VERSION } from './version.js';
import { loadEnglishDictionary } from './typo/english.js';

const config = loadConfig();
const logger = createLogger(config, 'core');
const store = openSqliteStore(config.dataDir);
const pool = new ShardPool(config.shardThreads);
const engine = new Engine(config, store, pool, logger);
const server = await startCoreServer(config, logger, VERSION, engine);
// Warm in the background: the core answers at once, and a query for a dataset still loading waits for it.
void engine.warmup().catch((err: unknown) => logger.error({ err }, 'warmup failed'));
// The English word list (~140 ms to load) is read now rather than by the first typo-corrected search.
setImmediate(() => loadEnglishDictionary());
const CATCH_UP_MS = 1000;
let catching = false;
const catchUp = setInterval(() => {
  if (catching) return;
  catching = true;
  engine.catchUp().catch((err: unknown) => logger.warn({ err }, 'catch-up failed')).finally(() => (catching = false));
}, CATCH_UP_MS);

onShutdown(logger, async () => {
  clearInterval(catchUp);
  await server.close(config.shutdownGraceMs);
  await engine.snapshotAll();
  await engine.close();
  await pool.close();
  await store.close();
}, config.shutdownGraceMs);
