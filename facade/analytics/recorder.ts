/**
 * Buffers analytics records off the request path and hands them to the job workers in batches.
 *
 * `recordSearch`/`recordRecommendation`/`recordRag` only push into memory, so a request never waits for Redis.
 * Each record is encoded as JSON bytes (off the V8 heap) right after the request that made it
 * has answered, so nothing of it stays in the heap: the young-generation collections that copied
 * buffered records, and each batch's JSON string while it was sent, were what the search p99
 * waited for. A flusher cuts the buffer into batches (every `flushIntervalMs`, or at once when
 * `batchSize` records wait) and sends them one at a time, oldest first. A batch keeps its id across retries,
 * so a send whose reply was lost and is sent again is deduplicated (BullMQ job id, then the
 * store's insert-or-ignore). While Redis is away batches stay in memory and are retried with
 * backoff; past `maxBuffered` records the oldest are dropped, counted and logged. On close the
 * rest is sent, or written straight to the store when Redis cannot take it.
 */
import type { Logger } from 'pino';
import type { AnalyticsBatch, RecommendationRecord, SearchRecord } from '../../core/domain/analytics.js';
import type { RagRecord } from '../../core/domain/rag.js';
import { newId } from '../../core/domain/ids.js';

/** Tunables of the recorder. */
export interface RecorderOptions {
  /** How often buffered records are cut into a batch and sent, in ms. @defaultValue `250` */
  readonly flushIntervalMs: number;
  /**
   * Most records per batch (one BullMQ job); a full batch is sent without waiting for the
   * interval. (When batches were serialized as they were sent, 500 records stalled every search
   * in flight for ~3 ms four times a second; records are now encoded one at a time.) @defaultValue `64`
   */
  readonly batchSize: number;
  /** Most records held in memory while Redis is away; beyond it the oldest are dropped. @defaultValue `100000` */
  readonly maxBuffered: number;
  /**
   * Most bytes (records as JSON) held in memory while Redis is away; beyond it the oldest are
   * dropped, so large records cannot fill the HTTP process's memory. @defaultValue `268435456` (256 MiB)
   */
  readonly maxBufferedBytes: number;
  /** A send not answered within this many ms counts as failed (it is retried with the same id). @defaultValue `5000` */
  readonly sendTimeoutMs: number;
  /** First retry delay after a failed send, doubling per failure, in ms. @defaultValue `250` */
  readonly minBackoffMs: number;
  /** Longest retry delay, in ms: how late delivery resumes after Redis returns. @defaultValue `2000` */
  readonly maxBackoffMs: number;
  /** How long close() keeps sending to Redis before it writes the rest to the store, in ms. @defaultValue `5000` */
  readonly closeTimeoutMs: number;
}

/** Defaults of {@link RecorderOptions}. */
export const RECORDER_DEFAULTS: RecorderOptions = Object.freeze({
  flushIntervalMs: 250,
  batchSize: 64,
  maxBuffered: 100_000,
  maxBufferedBytes: 256 * 1024 * 1024,
  sendTimeoutMs: 5000,
  minBackoffMs: 250,
  maxBackoffMs: 2000,
  closeTimeoutMs: 5000,
});

/** A batch as it is sent: its id, how many records it holds, and its {@link AnalyticsBatch} as JSON in UTF-8. */
export interface EncodedBatch {
  readonly id: string;
  readonly records: number;
  readonly json: Buffer;
}

/** Where batches go: `send` to the job workers, `store` as the last resort on close. */
export interface RecorderSinks {
  /** Enqueues a batch; rejects when it could not. Must be idempotent by `batch.id`. */
  send(batch: EncodedBatch): Promise<void>;
  /** Writes a batch to the store directly (idempotent by record id). */
  store(batch: AnalyticsBatch): Promise<void>;
}

/** The kinds of record, as the batch's JSON names their lists. */
type Kind = 'searches' | 'recommendations' | 'rags';

/**
 * A buffered record: the object until it is encoded (right after its request answered), then its
 * JSON bytes; `bytes` is what it holds in memory (an estimate until encoded).
 */
interface Entry {
  readonly kind: Kind;
  record: SearchRecord | RecommendationRecord | RagRecord | null;
  json: Buffer | null;
  bytes: number;
}

/** What an entry is counted as until it is encoded (a few at most: they are encoded on the next turn). */
const UNENCODED_BYTES = 1024;

/** A batch being delivered; its entries change only while it is not in flight (oldest-record drops). */
interface PendingBatch {
  readonly id: string;
  readonly entries: Entry[];
}

/** Counters for logs, health and tests. */
export interface RecorderStats {
  /** Records in memory (not yet accepted by Redis). */
  readonly buffered: number;
  /** Their size as JSON, in bytes. */
  readonly bufferedBytes: number;
  /** Records accepted by Redis (or written to the store on close) since start. */
  readonly delivered: number;
  /** Records dropped because the buffer was full, since start. */
  readonly dropped: number;
}

/** Milliseconds between two "buffer full" warnings: an outage must not flood the log. */
const DROP_WARN_INTERVAL_MS = 5000;

/** Encodes an entry in place (idempotent); returns the change of its counted bytes. */
function encode(entry: Entry): number {
  if (entry.json !== null) return 0;
  entry.json = Buffer.from(JSON.stringify(entry.record), 'utf8');
  entry.record = null;
  const change = entry.json.length - entry.bytes;
  entry.bytes = entry.json.length;
  return change;
}

const KINDS: readonly Kind[] = ['searches', 'recommendations', 'rags'];
const COMMA = Buffer.from(',');

/** A batch's {@link AnalyticsBatch} JSON, from its encoded entries (the bytes copied once). */
function encodeBatch(batch: PendingBatch): EncodedBatch {
  const parts: Buffer[] = [];
  KINDS.forEach((kind, k) => {
    parts.push(Buffer.from(k === 0 ? `{"id":${JSON.stringify(batch.id)},"${kind}":[` : `],"${kind}":[`));
    let first = true;
    for (const e of batch.entries) {
      if (e.kind !== kind) continue;
      encode(e);
      if (!first) parts.push(COMMA);
      parts.push(e.json!);
      first = false;
    }
  });
  parts.push(Buffer.from(']}'));
  return { id: batch.id, records: batch.entries.length, json: Buffer.concat(parts) };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

/** Rejects after `ms` unless `p` settles first (`p` may still complete later: sends are idempotent). */
function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** The facade's analytics buffer; see the module comment. */
export class AnalyticsRecorder {
  private readonly options: RecorderOptions;
  private open: Entry[] = [];
  private readonly pending: PendingBatch[] = [];
  private inFlight: PendingBatch | null = null;
  private size = 0;
  private bytes = 0;
  private delivered = 0;
  private dropped = 0;
  private droppedSinceWarn = 0;
  /** Entries of `open` from this index on are not encoded yet. */
  private encodedUpTo = 0;
  /** Whether {@link turn} is scheduled (it runs after the current turn's responses). */
  private turnScheduled = false;
  private lastDropWarn = 0;
  private failures = 0;
  private pumping: Promise<void> | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private tickTimer: NodeJS.Timeout | null = null;
  private closed = false;

  /** A recorder delivering to `sinks`; call start() to begin flushing. */
  constructor(
    private readonly sinks: RecorderSinks,
    private readonly logger: Logger,
    options: Partial<RecorderOptions> = {},
  ) {
    this.options = Object.assign({}, RECORDER_DEFAULTS, options);
  }

  /** Starts the periodic flush. */
  start(): void {
    if (this.tickTimer || this.closed) return;
    this.tickTimer = setInterval(() => this.flushSoon(), this.options.flushIntervalMs);
    this.tickTimer.unref();
  }

  /** Buffers a search record; returns at once. */
  recordSearch(record: SearchRecord): void {
    this.push('searches', record);
  }

  /** Buffers a recommendation record; returns at once. */
  recordRecommendation(record: RecommendationRecord): void {
    this.push('recommendations', record);
  }

  /** Buffers a RAG answer's record; returns at once. */
  recordRag(record: RagRecord): void {
    this.push('rags', record);
  }

  /** Current counters. */
  stats(): RecorderStats {
    return { buffered: this.size, bufferedBytes: this.bytes, delivered: this.delivered, dropped: this.dropped };
  }

  /**
   * Stops the flusher, sends what is buffered (for up to `closeTimeoutMs`, and only while Redis
   * answers) and writes whatever Redis did not take straight to the store. Call after the HTTP
   * server has drained.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.tickTimer) clearInterval(this.tickTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.tickTimer = this.retryTimer = null;
    this.cut();
    const deadline = Date.now() + this.options.closeTimeoutMs;
    if (this.pumping) await Promise.race([this.pumping, sleep(this.options.closeTimeoutMs)]);
    // Redis first while it answers (the workers store the same batches); after a failed send,
    // straight to the store: waiting for Redis could outlast the shutdown grace period.
    if (this.failures === 0) {
      for (const batch of [...this.pending]) {
        const left = deadline - Date.now();
        if (left <= 0) break;
        if (!this.pending.includes(batch)) continue;
        try {
          await within(this.sinks.send(encodeBatch(batch)), Math.min(left, this.options.sendTimeoutMs));
        } catch {
          break;
        }
        if (this.remove(batch)) this.delivered += batch.entries.length;
      }
    }
    if (this.pending.length === 0) return;
    this.logger.warn({ records: this.size, batches: this.pending.length }, 'analytics: Redis did not take the last batches; writing them to the store');
    for (const batch of [...this.pending]) {
      // A send still in flight may have completed meanwhile: writing its batch again is harmless.
      this.remove(batch);
      await this.writeDirect(batch);
    }
  }

  private push(kind: Kind, record: SearchRecord | RecommendationRecord | RagRecord): void {
    const entry: Entry = { kind, record, json: null, bytes: UNENCODED_BYTES };
    if (this.closed) {
      // Only a request that outlived the drain gets here; it goes straight to the store.
      void this.writeDirect({ id: newId(), entries: [entry] });
      return;
    }
    this.open.push(entry);
    this.size++;
    this.bytes += entry.bytes;
    // While Redis is away, or the buffer is large, the byte bound must be exact at once.
    if (this.failures > 0 || this.bytes > this.options.maxBufferedBytes / 4) this.encodeOpen();
    this.bound();
    if (!this.turnScheduled) {
      // After the response: the request that made the record waits neither for its encoding nor for a send.
      this.turnScheduled = true;
      setImmediate(() => this.turn());
    }
  }

  /** Encodes the records of the turn that just ended, bounds the buffer, and sends a full batch. */
  private turn(): void {
    this.turnScheduled = false;
    if (this.closed) return;
    this.encodeOpen();
    this.bound();
    if (this.open.length >= this.options.batchSize) this.flushSoon();
  }

  /** Drops the oldest records while the buffer holds too many or too many bytes. */
  private bound(): void {
    while ((this.size > this.options.maxBuffered || this.bytes > this.options.maxBufferedBytes) && this.dropOldest());
  }

  /** Encodes the open entries not encoded yet. */
  private encodeOpen(): void {
    for (let i = this.encodedUpTo; i < this.open.length; i++) this.bytes += encode(this.open[i]!);
    this.encodedUpTo = this.open.length;
  }

  /** Cuts the buffer into batches and starts delivering unless a retry is already scheduled. */
  private flushSoon(): void {
    this.cut();
    if (this.retryTimer === null) this.pump();
  }

  private cut(): void {
    this.encodeOpen();
    const { batchSize } = this.options;
    for (let i = 0; i < this.open.length; i += batchSize) {
      this.pending.push({ id: newId(), entries: this.open.slice(i, i + batchSize) });
    }
    this.open = [];
    this.encodedUpTo = 0;
  }

  /** Sends pending batches one at a time until none is left or a send fails. */
  private pump(): void {
    if (this.pumping || this.closed) return;
    this.pumping = (async () => {
      while (this.pending.length > 0 && !this.closed) {
        const batch = this.pending[0]!;
        this.inFlight = batch;
        try {
          await within(this.sinks.send(encodeBatch(batch)), this.options.sendTimeoutMs);
        } catch (err) {
          this.scheduleRetry(err as Error);
          return;
        } finally {
          this.inFlight = null;
        }
        // Removed by identity: close() may have taken the batch meanwhile.
        if (this.remove(batch)) this.delivered += batch.entries.length;
        if (this.failures > 0) {
          this.logger.info({ failedAttempts: this.failures, buffered: this.size }, 'analytics: Redis takes batches again');
          this.failures = 0;
        }
      }
    })().finally(() => {
      this.pumping = null;
    });
  }

  private scheduleRetry(err: Error): void {
    this.failures++;
    const { minBackoffMs, maxBackoffMs } = this.options;
    const delay = Math.min(maxBackoffMs, minBackoffMs * 2 ** Math.min(this.failures - 1, 20));
    // The first failure of an outage, then one line every 20 attempts.
    if (this.failures === 1 || this.failures % 20 === 0) {
      this.logger.warn({ err: err.message, attempt: this.failures, buffered: this.size, retryInMs: delay }, 'analytics: could not send a batch; keeping it buffered');
    }
    if (this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.flushSoon();
    }, delay);
    this.retryTimer.unref();
  }

  /** Drops the oldest record that is not in flight (the buffer is full); false when there is none. */
  private dropOldest(): boolean {
    const batch = this.pending.find((b) => b !== this.inFlight && b.entries.length > 0);
    let dropped: Entry | undefined;
    if (batch) {
      dropped = batch.entries.shift();
      if (batch.entries.length === 0) this.pending.splice(this.pending.indexOf(batch), 1);
    } else if (this.open.length > 0) {
      dropped = this.open.shift();
      this.encodedUpTo = Math.max(0, this.encodedUpTo - 1);
    } else {
      return false;
    }
    this.size--;
    this.bytes -= dropped!.bytes;
    this.dropped++;
    this.droppedSinceWarn++;
    const now = Date.now();
    if (now - this.lastDropWarn >= DROP_WARN_INTERVAL_MS) {
      this.logger.warn(
        { dropped: this.droppedSinceWarn, droppedTotal: this.dropped, maxBuffered: this.options.maxBuffered, maxBufferedBytes: this.options.maxBufferedBytes },
        'analytics: buffer full while Redis is away; dropped the oldest records',
      );
      this.lastDropWarn = now;
      this.droppedSinceWarn = 0;
    }
    return true;
  }

  /** Takes a batch out of the pending list; false when it was no longer there. */
  private remove(batch: PendingBatch): boolean {
    const i = this.pending.indexOf(batch);
    if (i < 0) return false;
    this.pending.splice(i, 1);
    this.size -= batch.entries.length;
    for (const e of batch.entries) this.bytes -= e.bytes;
    return true;
  }

  private async writeDirect(batch: PendingBatch): Promise<void> {
    try {
      await this.sinks.store(JSON.parse(encodeBatch(batch).json.toString('utf8')) as AnalyticsBatch);
      this.delivered += batch.entries.length;
    } catch (err) {
      this.logger.error({ err, records: batch.entries.length, batch: batch.id }, 'analytics: could not write records to the store; they are lost');
    }
  }
}
