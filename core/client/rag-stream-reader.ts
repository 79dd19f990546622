/**
 * One blocking reader for every answer stream a process follows: a single `XREAD BLOCK` names
 * all the streams that have a waiting follower, and its reply is handed out by stream. With a
 * connection per follower, each token cost its own command, reply and socket read in the
 * facade; here one reply carries the tokens of every stream that moved. A follower that starts
 * waiting while the read is blocked is added at once: the read also names a wake stream of this
 * reader, and an entry added to it (by id, so one added before the read arrives counts too) cuts
 * the read short; it is sent again with every stream.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { ragStreamKey, type StreamEvent } from '../domain/rag.js';

/** One entry of an answer's stream: its Redis id (to read on from) and its event. */
export interface StreamEntry {
  readonly id: string;
  readonly event: StreamEvent;
}

/** A follower waiting for entries of one stream. */
interface Waiter {
  readonly after: string;
  readonly resolve: (entries: StreamEntry[]) => void;
  readonly reject: (err: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/** Pause after a read that returned entries before the next, in ms: tokens of other answers gather meanwhile. */
const GATHER_MS = 3;

/** Longest one shared read blocks, in ms (waiters have their own, shorter or longer, timers). */
const BLOCK_MS = 5000;

/** TTL of the wake stream, in s: it outlives a process that died without deleting it by this long. */
const WAKE_TTL_S = 3600;

/** How often the wake stream's TTL is renewed while wakes are written, in ms. */
const WAKE_EXPIRE_EVERY_MS = 60_000;

type XReadReply = [string, [string, string[]][]][] | null;

/** Parses an XREAD reply: by stream key, its answer entries and the id of its last entry. */
function entriesByKey(reply: XReadReply): Map<string, { entries: StreamEntry[]; lastId: string }> {
  const out = new Map<string, { entries: StreamEntry[]; lastId: string }>();
  for (const [key, raw] of reply ?? []) {
    const entries: StreamEntry[] = [];
    for (const [id, fields] of raw) {
      const at = fields.indexOf('e');
      if (at < 0 || at + 1 >= fields.length) continue;
      entries.push({ id, event: JSON.parse(fields[at + 1]!) as StreamEvent });
    }
    if (raw.length > 0) out.set(key, { entries, lastId: raw.at(-1)![0] });
  }
  return out;
}

/** The shared reader of one process; see the module comment. */
export class SharedStreamReader {
  private readonly waiters = new Map<string, Waiter>();
  private conn: Redis | null = null;
  private looping = false;
  /** Keys of the read in flight (or about to be sent); a waiter outside them needs a wake. */
  private reading: ReadonlySet<string> | null = null;
  private readonly wakeKey = `quarry:rag:wake:${randomUUID()}`;
  private wakeAfter = '0';
  /** When the wake stream's TTL was last renewed (epoch ms). */
  private wakeExpiredAt = Number.NEGATIVE_INFINITY;
  private waking = false;
  private wakeAgain = false;
  private closed = false;
  /** Whether the last read returned entries (the next one waits {@link GATHER_MS} first). */
  private gathered = false;

  /** `control`: a command connection, auto-pipelined (writes the wakes); `url`: Redis for the blocking connection. */
  constructor(
    private readonly control: Redis,
    private readonly url: string,
  ) {}

  /** Entries of answer `id` after `after`, waiting at most `blockMs` for one; [] when none came. One waiter per answer. */
  read(id: string, after: string, blockMs: number): Promise<StreamEntry[]> {
    const key = ragStreamKey(id);
    return new Promise<StreamEntry[]>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (this.waiters.get(key)?.timer === timer) this.waiters.delete(key);
        resolve([]);
      }, Math.max(1, blockMs));
      this.waiters.set(key, { after, resolve, reject, timer });
      if (this.closed) {
        this.settle(key, new Error('the stream reader is closed'));
        return;
      }
      if (!this.looping) void this.loop();
      else if (this.reading && !this.reading.has(key)) void this.wake();
    });
  }

  /** Fails every waiter and drops the connection. */
  close(): void {
    this.closed = true;
    for (const key of [...this.waiters.keys()]) this.settle(key, new Error('the stream reader is closed'));
    this.conn?.disconnect();
    this.conn = null;
    void this.control.del(this.wakeKey).catch(() => {});
  }

  private settle(key: string, result: StreamEntry[] | Error): void {
    const w = this.waiters.get(key);
    if (!w) return;
    this.waiters.delete(key);
    clearTimeout(w.timer);
    if (result instanceof Error) w.reject(result);
    else w.resolve(result);
  }

  private async connection(): Promise<Redis> {
    if (this.conn && this.conn.status === 'ready') return this.conn;
    this.conn?.disconnect();
    // No offline queue: a read while Redis is away fails at once (the answers end), never hangs.
    const conn = new Redis(this.url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true });
    conn.on('error', () => {
      /* surfaced by the read that fails */
    });
    this.conn = conn;
    await conn.connect();
    return conn;
  }

  /** Adds an entry to the wake stream: the read in flight returns and is sent again with every stream. */
  private async wake(): Promise<void> {
    if (this.waking) {
      // The entry in flight may land before the read that missed this waiter: add another after it.
      this.wakeAgain = true;
      return;
    }
    this.waking = true;
    try {
      do {
        this.wakeAgain = false;
        // Plain commands on the auto-pipelined control connection: they leave in the same socket
        // write as the job the follower's answer enqueued in the same turn (facade/rag/answer.ts).
        const added = this.control.xadd(this.wakeKey, 'MAXLEN', '~', 16, '*', 'w', '1');
        const now = Date.now();
        if (now - this.wakeExpiredAt >= WAKE_EXPIRE_EVERY_MS) {
          this.wakeExpiredAt = now;
          await Promise.all([added, this.control.expire(this.wakeKey, WAKE_TTL_S)]);
        } else await added;
      } while (this.wakeAgain);
    } catch {
      // The read ends by itself within BLOCK_MS; the waiter's own timer bounds its wait anyway.
    } finally {
      this.waking = false;
    }
  }

  private async loop(): Promise<void> {
    this.looping = true;
    try {
      while (this.waiters.size > 0 && !this.closed) {
        // Followers that got entries ask again within the same turn: let them, so the next read
        // names them. After a read that returned entries, a short pause lets more tokens gather:
        // with 100 answers streaming, a read per token was most of this reader's work.
        await new Promise<void>((resolve) => (this.gathered ? setTimeout(resolve, GATHER_MS) : setImmediate(resolve)));
        if (this.waiters.size === 0) break;
        const keys = [...this.waiters.keys()];
        const afters = keys.map((k) => this.waiters.get(k)!.after);
        this.reading = new Set(keys);
        let reply: XReadReply;
        try {
          const conn = await this.connection();
          reply = (await conn.xread('BLOCK', BLOCK_MS, 'STREAMS', ...keys, this.wakeKey, ...afters, this.wakeAfter));
        } catch (err) {
          this.conn?.disconnect();
          this.conn = null;
          for (const key of keys) this.settle(key, err as Error);
          continue;
        } finally {
          this.reading = null;
        }
        const byKey = entriesByKey(reply);
        const woken = byKey.get(this.wakeKey);
        if (woken) this.wakeAfter = woken.lastId;
        byKey.delete(this.wakeKey);
        this.gathered = byKey.size > 0;
        for (const [key, { entries }] of byKey) {
          // Only to the waiter the read was for: one that timed out and came back asks from its own `after`.
          const w = this.waiters.get(key);
          if (w && entries.length > 0 && afters[keys.indexOf(key)] === w.after) this.settle(key, entries);
        }
      }
    } finally {
      this.looping = false;
    }
  }
}
