/** Entry point of the search core process. */
import { openStore } from '../store/open-store.js';
import { loadConfig } from './config.js';
import { applyHeapGrowth } from './heap-growth.js';
import { startCore } from './host.js';
import { createLogger } from './logger.js';
import { onShutdown } from './shutdown.js';

const config = loadConfig();
// Fewer mark-compacts on the event loop that answers searches (heap-growth.ts).
applyHeapGrowth(config.heapGrowingPercent);
const logger = createLogger(config, 'core');
if (config.coreInProcess) {
  // The facade hosts the core (QUARRY_CORE_IN_PROCESS): a second one would hold the same port and shards.
  logger.info('QUARRY_CORE_IN_PROCESS is set: the facade hosts the search core; exiting');
  process.exit(0);
}
const store = await openStore({
  dataDir: config.dataDir,
  databaseUrl: config.databaseUrl,
  poolSize: config.databasePoolSize,
  readCacheBytes: config.readCacheBytes,
});
const core = await startCore(config, logger, store);

onShutdown(logger, async () => {
  await core.stop();
  await store.close();
}, config.shutdownGraceMs);
