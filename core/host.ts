/** The search core inside a process: engine, shard threads, gRPC server, warm-up and catch-up. */
import type { Logger } from 'pino';
import type { Store } from '../store/repository.js';
import type { Config } from './config.js';
import { ShardPool } from './pool/shard-pool.js';
import { Engine } from './router/engine.js';
import { startCoreServer } from './server.js';
import { VERSION } from './version.js';

/** A running core. */
export interface CoreHost {
  readonly engine: Engine;
  /** Stops serving, snapshots every dataset and stops the shard threads (the store stays open). */
  stop(): Promise<void>;
}

const CATCH_UP_MS = 1000;

/** Starts the core over `store`. */
export async function startCore(config: Config, logger: Logger, store: Store): Promise<CoreHost> {
  const pool = new ShardPool(config.shardThreads, config.threadNice);
  const engine = new Engine(config, store, pool, logger);
  const server = await startCoreServer(config, logger, VERSION, engine);
  // Warm in the background: the core answers at once, and a query for a dataset still loading waits for it.
  void engine.warmup().catch((err: unknown) => logger.error({ err }, 'warmup failed'));
  let catching = false;
  const catchUp = setInterval(() => {
    if (catching) return;
    catching = true;
    engine.catchUp().catch((err: unknown) => logger.warn({ err }, 'catch-up failed')).finally(() => (catching = false));
  }, CATCH_UP_MS);
  // A store that other processes and machines write to tells of their commits as they happen;
  // the catch-up above is then only the safety net.
  const unwatch = await store.watchChanges?.((datasetId) => {
    engine.changed(datasetId).catch((err: unknown) => logger.warn({ err, dataset: datasetId }, 'applying changes failed'));
  });
  return {
    engine,
    async stop() {
      clearInterval(catchUp);
      await unwatch?.();
      await server.close(config.shutdownGraceMs);
      await engine.snapshotAll();
      await engine.close();
      await pool.close();
    },
  };
}
