/**
 * File import jobs: one per file. The job waits for the upload (polling the blob store with a
 * growing delay, or started at once when the embedded store saw the upload complete), then reads
 * the blob as a stream from the file's committed cursor, turns each row (or document chunk) into a
 * chunk, validated as `POST /api/chunk` validates one, and writes batches through the same store
 * path. Each batch's chunks and the cursor after it commit in one transaction: a worker killed
 * mid-file resumes there and finds none of the later rows stored, so no row is lost, duplicated,
 * or counted twice.
 *
 * Fairness: a job imports for one turn (batches for about {@link ImportTurnOptions.turnMs}) and,
 * when rows are left, goes back to the tail of the queue behind every other file's job, as
 * embedding does per dataset (embed.ts). A small file started during a million-row import waits
 * at most one turn of each running import, not the whole of them. The next turn reads on from the
 * committed byte cursor (the blob opened at that offset, the file never read again from its start).
 */
import { DelayedError, type Job, type Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { BlobStore } from '../../core/blob/blob-store.js';
import type { CoreClient } from '../../core/client/core-client.js';
import type { JobsClient } from '../../core/client/jobs-client.js';
import type { Config } from '../../core/config.js';
import { embedsDense, spladeSpec } from '../../core/domain/dataset-config.js';
import { QuarryError } from '../../core/domain/errors.js';
import { FILE_EVENTS, type FileImportJob, type FileRecord, type ImportCursor, type RowError, type RowImportOptions } from '../../core/domain/files.js';
import { FILE_IMPORT_ATTEMPTS, Queues } from '../../core/domain/queues.js';
import type { DatasetRecord } from '../../core/domain/tenancy.js';
import { documentSections, type DocumentType } from '../../core/files/document-text.js';
import { documentChunkHtml } from '../../core/files/document-chunk-html.js';
import { FileFormatError, readRows } from '../../core/files/row-reader.js';
import { rowToChunk, type RowChunk, type RowFile } from '../../core/files/row-to-chunk.js';
import { splitDocument, type DocumentChunk } from '../../core/files/split-document.js';
import { parseCreateChunks } from '../../facade/schemas/chunk.js';
import type { Store } from '../../store/repository.js';
import { jobWorker, lockOptions } from './job-worker.js';
import { writeBatch, type PendingRow } from './import-batch.js';

/** What the import needs. */
export interface FileImportDeps {
  readonly store: Store;
  readonly core: CoreClient;
  readonly blobs: BlobStore;
  readonly jobs: Pick<JobsClient, 'embedDataset'>;
  readonly config: Pick<Config, 'fileMaxBytes' | 'uploadUrlTtlSeconds' | 'importBatchRows' | 'maxChunkTextBytes' | 'documentChunkChars' | 'documentOverlapChars' | 'jobLockMs'>;
  readonly logger: Logger;
}

/** Longest wait between two looks for an upload that has not arrived. */
const MAX_UPLOAD_POLL_MS = 60_000;
/** Shortest wait between two looks. */
const MIN_UPLOAD_POLL_MS = 1_000;

/** How the job ended. */
export type ImportOutcome = 'done' | 'failed' | 'gone';

/** Options of {@link fileImportProcessor}. */
export interface ImportTurnOptions {
  /**
   * How long one job imports batches before it yields its place to the other files' jobs, in ms
   * (a batch is never cut: a turn is at least one batch). Each turn costs a blob open at the
   * cursor and a trip through the queue, a few ms: at 1 s an import keeps its speed.
   * @defaultValue `1000`
   */
  readonly turnMs?: number;
  /**
   * Characters of split documents kept between turns (a document is read and split whole; its
   * next turn reuses the split instead of parsing the file again). A document whose split does
   * not fit imports in one turn.
   * @defaultValue `64 Mi`
   */
  readonly splitCacheChars?: number;
}

/** Where a run of the job stopped: the file's rows (it is read to its end), 'more' (its turn is over) or 'gone'. */
type RunEnd = number | 'more' | 'gone';

/**
 * Keeps the core applying the dataset's change log while batches keep coming, one apply in flight
 * at a time (each applies everything committed before it), so the import does not wait on the
 * index between batches; only `flush` at the end waits, so that a file is searchable once `done`.
 */
function applier(core: CoreClient, datasetId: string, logger: Logger) {
  let running: Promise<void> | null = null;
  let again = false;
  const run = (): Promise<void> =>
    core.apply(datasetId).then(
      () => undefined,
      (err: unknown) => {
        // The change log is durable: a core that is away replays it when it returns.
        logger.warn({ dataset: datasetId, err: (err as Error).message }, 'apply after an import batch failed');
      },
    );
  const kick = (): void => {
    if (running) {
      again = true;
      return;
    }
    running = run().finally(() => {
      running = null;
      if (again) {
        again = false;
        kick();
      }
    });
  };
  return {
    kick,
    /** Waits until everything committed so far is applied. */
    async flush(): Promise<void> {
      while (running) await running;
      await run();
    },
  };
}

/** A document chunk's body as a validated chunk input (the body check of `POST /api/chunk`), in the file's group. */
function toInput(chunk: Record<string, unknown>, groupId: string, options: RowImportOptions, maxTextBytes: number): PendingRow['input'] {
  const input = parseCreateChunks(chunk, 1, maxTextBytes).inputs[0]!;
  // The file's own group by id, not tracking id: a batch written after the group was deleted
  // (DELETE /api/file with delete_chunks) fails whole instead of making the group again.
  const others = (input.groupTrackingIds ?? []).filter((t) => t !== options.groupTrackingId);
  return { ...input, groupIds: [groupId, ...(input.groupIds ?? [])], groupTrackingIds: others };
}

/** Why a row's chunk was refused: the validation message. */
function reasonOf(err: unknown): string {
  if (err instanceof QuarryError) return err.message;
  throw err;
}

/** Waits for the upload: the job is delayed and looks again later, or the file fails when the URL expired. */
async function awaitUpload(deps: FileImportDeps, job: Job<FileImportJob>, token: string | undefined, file: FileRecord): Promise<FileRecord | 'failed' | 'gone'> {
  const { store, blobs, config } = deps;
  const size = await blobs.stat(file.blobKey);
  if (size === undefined) {
    const age = Date.now() - file.createdAt;
    if (age > config.uploadUrlTtlSeconds * 1000 + MIN_UPLOAD_POLL_MS) {
      return fail(deps, file, `no upload arrived before the upload URL expired (${config.uploadUrlTtlSeconds} s)`, 'awaiting_upload');
    }
    const wait = Math.min(MAX_UPLOAD_POLL_MS, Math.max(MIN_UPLOAD_POLL_MS, age / 20));
    await job.moveToDelayed(Date.now() + wait, token);
    throw new DelayedError();
  }
  if (size > config.fileMaxBytes) {
    return fail(deps, file, `the upload is ${size} bytes, over the limit of ${config.fileMaxBytes} bytes (QUARRY_FILE_MAX_BYTES)`, 'awaiting_upload');
  }
  const started = await store.files.transition(file.id, ['awaiting_upload'], 'processing', { size });
  return started ?? 'gone';
}

/** Marks the file failed (from its current status) and records the dataset event. */
async function fail(deps: FileImportDeps, file: FileRecord, failure: string, from: FileRecord['status']): Promise<'failed' | 'gone'> {
  // The event first: a client that sees the status has the event to read too.
  await deps.store.events.add(file.datasetId, FILE_EVENTS.failed, { file_id: file.id, file_name: file.fileName, failure });
  const done = await deps.store.files.transition(file.id, [from], 'failed', { failure });
  if (!done) return 'gone';
  deps.logger.warn({ file: file.id, dataset: file.datasetId, failure }, 'file import failed');
  return 'failed';
}

/** The file's group: made once (named after the file, with its tracking id), or an existing group with that tracking id. */
async function ensureGroup(deps: FileImportDeps, file: FileRecord, options: RowImportOptions): Promise<FileRecord | 'gone'> {
  if (file.groupId !== null) return file;
  const { store } = deps;
  const existing = await store.groups.getByTrackingId(file.datasetId, options.groupTrackingId);
  const group =
    existing ??
    (
      await store.groups.createMany(
        file.datasetId,
        [{ name: file.fileName, description: file.description, trackingId: options.groupTrackingId, metadata: file.metadata, tagSet: file.tagSet, fileId: file.id }],
        false,
      )
    )[0]!;
  const updated = await store.files.transition(file.id, ['processing'], 'processing', { groupId: group.id });
  if (!updated) {
    // Deleted meanwhile: a group made for it goes too.
    if (!existing) await store.groups.delete(file.datasetId, group.id, true);
    return 'gone';
  }
  return updated;
}

/** A batch being filled: rows to write and the row errors met while reading. */
interface Batch {
  rows: PendingRow[];
  errors: RowError[];
  count: number;
}

/** Writes a batch with the cursor after it, in one transaction; false when the file is gone (deleted). */
async function commit(deps: FileImportDeps, file: FileRecord, batch: Batch, cursor: ImportCursor, bytes: number, upsert: boolean): Promise<boolean> {
  const outcome = await writeBatch(deps.store, file, batch.rows, upsert, { cursor, rowsDone: batch.count, bytesDone: bytes, errors: batch.errors });
  return outcome !== undefined;
}

/**
 * Reads the CSV/JSONL from the committed cursor and writes it in batches until the end of the
 * file or of the turn (`until`, epoch ms; checked after each committed batch).
 */
async function importRows(deps: FileImportDeps, file: FileRecord, options: RowImportOptions, onBatch: () => void, until: number): Promise<RunEnd> {
  const { blobs, config } = deps;
  const kind = file.kind === 'csv' ? 'csv' : 'jsonl';
  let cursor: ImportCursor = file.cursor ?? { byteOffset: 0, rowIndex: 0, header: null };
  let committedBytes = cursor.byteOffset;
  let batch: Batch = { rows: [], errors: [], count: 0 };
  const rowFile: RowFile = { options, metadata: file.metadata, groupId: file.groupId!, maxTextBytes: config.maxChunkTextBytes };
  const flush = async (): Promise<boolean> => {
    if (batch.count === 0) return true;
    const ok = await commit(deps, file, batch, cursor, cursor.byteOffset - committedBytes, options.upsertByTrackingId);
    committedBytes = cursor.byteOffset;
    batch = { rows: [], errors: [], count: 0 };
    onBatch();
    return ok;
  };
  try {
    for await (const r of readRows(kind, (start) => blobs.read(file.blobKey, start), file.cursor)) {
      batch.count++;
      cursor = r.cursor;
      if (r.error !== null || r.value === null) batch.errors.push({ row: r.row, reason: r.error ?? 'unreadable row' });
      else addRow(batch, r.row, rowToChunk(r.value, r.rowIndex, rowFile));
      if (batch.count >= config.importBatchRows) {
        if (!(await flush())) return 'gone';
        // Leaving the loop ends the read: the generator's return closes the blob stream.
        if (Date.now() >= until) return 'more';
      }
    }
  } catch (err) {
    // A whole-file problem met mid-file (an unclosed quote): the rows before it are kept and counted.
    if (err instanceof FileFormatError && !(await flush())) return 'gone';
    throw err;
  }
  if (!(await flush())) return 'gone';
  return cursor.rowIndex;
}

/** Adds a mapped row to the batch, or its reason to the batch's errors. */
function addRow(batch: Batch, row: number, mapped: RowChunk): void {
  if ('error' in mapped) batch.errors.push({ row, reason: mapped.error });
  else batch.rows.push({ row, input: mapped.input });
}

/** Reads and splits a document (deterministic: a resumed job finds the same chunks at the same indexes). */
async function splitFile(deps: FileImportDeps, file: FileRecord): Promise<DocumentChunk[]> {
  const { blobs, config } = deps;
  const stream = await blobs.read(file.blobKey);
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  const sections = await documentSections(Buffer.concat(parts), file.contentType as DocumentType);
  const chunks = splitDocument(sections, file.splitOptions ?? { targetChars: config.documentChunkChars, overlapChars: config.documentOverlapChars });
  if (chunks.length === 0) throw new FileFormatError('the document has no text to index (an empty file, or a scanned PDF of images only)');
  return chunks;
}

/**
 * Split documents kept between a job's turns, oldest dropped first past `maxChars` characters of
 * text. Keyed by file id and size: a file's bytes never change once uploaded.
 */
class SplitCache {
  private readonly entries = new Map<string, { chunks: DocumentChunk[]; chars: number }>();
  private chars = 0;

  constructor(private readonly maxChars: number) {}

  private static key(file: FileRecord): string {
    return `${file.id}/${file.size}`;
  }

  get(file: FileRecord): DocumentChunk[] | undefined {
    return this.entries.get(SplitCache.key(file))?.chunks;
  }

  /** Keeps the split; false when it is too big to keep (the document then runs in one turn). */
  set(file: FileRecord, chunks: DocumentChunk[]): boolean {
    let chars = 0;
    for (const c of chunks) chars += c.text.length;
    if (chars > this.maxChars) return false;
    this.delete(file);
    for (const [key, entry] of this.entries) {
      if (this.chars + chars <= this.maxChars) break;
      this.entries.delete(key);
      this.chars -= entry.chars;
    }
    this.entries.set(SplitCache.key(file), { chunks, chars });
    this.chars += chars;
    return true;
  }

  delete(file: FileRecord): void {
    const key = SplitCache.key(file);
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.chars -= entry.chars;
  }
}

/**
 * Writes the document's chunks in batches from the committed chunk index until the end or the
 * turn's end (`until`); the split comes from `cache` after the first turn.
 */
async function importDocument(deps: FileImportDeps, file: FileRecord, options: RowImportOptions, onBatch: () => void, until: number, cache: SplitCache): Promise<RunEnd> {
  const { config } = deps;
  let chunks = cache.get(file);
  let turns = true;
  if (!chunks) {
    chunks = await splitFile(deps, file);
    turns = cache.set(file, chunks);
  }
  let done = file.cursor?.rowIndex ?? 0;
  while (done < chunks.length) {
    const end = Math.min(chunks.length, done + config.importBatchRows);
    const batch: Batch = { rows: [], errors: [], count: end - done };
    for (let i = done; i < end; i++) {
      const c = chunks[i]!;
      const body: Record<string, unknown> = {
        chunk_html: documentChunkHtml(c),
        tracking_id: `${options.groupTrackingId}|${i}`,
        tag_set: [...options.tagSet],
        link: options.link,
        metadata: { ...(isObject(file.metadata) ? file.metadata : {}), file_name: file.fileName, headings: c.headings, chunk_index: i },
        ...(options.timeStamp !== null ? { time_stamp: new Date(options.timeStamp).toISOString() } : {}),
      };
      try {
        batch.rows.push({ row: i + 1, input: toInput(body, file.groupId!, options, config.maxChunkTextBytes) });
      } catch (err) {
        batch.errors.push({ row: i + 1, reason: reasonOf(err) });
      }
    }
    // The whole document was read to split it: its bytes count with the last batch.
    const bytes = end === chunks.length ? file.size : 0;
    if (!(await commit(deps, file, batch, { byteOffset: 0, rowIndex: end, header: null }, bytes, true))) {
      cache.delete(file);
      return 'gone';
    }
    onBatch();
    done = end;
    // After a batch, never before: every turn makes progress, even one that spent itself on the split.
    if (turns && done < chunks.length && Date.now() >= until) return 'more';
  }
  cache.delete(file);
  return chunks.length;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Asks the job workers to embed the dataset's new chunks when its configuration wants vectors. */
async function embedLater(deps: FileImportDeps, dataset: DatasetRecord): Promise<void> {
  const cfg = dataset.serverConfiguration;
  if (!embedsDense(cfg) && spladeSpec(cfg) === null) return;
  // The workers' 15 s sweep enqueues pending chunks anyway: a refused enqueue only delays them.
  await deps.jobs.embedDataset(dataset.id).catch((err: unknown) => deps.logger.warn({ dataset: dataset.id, err: (err as Error).message }, 'embed enqueue after import failed'));
}

/** Builds the processor of the file import queue. */
export function fileImportProcessor(deps: FileImportDeps, turn: ImportTurnOptions = {}) {
  const turnMs = turn.turnMs ?? 1000;
  const splits = new SplitCache(turn.splitCacheChars ?? 64 * 1024 * 1024);
  return async (job: Job<FileImportJob>, token?: string): Promise<{ outcome: ImportOutcome }> => {
    const { store, logger } = deps;
    // Without a token (a direct call, not a worker's) there is no queue to go back to: one turn.
    const until = token === undefined ? Infinity : Date.now() + turnMs;
    let file = await store.files.getById(job.data.fileId);
    if (!file || file.status === 'done' || file.status === 'failed') return { outcome: 'gone' };
    const dataset = await store.datasets.get(file.datasetId);
    if (!dataset) return { outcome: 'gone' };
    const fresh = file.status !== 'processing';
    if (file.status === 'awaiting_upload') {
      const waited = await awaitUpload(deps, job, token, file);
      if (typeof waited === 'string') return { outcome: waited };
      file = waited;
    } else if (file.status === 'queued') {
      const started = await store.files.transition(file.id, ['queued'], 'processing');
      if (!started) return { outcome: 'gone' };
      file = started;
    }
    if (fresh) await store.events.add(file.datasetId, FILE_EVENTS.started, { file_id: file.id, file_name: file.fileName, size: file.size });
    const options = file.importOptions;
    if (!options) return { outcome: await fail(deps, file, 'the file has no import options', 'processing') };
    const grouped = await ensureGroup(deps, file, options);
    if (grouped === 'gone') return { outcome: 'gone' };
    file = grouped;
    const apply = applier(deps.core, file.datasetId, logger);
    let total: RunEnd;
    try {
      total =
        file.kind === 'document'
          ? await importDocument(deps, file, options, apply.kick, until, splits)
          : await importRows(deps, file, options, apply.kick, until);
    } catch (err) {
      splits.delete(file);
      if (err instanceof FileFormatError || (err instanceof QuarryError && err.code === 'bad_request')) {
        await apply.flush();
        return { outcome: await fail(deps, file, err.message, 'processing') };
      }
      throw err;
    }
    if (total === 'more') {
      // Every batch so far is committed with its cursor; the apply kicked last goes on by itself
      // (the core applies in the background), so the next file's turn starts at once. Back to
      // the tail of the queue (a delay of 0 is promoted behind the jobs already waiting);
      // moveToDelayed skips the attempt: a turn is not a failed attempt.
      await job.moveToDelayed(Date.now(), token);
      throw new DelayedError();
    }
    await apply.flush();
    if (total === 'gone') return { outcome: 'gone' };
    // Every batch is committed, so the counts are final; the event goes first, so a client that
    // sees the status has the event to read too.
    const counted = await store.files.getById(file.id);
    if (!counted || counted.status !== 'processing') return { outcome: 'gone' };
    await store.events.add(file.datasetId, FILE_EVENTS.finished, {
      file_id: file.id,
      file_name: file.fileName,
      rows: total,
      imported: counted.rowsImported,
      skipped: counted.rowsSkipped,
      errors: counted.errorCount,
    });
    const finished = await store.files.transition(file.id, ['processing'], 'done', { rowsTotal: total });
    if (!finished) return { outcome: 'gone' };
    logger.info({ file: file.id, dataset: file.datasetId, rows: total, errors: finished.errorCount }, 'file import done');
    await embedLater(deps, dataset);
    return { outcome: 'done' };
  };
}

/** Starts the worker of the file import queue on `connection` (which must have maxRetriesPerRequest null). */
export function fileImportWorker(deps: FileImportDeps, connection: Redis, turn: ImportTurnOptions = {}): Worker<FileImportJob> {
  // One import at a time: SQLite has one writer, and an import keeps it busy; imports share it by
  // taking turns (see the top of this file). A short lock (QUARRY_JOB_LOCK_MS) lets a restarted
  // worker take over a killed worker's import within ~15 s by default; a killed import is picked
  // up again however often that happens (each run resumes at the cursor).
  const worker = jobWorker(Queues.fileImport, fileImportProcessor(deps, turn), connection, deps.logger, {
    concurrency: 1,
    ...lockOptions(deps.config.jobLockMs),
    maxStalledCount: 1_000,
  });
  worker.on('failed', (job, err) => {
    if (!job) return;
    const last = job.attemptsMade >= (job.opts.attempts ?? FILE_IMPORT_ATTEMPTS);
    deps.logger.error({ file: job.data.fileId, attempt: job.attemptsMade, last, err: err.message }, 'file import attempt failed');
    if (!last) return;
    void (async () => {
      const file = await deps.store.files.getById(job.data.fileId);
      if (file && (file.status === 'processing' || file.status === 'queued' || file.status === 'awaiting_upload')) {
        await fail(deps, file, `import failed after ${job.attemptsMade} attempts: ${err.message}`, file.status);
      }
    })().catch(() => {});
  });
  return worker;
}
