/** The Health RPC. */
import os from 'node:os';

/** Reply of Health. */
export interface HealthReply {
  status: string;
  version: string;
  shard_threads: number;
  uptime_seconds: number;
}

const started = Date.now();

/** Builds the Health reply. */
export function health(version: string, shardThreads: number = os.availableParallelism()): HealthReply {
  return { status: 'ok', version, shard_threads: shardThreads, uptime_seconds: (Date.now() - started) / 1000 };
}
