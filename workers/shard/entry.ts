/**
 * The worker of one shard thread: its shards live in one {@link ShardHost}; the core routes every
 * task of a shard here, and scheduler.ts decides the order they run in.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { niceThisThread } from '../../core/domain/thread-entry.js';
import type { ThreadReply } from './protocol.js';
import { Scheduler, type Job } from './scheduler.js';
import { PendingSnapshot, ShardHost } from './shard-host.js';

const host = new ShardHost();

if (!parentPort) throw new Error('workers/shard/entry runs as a worker thread (see core/pool/shard-pool.ts)');
const port = parentPort;
// Bulk index work at a lower priority than the event loops that answer requests (see ShardPool).
niceThisThread((workerData as { nice?: number } | null)?.nice ?? 0);

/** The reply of a job whose task threw (a bug): it fails that task, not the thread. */
function failed(job: Job, err: unknown): ThreadReply {
  const e = err instanceof Error ? err : new Error(String(err));
  return { id: job.id, error: { name: e.name, message: e.message, stack: e.stack ?? '' } };
}

/**
 * Runs a job and posts its reply. A snapshot is encoded and written after its turn, the thread
 * running other tasks meanwhile, and answered once it is on disk.
 */
function runJob(job: Job): void {
  const started = performance.now();
  let reply: ThreadReply;
  try {
    const result = host.run(job.task);
    const runMs = performance.now() - started;
    if ('value' in result && result.value instanceof PendingSnapshot) {
      result.value.commit().then(
        (seq) => port.postMessage({ id: job.id, reply: { value: seq }, runMs } satisfies ThreadReply),
        (err: unknown) => port.postMessage(failed(job, err)),
      );
      return;
    }
    reply = { id: job.id, reply: result, runMs };
  } catch (err) {
    reply = failed(job, err);
  }
  port.postMessage(reply);
}

const scheduler = new Scheduler(port, runJob);
port.on('message', (job: Job) => scheduler.accept(job));
