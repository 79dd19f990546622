/** Enqueues background jobs (BullMQ on Redis) for the facade. */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { QuarryError } from '../domain/errors.js';
import { BULK_DELETE_ATTEMPTS, EMBED_ATTEMPTS, FILE_IMPORT_ATTEMPTS, Jobs, Queues, embedJobId, type BulkDeleteJob, type EmbedJob, type PurgeJob } from '../domain/queues.js';
import { fileImportJobId, type FileImportJob } from '../domain/files.js';
import { ragClient, type RagClient } from './rag-client.js';

/** The jobs the facade can ask for. */
export interface JobsClient {
  /** Purges a flagged organization and everything it owns. */
  purgeOrganization(id: string): Promise<void>;
  /** Purges a flagged dataset. */
  purgeDataset(id: string): Promise<void>;
  /** Asks the job workers to embed the dataset's pending chunks. */
  embedDataset(datasetId: string): Promise<void>;
  /** Asks the job workers to delete the chunks matching a filter (503 when Redis does not take the job). */
  bulkDeleteChunks(job: BulkDeleteJob): Promise<void>;
  /**
   * Enqueues the import of a file, once per file (a repeat is a no-op); with `delayMs` it first
   * waits (an upload not yet arrived). 503 when Redis does not take the job.
   */
  importFile(job: FileImportJob, delayMs?: number): Promise<void>;
  /** Starts a file's import now if it is waiting on a delay (its upload just completed); false when it was not waiting. */
  startFileImport(fileId: string): Promise<boolean>;
  /** RAG answers: the generation job and its stream of tokens (blocking readers connect on first use). */
  readonly rag: RagClient;
  /** Resolves when Redis answers PING. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Connects to Redis at `url`. Failures to enqueue are 503s; the deletion flag itself is already durable. */
export function connectJobs(url: string, options: { embedBackoffMs?: number } = {}): JobsClient {
  // Fail fast instead of queueing commands while Redis is away: requests must not hang.
  const redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false });
  redis.on('error', () => {
    /* reported through ping() and enqueue failures */
  });
  const maintenance = new Queue<PurgeJob>(Queues.maintenance, { connection: redis });
  maintenance.on('error', () => {});
  const embed = new Queue<EmbedJob>(Queues.embed, { connection: redis });
  embed.on('error', () => {});
  const bulkDelete = new Queue<BulkDeleteJob>(Queues.bulkDelete, { connection: redis });
  bulkDelete.on('error', () => {});
  const fileImport = new Queue<FileImportJob>(Queues.fileImport, { connection: redis });
  fileImport.on('error', () => {});
  const rag = ragClient(url);
  const add = async (name: string, id: string): Promise<void> => {
    try {
      // jobId makes a repeated request idempotent: one purge per resource (BullMQ refuses ':' in ids).
      await maintenance.add(name, { id }, { jobId: `${name}-${id}`, attempts: 10, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: true });
    } catch (err) {
      throw new QuarryError('unavailable', `could not enqueue ${name} for ${id}: ${(err as Error).message}`, { cause: err, retryAfterSeconds: 5 });
    }
  };
  return {
    purgeOrganization: (id) => add(Jobs.purgeOrganization, id),
    purgeDataset: (id) => add(Jobs.purgeDataset, id),
    async embedDataset(datasetId) {
      try {
        await embed.add(Jobs.embedDataset, { datasetId }, {
          jobId: embedJobId(datasetId),
          attempts: EMBED_ATTEMPTS,
          backoff: { type: 'exponential', delay: options.embedBackoffMs ?? 2000 },
          removeOnComplete: true,
          // The dead letter is the dataset event the worker records on the last failure; a failed job
          // left in Redis would block every later job with the same id.
          removeOnFail: true,
        });
      } catch (err) {
        throw new QuarryError('unavailable', `could not enqueue embedding for dataset ${datasetId}: ${(err as Error).message}`, { cause: err, retryAfterSeconds: 5 });
      }
    },
    async bulkDeleteChunks(job) {
      try {
        await bulkDelete.add(Jobs.bulkDeleteChunks, job, { attempts: BULK_DELETE_ATTEMPTS, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: true });
      } catch (err) {
        throw new QuarryError('unavailable', `could not enqueue the bulk delete for dataset ${job.datasetId}: ${(err as Error).message}`, { cause: err, retryAfterSeconds: 5 });
      }
    },
    async importFile(job, delayMs = 0) {
      try {
        await fileImport.add(Jobs.importFile, job, {
          jobId: fileImportJobId(job.fileId),
          delay: delayMs,
          // Each attempt resumes at the file's committed cursor, so a retry never repeats a row.
          attempts: FILE_IMPORT_ATTEMPTS,
          backoff: { type: 'exponential', delay: 1000 },
          removeOnComplete: true,
          removeOnFail: true,
        });
      } catch (err) {
        throw new QuarryError('unavailable', `could not enqueue the import of file ${job.fileId}: ${(err as Error).message}`, { cause: err, retryAfterSeconds: 5 });
      }
    },
    async startFileImport(fileId) {
      const job = await fileImport.getJob(fileImportJobId(fileId));
      if (!job || !(await job.isDelayed())) return false;
      await job.promote();
      return true;
    },
    rag,
    async ping() {
      const reply = await redis.ping();
      if (reply !== 'PONG') throw new Error(`unexpected PING reply ${reply}`);
    },
    async close() {
      await maintenance.close().catch(() => {});
      await embed.close().catch(() => {});
      await bulkDelete.close().catch(() => {});
      await fileImport.close().catch(() => {});
      await rag.close();
      redis.disconnect();
    },
  };
}
