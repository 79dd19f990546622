/**
 * The only module that reads `process.env`. Every variable is parsed once, validated and frozen;
 * README's configuration table lists the same names, defaults and meanings.
 */
import os from 'node:os';
import path from 'node:path';
import { LIMITS } from './domain/limits.js';
import { parseTimestamp } from './domain/time.js';

/** Validated, frozen configuration of every quarry process. */
export interface Config {
  /** HTTP listen host of the facade. @defaultValue `127.0.0.1` */
  readonly httpHost: string;
  /** HTTP listen port of the facade. @defaultValue `8090` */
  readonly httpPort: number;
  /** gRPC listen host of the core. @defaultValue `127.0.0.1` */
  readonly grpcHost: string;
  /** gRPC listen port of the core. @defaultValue `50051` */
  readonly grpcPort: number;
  /** Address (`host:port`) the facade and job workers use to reach the core. @defaultValue grpcHost:grpcPort */
  readonly coreAddress: string;
  /**
   * Bearer token of the core's gRPC calls (`authorization: Bearer <token>`): the core refuses
   * calls without it, and the HTTP API and job workers send it. Required (at least 16
   * characters) when the core listens beyond loopback. @defaultValue none
   */
  readonly coreToken: string | null;
  /** Directory for the SQLite store (when {@link databaseUrl} is unset) and index snapshots. @defaultValue `./.data` */
  readonly dataDir: string;
  /**
   * PostgreSQL store (`postgres://user:pass@host:port/db`) shared by every process on every
   * machine; unset: the SQLite file in {@link dataDir}. @defaultValue none
   */
  readonly databaseUrl: string | null;
  /** Connections each process keeps to PostgreSQL. @defaultValue `10` */
  readonly databasePoolSize: number;
  /** Redis URL for queues and caches. @defaultValue `redis://127.0.0.1:6380` */
  readonly redisUrl: string;
  /** Operator superuser key (`ADMIN_API_KEY`); empty disables it. */
  readonly adminApiKey: string;
  /** Secret accepted in `X-Shopify-Authorization` by create_api_only_user; empty disables that header. */
  readonly shopifySecretKey: string;
  /** Log level for pino. @defaultValue `info` */
  readonly logLevel: string;
  /** Most chunks accepted by one POST /api/chunk. @defaultValue `120` */
  readonly batchChunkLimit: number;
  /** Most groups accepted by one POST /api/chunk_group. @defaultValue `1000` */
  readonly batchGroupLimit: number;
  /** Largest JSON body accepted on any route, in bytes: the upper bound of every per-route limit. @defaultValue 134217728 (128 MiB) */
  readonly bodyLimitBytes: number;
  /**
   * Body limit of routes without a size of their own (searches, reads by ids, scroll...), in bytes.
   * @defaultValue 262144 (256 KiB: a must_not of 1000 ids is ~40 KB)
   */
  readonly defaultBodyLimitBytes: number;
  /**
   * Body allowance per chunk of a chunk write, in bytes: POST /api/chunk accepts batchChunkLimit
   * times this (plus 64 KiB), PUT /api/chunk once this (plus 64 KiB). @defaultValue 131072 (128 KiB)
   */
  readonly chunkBodyBytes: number;
  /** Organizations one user may belong to before POST /api/organization is refused (403). @defaultValue `10` */
  readonly maxOrganizationsPerUser: number;
  /** Organizations created before this date default to V1 responses. @defaultValue `2024-07-14` */
  readonly v2VersioningDateMs: number;
  /** How long shutdown waits for in-flight requests and jobs, in milliseconds. @defaultValue `10000` */
  readonly shutdownGraceMs: number;
  /** Deadline of one facade-to-core call, in milliseconds. @defaultValue `5000` */
  readonly coreDeadlineMs: number;
  /** Longest one statement of an analytics report may run before the report answers 504, in ms (see README). @defaultValue `30000` */
  readonly analyticsReportTimeoutMs: number;
  /** Shard worker threads of the core. @defaultValue the number of cores */
  readonly shardThreads: number;
  /** Shards of a dataset larger than {@link Config.inlineShardMaxChunks} (placed on threads round-robin). @defaultValue shardThreads */
  readonly shardsPerDataset: number;
  /**
   * Datasets of at most this many chunks have one shard, served in the core's own thread (no
   * thread hop: ~0.3 ms less per search); a dataset that grows past it is moved to
   * {@link Config.shardsPerDataset} shards on the shard threads in the background. 0: never inline.
   * @defaultValue `15000`
   */
  readonly inlineShardMaxChunks: number;
  /**
   * An inline dataset that indexes more words than this moves to the shard threads too: a few
   * very long chunks cost its snapshots, loads and applies (run on the core's event loop) what
   * many short ones do. @defaultValue `4000000`
   */
  readonly inlineShardMaxTokens: number;
  /**
   * An inline dataset three of whose queries within 2 s run longer than this many ms (each holds the core's event loop,
   * and every tenant's request with it) moves to the shard threads, which are shared by time.
   * 0: never for this reason. @defaultValue `5`
   */
  readonly inlineSlowQueryMs: number;
  /**
   * A dataset on the shard threads whose writes stopped this many ms ago gives back its index's
   * growth room (the layout a snapshot load builds: 38 MiB of 470 at 1M chunks, ~0.2 s of CPU
   * there), once per run of writes. Not an inline dataset: its copy would hold the event loop
   * that answers every request. 0: never (the room stays until a restart). @defaultValue `10000`
   */
  readonly compactIdleMs: number;
  /** Searches the core runs at once before answering 503 + Retry-After. @defaultValue `256` */
  readonly maxConcurrentSearches: number;
  /**
   * Scheduling priority (Linux nice, 0-19) of the threads that do bulk work: shard threads, the
   * HTTP process's store writer, and the whole job-worker process (embedding, analytics batches,
   * purges). Above 0 they yield the CPU to the event loops that answer requests, so one tenant's
   * heavy searches and writes, and background work, slow another's searches less. @defaultValue `10`
   */
  readonly threadNice: number;
  /**
   * Read caches of the HTTP process (and a separate core): this many bytes of chunk records, so
   * the rows of popular results are not read again, plus the dataset, organization and API-key
   * records every request reads. Exact: checked against the change log and SQLite's write
   * counters before every use. 0 turns them off. @defaultValue 64 MiB
   */
  readonly readCacheBytes: number;
  /**
   * How far V8 lets the old generation of a process that answers searches grow past what its
   * last mark-compact kept, in percent, before the next one; 0 leaves it to V8 (which chose
   * ~10% for the HTTP process, a mark-compact every ~1 s under load). @defaultValue 100
   */
  readonly heapGrowingPercent: number;
  /** Whether the HTTP process runs its store writes in a thread of their own (off its event loop). @defaultValue `true` */
  readonly storeWriteThread: boolean;
  /** Reads (searches, gets) one organization runs at once in an HTTP process; more wait in order. */
  readonly tenantReadConcurrency: number;
  /**
   * Writes one organization runs at once in an HTTP process while it is the only one with
   * requests there (with others: one); more wait in order. Two, so that one write's store
   * transaction (the writer thread) overlaps the previous one's indexing (the core): one at a
   * time, a client ingesting with two connections got ~4,500 chunks/s, the two stages taking turns
   * (bench/http-ingest.ts). @defaultValue 2
   */
  readonly tenantWriteConcurrency: number;
  /** QUARRY_TENANT_EVENT_CONCURRENCY: user-event and rating writes one organization runs at once in an HTTP process. */
  readonly tenantEventConcurrency: number;
  /** QUARRY_TENANT_ANSWER_CONCURRENCY: answers of chosen chunks (POST /api/chunk/generate) one organization runs at once in an HTTP process. */
  readonly tenantAnswerConcurrency: number;
  /** Requests of one organization and kind (read, write) that may wait; beyond it, 429. */
  readonly tenantQueue: number;
  /** Whether this job-worker process embeds chunks (off for a worker that should only purge). @defaultValue `true` */
  readonly embedJobs: boolean;
  /** First retry delay of a failed embedding job (doubling per attempt), in ms. @defaultValue `2000` */
  readonly embedBackoffMs: number;
  /** Worker threads of the embedded model in the job workers (each a core while embedding). @defaultValue the number of cores - 1 (at least 1), so one core is always left to search */
  readonly embedThreads: number;
  /**
   * The facade hosts the search core (engine, shard threads and the core's gRPC server for the job
   * workers and internal callers) and calls it in-process; `core/main.js` then exits at once and
   * run-all does not start it. Saves the gRPC hop (~0.6-0.7 ms) on every search. One facade only.
   * The default on one machine; `false` runs the core as its own process (the scale-out topology).
   * @defaultValue `true`
   */
  readonly coreInProcess: boolean;
  /**
   * Answer with a `Server-Timing` header: the total, and for searches the time of each stage
   * (middleware, access, parse, core, store, analytics, present). For benchmarks and debugging.
   * @defaultValue `false`
   */
  readonly serverTiming: boolean;
  /**
   * Largest `chunk_html`, `semantic_content` or `fulltext_content` of one chunk, in UTF-8 bytes;
   * a larger one is a 400 naming the field. Bounds the work one chunk costs every reload.
   * @defaultValue `1048576` (1 MiB)
   */
  readonly maxChunkTextBytes: number;
  /**
   * Days analytics records (searches, recommendations) are kept; the job workers delete older
   * ones every hour. 0 keeps them forever. @defaultValue `90`
   */
  readonly analyticsRetentionDays: number;
  /**
   * How long the job workers hold an analytics batch for others to store it with, in ms: a group
   * of batches is one transaction per kind of record, and shares the pages it writes. 0 stores
   * each batch as soon as it comes, unless others are already waiting. @defaultValue `250`
   */
  readonly analyticsGroupMs: number;
  /**
   * SQLite: the job workers write analytics batches from a thread of their own in Linux's
   * SCHED_IDLE class (nice 19 where that is not available), so that they only use a core nothing
   * else wants. Under a machine busy for long, batches wait in Redis. @defaultValue `true`
   */
  readonly analyticsIdle: boolean;
  /**
   * Answers one job-worker process generates at once (RAG jobs wait on the language model, so
   * many run together). @defaultValue `64`
   */
  readonly ragConcurrency: number;
  /**
   * How long a job worker's lock on a long job (embedding turn, file import turn, RAG answer)
   * lasts without renewal, in ms; it is renewed every half of it. A killed worker's job is taken
   * over (or, for an answer, failed) about this long plus a stall check (half of it, at most 5 s)
   * after the kill; too short, and a worker whose event loop stalls that long loses its job.
   * @defaultValue `10000`
   */
  readonly jobLockMs: number;
  /**
   * How often a job worker reports its event loop's longest delay, in ms: a window whose delay
   * passes 500 ms is logged as a warning ('event loop blocked'), others at debug.
   * @defaultValue `5000`
   */
  readonly loopMonitorMs: number;
  /**
   * Longest a RAG answer may take from its request to its last token, in ms (the reference's
   * 120 s for /api/chunk/generate and /api/message); past it the answer ends with an error.
   * @defaultValue `120000`
   */
  readonly ragDeadlineMs: number;
  /** Longest one request to a dataset's LLM_BASE_URL may take, in ms (each retry its own). @defaultValue `60000` */
  readonly llmTimeoutMs: number;
  /** Retries of a request to LLM_BASE_URL after a 429, a 5xx or a connection error, with backoff. @defaultValue `2` */
  readonly llmMaxRetries: number;
  /**
   * Whether the extractive answerer (datasets without LLM_BASE_URL) mixes USE-Lite sentence
   * vectors into its BM25 ranking of sentences. Off by default: on SciFact it cited a relevant
   * abstract no more often (77% against 79% lexical, bench/rag-extractive.ts) for ~1.5 s of the
   * job worker's CPU per answer. @defaultValue `false`
   */
  readonly ragSentenceVectors: boolean;
  /**
   * GGUF model the job workers answer with (`LLM_MODEL_PATH`) for datasets without LLM_BASE_URL,
   * through node-llama-cpp (`deploy/llama.sh install`); unset: the extractive answerer. @defaultValue none
   */
  readonly llmModelPath: string | null;
  /** CPU threads the job workers' GGUF model computes with (QUARRY_LLM_MODEL_THREADS). @defaultValue `1` */
  readonly llmModelThreads: number;
  /** Answers the GGUF model generates at once (QUARRY_LLM_MODEL_SEQUENCES); more wait in order. @defaultValue `1` */
  readonly llmModelSequences: number;
  /** Context of each of the GGUF model's answers, in tokens, at most its trained context (QUARRY_LLM_MODEL_CONTEXT). @defaultValue `8192` */
  readonly llmModelContext: number;
  /**
   * Base URL that presigned upload and download URLs of the embedded blob store point at (the
   * address clients reach the HTTP API by). @defaultValue `http://<httpHost>:<httpPort>`
   */
  readonly publicUrl: string;
  /**
   * HMAC key signing the embedded blob store's URLs; every HTTP process must share it. Unset: a
   * random key created once in `<dataDir>/blob-secret`. @defaultValue none
   */
  readonly blobSecret: string | null;
  /** Largest file accepted by an upload URL (CSV/JSONL) or document upload, in bytes. @defaultValue 10737418240 (10 GiB) */
  readonly fileMaxBytes: number;
  /** Largest document accepted by `POST /api/file` (decoded bytes; its base64 body must also fit QUARRY_BODY_LIMIT_BYTES). @defaultValue 67108864 (64 MiB) */
  readonly documentMaxBytes: number;
  /** Seconds a presigned upload URL stays valid (the reference's 24 h). @defaultValue `86400` */
  readonly uploadUrlTtlSeconds: number;
  /** Seconds a file's download URL stays valid. @defaultValue `3600` */
  readonly downloadUrlTtlSeconds: number;
  /** Rows committed per batch of a CSV/JSONL import (one store transaction and one cursor each). @defaultValue `1000` */
  readonly importBatchRows: number;
  /** Target size of a document's chunks, in characters. @defaultValue `1500` */
  readonly documentChunkChars: number;
  /** Characters shared by consecutive chunks of a document. @defaultValue `150` */
  readonly documentOverlapChars: number;
  /** S3-compatible endpoint of the blob store (`S3_ENDPOINT`); unset: the embedded store under `<dataDir>/blobs`. @defaultValue none */
  readonly s3Endpoint: string | null;
  /** Bucket of the S3 blob store (`S3_BUCKET`). @defaultValue `quarry` */
  readonly s3Bucket: string;
  /** Region the S3 requests are signed for (`S3_REGION`). @defaultValue `us-east-1` */
  readonly s3Region: string;
  /** Access key id of the S3 store (`S3_ACCESS_KEY`). @defaultValue empty */
  readonly s3AccessKey: string;
  /** Secret key of the S3 store (`S3_SECRET_KEY`). @defaultValue empty */
  readonly s3SecretKey: string;
  /** Path-style URLs (`endpoint/bucket/key`), as MinIO and most self-hosted stores want (`S3_FORCE_PATH_STYLE`). @defaultValue `true` */
  readonly s3ForcePathStyle: boolean;
}

function boolVar(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new Error(`${name} must be true or false, got "${raw}"`);
}

type Env = Record<string, string | undefined>;

function intVar(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

/** QUARRY_DATABASE_URL, checked for the one scheme the store speaks. */
function databaseUrlVar(env: Env): string | null {
  const raw = env.QUARRY_DATABASE_URL?.trim();
  if (!raw) return null;
  if (!/^postgres(ql)?:\/\//.test(raw)) {
    throw new Error(`QUARRY_DATABASE_URL must be a postgres:// URL (unset it for the embedded SQLite store), got "${raw.replace(/:[^:@/]*@/, ':***@')}"`);
  }
  return raw;
}

function dateVar(env: Env, name: string, fallback: string): number {
  const raw = env[name] || fallback;
  // parseTimestamp rejects impossible dates (2024-02-30) that Date.parse would roll forward.
  const value = parseTimestamp(raw);
  if (value === undefined) throw new Error(`${name} must be a date (YYYY-MM-DD), got "${raw}"`);
  return value;
}

/** Parses configuration from an environment (defaults to `process.env`) and freezes it. */
export function loadConfig(env: Env = process.env): Config {
  const grpcHost = env.QUARRY_GRPC_HOST || '127.0.0.1';
  const shardThreads = intVar(env, 'QUARRY_SHARD_THREADS', os.availableParallelism(), 1, 256);
  const grpcPort = intVar(env, 'QUARRY_GRPC_PORT', 50051, 0, 65535);
  return Object.freeze({
    httpHost: env.QUARRY_HTTP_HOST || '127.0.0.1',
    httpPort: intVar(env, 'QUARRY_HTTP_PORT', 8090, 0, 65535),
    grpcHost,
    grpcPort,
    coreAddress: env.QUARRY_CORE_ADDRESS || `${grpcHost}:${grpcPort}`,
    coreToken: env.QUARRY_CORE_TOKEN || null,
    dataDir: path.resolve(env.QUARRY_DATA_DIR || '.data'),
    databaseUrl: databaseUrlVar(env),
    databasePoolSize: intVar(env, 'QUARRY_DATABASE_POOL_SIZE', 10, 1, 1000),
    redisUrl: env.QUARRY_REDIS_URL || 'redis://127.0.0.1:6380',
    adminApiKey: env.ADMIN_API_KEY ?? env.QUARRY_ADMIN_API_KEY ?? '',
    shopifySecretKey: env.QUARRY_SHOPIFY_SECRET_KEY ?? '',
    logLevel: env.QUARRY_LOG_LEVEL || 'info',
    batchChunkLimit: intVar(env, 'QUARRY_BATCH_CHUNK_LIMIT', 120, 1, 100_000),
    batchGroupLimit: intVar(env, 'QUARRY_BATCH_GROUP_LIMIT', 1000, 1, 100_000),
    bodyLimitBytes: intVar(env, 'QUARRY_BODY_LIMIT_BYTES', 128 * 1024 * 1024, 1024, 2 ** 31 - 1),
    defaultBodyLimitBytes: intVar(env, 'QUARRY_DEFAULT_BODY_LIMIT_BYTES', 256 * 1024, 1024, 2 ** 31 - 1),
    chunkBodyBytes: intVar(env, 'QUARRY_CHUNK_BODY_BYTES', 128 * 1024, 1024, 2 ** 31 - 1),
    maxOrganizationsPerUser: intVar(env, 'QUARRY_MAX_ORGANIZATIONS_PER_USER', 10, 1, 1_000_000),
    v2VersioningDateMs: dateVar(env, 'QUARRY_V2_VERSIONING_DATE', '2024-07-14'),
    shutdownGraceMs: intVar(env, 'QUARRY_SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    coreDeadlineMs: intVar(env, 'QUARRY_CORE_DEADLINE_MS', 5_000, 10, 600_000),
    analyticsReportTimeoutMs: intVar(env, 'QUARRY_ANALYTICS_REPORT_TIMEOUT_MS', 30_000, 1, 3_600_000),
    shardThreads,
    shardsPerDataset: intVar(env, 'QUARRY_SHARDS_PER_DATASET', shardThreads, 1, 1024),
    inlineShardMaxChunks: intVar(env, 'QUARRY_INLINE_SHARD_MAX_CHUNKS', 15_000, 0, 10_000_000),
    inlineShardMaxTokens: intVar(env, 'QUARRY_INLINE_SHARD_MAX_TOKENS', 4_000_000, 0, 2 ** 31 - 1),
    inlineSlowQueryMs: intVar(env, 'QUARRY_INLINE_SLOW_QUERY_MS', 5, 0, 600_000),
    compactIdleMs: intVar(env, 'QUARRY_COMPACT_IDLE_MS', 10_000, 0, 86_400_000),
    maxConcurrentSearches: intVar(env, 'QUARRY_MAX_CONCURRENT_SEARCHES', 256, 1, 1_000_000),
    threadNice: intVar(env, 'QUARRY_THREAD_NICE', 10, 0, 19),
    storeWriteThread: boolVar(env, 'QUARRY_STORE_WRITE_THREAD', true),
    readCacheBytes: intVar(env, 'QUARRY_READ_CACHE_MB', 64, 0, 1_000_000) * 1024 * 1024,
    heapGrowingPercent: intVar(env, 'QUARRY_HEAP_GROWING_PERCENT', 100, 0, 1000),
    tenantReadConcurrency: intVar(env, 'QUARRY_TENANT_READ_CONCURRENCY', Math.max(2, os.availableParallelism()), 1, 100_000),
    tenantWriteConcurrency: intVar(env, 'QUARRY_TENANT_WRITE_CONCURRENCY', 2, 1, 100_000),
    tenantEventConcurrency: intVar(env, 'QUARRY_TENANT_EVENT_CONCURRENCY', 256, 1, 100_000),
    tenantAnswerConcurrency: intVar(env, 'QUARRY_TENANT_ANSWER_CONCURRENCY', 256, 1, 100_000),
    tenantQueue: intVar(env, 'QUARRY_TENANT_QUEUE', 256, 0, 1_000_000),
    embedJobs: boolVar(env, 'QUARRY_EMBED_JOBS', true),
    embedBackoffMs: intVar(env, 'QUARRY_EMBED_BACKOFF_MS', 2000, 1, 3_600_000),
    embedThreads: intVar(env, 'QUARRY_EMBED_THREADS', Math.max(1, os.availableParallelism() - 1), 1, 256),
    coreInProcess: boolVar(env, 'QUARRY_CORE_IN_PROCESS', true),
    serverTiming: boolVar(env, 'QUARRY_SERVER_TIMING', false),
    maxChunkTextBytes: intVar(env, 'QUARRY_MAX_CHUNK_TEXT_BYTES', LIMITS.chunkTextBytes, 1, 2 ** 31 - 1),
    analyticsRetentionDays: intVar(env, 'QUARRY_ANALYTICS_RETENTION_DAYS', 90, 0, 36_500),
    analyticsGroupMs: intVar(env, 'QUARRY_ANALYTICS_GROUP_MS', 250, 0, 60_000),
    analyticsIdle: boolVar(env, 'QUARRY_ANALYTICS_IDLE', true),
    ragConcurrency: intVar(env, 'QUARRY_RAG_CONCURRENCY', 64, 1, 10_000),
    jobLockMs: intVar(env, 'QUARRY_JOB_LOCK_MS', 10_000, 1_000, 600_000),
    loopMonitorMs: intVar(env, 'QUARRY_LOOP_MONITOR_MS', 5000, 100, 600_000),
    ragDeadlineMs: intVar(env, 'QUARRY_RAG_DEADLINE_MS', 120_000, 100, 3_600_000),
    llmTimeoutMs: intVar(env, 'QUARRY_LLM_TIMEOUT_MS', 60_000, 100, 3_600_000),
    llmMaxRetries: intVar(env, 'QUARRY_LLM_MAX_RETRIES', 2, 0, 10),
    ragSentenceVectors: boolVar(env, 'QUARRY_RAG_SENTENCE_VECTORS', false),
    llmModelPath: env.LLM_MODEL_PATH?.trim() ? path.resolve(env.LLM_MODEL_PATH.trim()) : null,
    llmModelThreads: intVar(env, 'QUARRY_LLM_MODEL_THREADS', 1, 1, 256),
    llmModelSequences: intVar(env, 'QUARRY_LLM_MODEL_SEQUENCES', 1, 1, 64),
    llmModelContext: intVar(env, 'QUARRY_LLM_MODEL_CONTEXT', 8192, 256, 1_048_576),
    publicUrl: (env.QUARRY_PUBLIC_URL || `http://${env.QUARRY_HTTP_HOST || '127.0.0.1'}:${intVar(env, 'QUARRY_HTTP_PORT', 8090, 0, 65535)}`).replace(/\/+$/, ''),
    blobSecret: env.QUARRY_BLOB_SECRET || null,
    fileMaxBytes: intVar(env, 'QUARRY_FILE_MAX_BYTES', 10 * 1024 ** 3, 1, Number.MAX_SAFE_INTEGER),
    documentMaxBytes: intVar(env, 'QUARRY_DOCUMENT_MAX_BYTES', 64 * 1024 ** 2, 1, 2 ** 31 - 1),
    uploadUrlTtlSeconds: intVar(env, 'QUARRY_UPLOAD_URL_TTL_S', 86_400, 1, 7 * 86_400),
    downloadUrlTtlSeconds: intVar(env, 'QUARRY_DOWNLOAD_URL_TTL_S', 3_600, 1, 7 * 86_400),
    importBatchRows: intVar(env, 'QUARRY_IMPORT_BATCH_ROWS', 1000, 1, 100_000),
    documentChunkChars: intVar(env, 'QUARRY_DOCUMENT_CHUNK_CHARS', 1500, 50, 1_000_000),
    documentOverlapChars: intVar(env, 'QUARRY_DOCUMENT_OVERLAP_CHARS', 150, 0, 500_000),
    s3Endpoint: env.S3_ENDPOINT?.trim() || null,
    s3Bucket: env.S3_BUCKET || 'quarry',
    s3Region: env.S3_REGION || 'us-east-1',
    s3AccessKey: env.S3_ACCESS_KEY ?? '',
    s3SecretKey: env.S3_SECRET_KEY ?? '',
    s3ForcePathStyle: boolVar(env, 'S3_FORCE_PATH_STYLE', true),
  });
}
