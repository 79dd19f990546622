/**
 * The worker of one shard thread. The shards in this module's map live in this thread alone; the
 * core routes every task of a shard here, and scheduler.ts decides the order they run in.
 *
 * Only `load` creates a shard. Any other task on a shard this thread does not hold answers the
 * `not_loaded` fault: a thread that replaced a crashed one starts empty, and answering from (or
 * snapshotting) an empty shard would silently lose the dataset.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { niceThisThread } from '../../core/domain/thread-entry.js';
import { readShardSnapshot, writeShardSnapshot } from './persist/shard-snapshot.js';
import type { ShardMessage, ShardReply, ThreadReply } from './protocol.js';
import { Scheduler, type Job } from './scheduler.js';
import { Shard } from './shard.js';
import { beginTask, endTask, TaskStopped } from './task-stop.js';

const shards = new Map<string, Shard>();

const keyOf = (t: { datasetId: string; shard: number }): string => `${t.datasetId}/${t.shard}`;

/** Thrown for a task on a shard this thread has not loaded. */
class ShardNotLoaded extends Error {
  constructor(key: string) {
    super(`shard ${key} is not loaded in this thread`);
    this.name = 'ShardNotLoaded';
  }
}

function loaded(t: { datasetId: string; shard: number }): Shard {
  const shard = shards.get(keyOf(t));
  if (!shard) throw new ShardNotLoaded(keyOf(t));
  return shard;
}

function dispatch(task: ShardMessage): unknown {
  switch (task.op) {
    case 'apply': {
      const shard = loaded(task);
      shard.apply(task.upserts, task.deletes, task.seq);
      return shard.appliedSeq;
    }
    case 'termStats':
      return loaded(task).termStats(task.text, task.pairs === true, task.prefix === true);
    case 'search':
      return loaded(task).search(task.text, task.stats, task.k, task.filter, task.minScore, task.countTotal, task.fulltext === true, task.boost ?? null, task.prefix === true);
    case 'searchDense':
      return loaded(task).searchDense(task.vector, task.k, task.filter, task.threshold, task.countTotal);
    case 'searchSparse':
      return loaded(task).searchSparse(task.vector, task.k, task.filter, task.threshold, task.countTotal);
    case 'typo':
      return loaded(task).typoAnswers(task.lookups);
    case 'typoEnable':
      return loaded(task).enableTypo();
    case 'typoFill':
      loaded(task).fillTypo(task.docs);
      return null;
    case 'sparseScores':
      return loaded(task).sparseScores(task.vector, task.chunkIds);
    case 'denseScores':
      return loaded(task).denseScores(task.vector, task.chunkIds);
    case 'scroll':
      return loaded(task).scroll(task.filter, task.afterId, task.limit, task.sortField, task.descending);
    case 'stats':
      return loaded(task).stats();
    case 'analyze':
      return loaded(task).index.analyzer.analyze(task.text);
    case 'snapshot': {
      const shard = loaded(task);
      writeShardSnapshot(task.dir, task.shard, shard);
      return shard.appliedSeq;
    }
    case 'load': {
      const fromSnapshot = readShardSnapshot(task.dir, task.shard, task.bm25);
      shards.set(keyOf(task), fromSnapshot ?? new Shard(task.bm25));
      return { appliedSeq: fromSnapshot?.appliedSeq ?? 0, loaded: fromSnapshot !== undefined };
    }
    case 'drop': {
      shards.delete(keyOf(task));
      return null;
    }
    default:
      throw new Error(`unknown shard task ${(task as { op: string }).op}`);
  }
}

/** Runs one task against this thread's shards; expected refusals come back as faults, not throws. */
function runTask(task: ShardMessage): ShardReply {
  // Throws TaskStopped when the task was cancelled or passed its deadline while it waited.
  let saved;
  try {
    saved = beginTask(task.stop);
  } catch (err) {
    if (err instanceof TaskStopped) return { fault: err.reason === 'deadline' ? 'stopped_deadline' : 'stopped_cancelled', message: err.message };
    throw err;
  }
  try {
    return { value: dispatch(task) };
  } catch (err) {
    // Structured clone keeps neither the class nor extra fields of an Error: faults travel as data.
    if (err instanceof TaskStopped) return { fault: err.reason === 'deadline' ? 'stopped_deadline' : 'stopped_cancelled', message: err.message };
    if (err instanceof ShardNotLoaded) return { fault: 'not_loaded', message: err.message };
    throw err;
  } finally {
    endTask(saved);
  }
}

if (!parentPort) throw new Error('workers/shard/entry runs as a worker thread (see core/pool/shard-pool.ts)');
const port = parentPort;
// Bulk index work at a lower priority than the event loops that answer requests (see ShardPool).
niceThisThread((workerData as { nice?: number } | null)?.nice ?? 0);

/** Runs a job and posts its reply; a task that throws (a bug) fails that task, not the thread. */
function runJob(job: Job): void {
  let reply: ThreadReply;
  const started = performance.now();
  try {
    reply = { id: job.id, reply: runTask(job.task), runMs: performance.now() - started };
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    reply = { id: job.id, error: { name: e.name, message: e.message, stack: e.stack ?? '' } };
  }
  port.postMessage(reply);
}

const scheduler = new Scheduler(port, runJob);
port.on('message', (job: Job) => scheduler.accept(job));
