/** The error of a task on a shard its thread does not hold (a thread replaced since the load). */

/** Thrown by {@link ShardPool.run} when the thread answered `not_loaded`; the dataset must reload. */
export class ShardNotLoadedError extends Error {
  constructor(
    readonly datasetId: string,
    readonly shard: number,
    message: string,
  ) {
    super(message);
    this.name = 'ShardNotLoadedError';
  }
}
