/**
 * The shards of one thread and how a task runs against them: the worker of a shard thread
 * (entry.ts) holds one host, and the core holds one for the datasets it serves in its own thread
 * (small ones, see core/pool/shard-pool.ts). A host's shards are touched by its thread alone.
 *
 * Only `load` creates a shard. Any other task on a shard the host does not hold answers the
 * `not_loaded` fault: a thread that replaced a crashed one starts empty, and answering from (or
 * snapshotting) an empty shard would silently lose the dataset.
 */
import { isMainThread } from 'node:worker_threads';
import { commitShardSnapshot, prepareShardSnapshot, readShardSnapshot, removeStaleTemps, type PreparedSnapshot } from './persist/shard-snapshot.js';
import type { ShardMessage, ShardReply } from './protocol.js';
import { totalBytes } from './bm25/memory-report.js';
import { Shard } from './shard.js';
import { beginTask, endTask, TaskStopped } from './task-stop.js';
import { collectGarbageSoon } from './collect-garbage.js';

/** A shard thread's shard whose arrays held at least this many bytes before its compaction asks for a collection after it. */
const COLLECT_AFTER_COMPACT_BYTES = 32 * 1024 * 1024;

const keyOf = (t: { datasetId: string; shard: number }): string => `${t.datasetId}/${t.shard}`;

/** Thrown for a task on a shard this host has not loaded. */
class ShardNotLoaded extends Error {
  constructor(key: string) {
    super(`shard ${key} is not loaded in this thread`);
    this.name = 'ShardNotLoaded';
  }
}

/**
 * A snapshot task's answer: the shard as captured in the task's turn, which the host's caller
 * encodes and writes (in later turns, the thread free between them) before it answers the task.
 */
export class PendingSnapshot {
  constructor(private readonly prepared: PreparedSnapshot) {}

  /** Encodes and writes it (encoding in parts between turns; file, fsync and rename off the thread); resolves to the sequence it records. */
  async commit(): Promise<number> {
    await commitShardSnapshot(this.prepared);
    return this.prepared.captured.seq;
  }
}

/** The shards one thread holds. */
export class ShardHost {
  private readonly shards = new Map<string, Shard>();

  private loaded(t: { datasetId: string; shard: number }): Shard {
    const shard = this.shards.get(keyOf(t));
    if (!shard) throw new ShardNotLoaded(keyOf(t));
    return shard;
  }

  private dispatch(task: ShardMessage): unknown {
    switch (task.op) {
      case 'apply': {
        const shard = this.loaded(task);
        shard.apply(task.upserts, task.deletes, task.seq);
        return shard.appliedSeq;
      }
      case 'termStats':
        return this.loaded(task).termStats(task.text, task.pairs === true, task.prefix === true);
      case 'search':
        return this.loaded(task).search(task.text, task.stats, task.k, task.filter, task.minScore, task.countTotal, task.fulltext === true, task.boost ?? null, task.prefix === true);
      case 'searchDense':
        return this.loaded(task).searchDense(task.vector, task.k, task.filter, task.threshold, task.countTotal);
      case 'searchSparse':
        return this.loaded(task).searchSparse(task.vector, task.k, task.filter, task.threshold, task.countTotal);
      case 'typo':
        return this.loaded(task).typoAnswers(task.lookups);
      case 'typoEnable':
        return this.loaded(task).enableTypo();
      case 'typoFill':
        this.loaded(task).fillTypo(task.docs);
        return null;
      case 'sparseScores':
        return this.loaded(task).sparseScores(task.vector, task.chunkIds);
      case 'denseScores':
        return this.loaded(task).denseScores(task.vector, task.chunkIds);
      case 'scroll':
        return this.loaded(task).scroll(task.filter, task.afterId, task.limit, task.sortField, task.descending);
      case 'stats':
        return this.loaded(task).stats();
      case 'analyze':
        return this.loaded(task).index.analyzer.analyze(task.text);
      case 'snapshot': {
        return new PendingSnapshot(prepareShardSnapshot(task.dir, task.shard, this.loaded(task)));
      }
      case 'compact': {
        const index = this.loaded(task).index;
        const before = totalBytes(index.memoryReport());
        index.compactStorage();
        const freed = before - totalBytes(index.memoryReport());
        // The replaced arrays wait for a mark-compact an idle thread would not run (see
        // collect-garbage.ts). A small shard's are left to V8. (Inline shards are not sent this
        // task: core/router/dataset-index.ts; should one be, its event loop answers requests.)
        if (!isMainThread && freed > 0 && before >= COLLECT_AFTER_COMPACT_BYTES) void collectGarbageSoon();
        return freed;
      }
      case 'load': {
        removeStaleTemps(task.dir, task.shard);
        const fromSnapshot = readShardSnapshot(task.dir, task.shard, task.bm25);
        this.shards.set(keyOf(task), fromSnapshot ?? new Shard(task.bm25));
        return { appliedSeq: fromSnapshot?.appliedSeq ?? 0, loaded: fromSnapshot !== undefined, typo: fromSnapshot?.typoWanted === true };
      }
      case 'drop': {
        this.shards.delete(keyOf(task));
        return null;
      }
      default:
        throw new Error(`unknown shard task ${(task as { op: string }).op}`);
    }
  }

  /** Runs one task against this host's shards; expected refusals come back as faults, not throws (a bug throws). */
  run(task: ShardMessage): ShardReply {
    // Throws TaskStopped when the task was cancelled or passed its deadline while it waited.
    let saved;
    try {
      saved = beginTask(task.stop);
    } catch (err) {
      if (err instanceof TaskStopped) return { fault: err.reason === 'deadline' ? 'stopped_deadline' : 'stopped_cancelled', message: err.message };
      throw err;
    }
    try {
      return { value: this.dispatch(task) };
    } catch (err) {
      // Structured clone keeps neither the class nor extra fields of an Error: faults travel as data.
      if (err instanceof TaskStopped) return { fault: err.reason === 'deadline' ? 'stopped_deadline' : 'stopped_cancelled', message: err.message };
      if (err instanceof ShardNotLoaded) return { fault: 'not_loaded', message: err.message };
      throw err;
    } finally {
      endTask(saved);
    }
  }
}
