/** The Health RPC. */
import os from 'node:os';

/** Reply of Health. */
export interface HealthReply {
  /** "ok", or "reloading" while shards lost with a shard thread are not reloaded yet. */
  status: string;
  version: string;
  shard_threads: number;
  uptime_seconds: number;
  /** Datasets whose shards are loaded and serving. */
  datasets_loaded: number;
  /** Datasets whose shards are loading. */
  datasets_loading: number;
  /** Datasets whose last load failed. */
  datasets_failed: number;
  /** Datasets that lost shards with a thread and are not reloaded yet. */
  datasets_lost: number;
  /** Shard threads replaced since the core started. */
  shard_thread_restarts: number;
}

/** What the engine reports about its shards (see Engine.shardHealth). */
export interface ShardHealth {
  readonly loaded: number;
  readonly loading: number;
  readonly failed: number;
  readonly lost: number;
  readonly threadRestarts: number;
}

const started = Date.now();

const NO_SHARDS: ShardHealth = { loaded: 0, loading: 0, failed: 0, lost: 0, threadRestarts: 0 };

/** Builds the Health reply. */
export function health(version: string, shardThreads: number = os.availableParallelism(), shards: ShardHealth = NO_SHARDS): HealthReply {
  return {
    status: shards.lost > 0 ? 'reloading' : 'ok',
    version,
    shard_threads: shardThreads,
    uptime_seconds: (Date.now() - started) / 1000,
    datasets_loaded: shards.loaded,
    datasets_loading: shards.loading,
    datasets_failed: shards.failed,
    datasets_lost: shards.lost,
    shard_thread_restarts: shards.threadRestarts,
  };
}
