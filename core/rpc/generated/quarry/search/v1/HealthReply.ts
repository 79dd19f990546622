// Original file: proto/search/v1/core.proto


/**
 * What the core reports about itself.
 */
export interface HealthReply {
  /**
   * "ok" when the core is serving; "reloading" while datasets_lost > 0.
   */
  'status'?: (string);
  /**
   * Build version of the core.
   */
  'version'?: (string);
  /**
   * Number of shard worker threads.
   */
  'shard_threads'?: (number);
  /**
   * Seconds since the core started.
   */
  'uptime_seconds'?: (number | string);
  /**
   * Datasets whose shards are loaded and serving.
   */
  'datasets_loaded'?: (number);
  /**
   * Datasets whose shards are loading (snapshot + change-log replay).
   */
  'datasets_loading'?: (number);
  /**
   * Datasets whose last load failed (retried on their next use).
   */
  'datasets_failed'?: (number);
  /**
   * Datasets that lost shards with a shard thread and are not reloaded yet; status is then
   * "reloading" and the HTTP health answers 503.
   */
  'datasets_lost'?: (number);
  /**
   * Shard threads replaced since the core started (each lost the shards it held).
   */
  'shard_thread_restarts'?: (number);
}

/**
 * What the core reports about itself.
 */
export interface HealthReply__Output {
  /**
   * "ok" when the core is serving; "reloading" while datasets_lost > 0.
   */
  'status': (string);
  /**
   * Build version of the core.
   */
  'version': (string);
  /**
   * Number of shard worker threads.
   */
  'shard_threads': (number);
  /**
   * Seconds since the core started.
   */
  'uptime_seconds': (number);
  /**
   * Datasets whose shards are loaded and serving.
   */
  'datasets_loaded': (number);
  /**
   * Datasets whose shards are loading (snapshot + change-log replay).
   */
  'datasets_loading': (number);
  /**
   * Datasets whose last load failed (retried on their next use).
   */
  'datasets_failed': (number);
  /**
   * Datasets that lost shards with a shard thread and are not reloaded yet; status is then
   * "reloading" and the HTTP health answers 503.
   */
  'datasets_lost': (number);
  /**
   * Shard threads replaced since the core started (each lost the shards it held).
   */
  'shard_thread_restarts': (number);
}
