/**
 * The worker of one shard thread: its shards live in one {@link ShardHost}; the core routes every
 * task of a shard here, and scheduler.ts decides the order they run in.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { niceThisThread } from '../../core/domain/thread-entry.js';
import type { ThreadReply } from './protocol.js';
import { Scheduler, type Job } from './scheduler.js';
import { ShardHost } from './shard-host.js';

const host = new ShardHost();

if (!parentPort) throw new Error('workers/shard/entry runs as a worker thread (see core/pool/shard-pool.ts)');
const port = parentPort;
// Bulk index work at a lower priority than the event loops that answer requests (see ShardPool).
niceThisThread((workerData as { nice?: number } | null)?.nice ?? 0);

/** Runs a job and posts its reply; a task that throws (a bug) fails that task, not the thread. */
function runJob(job: Job): void {
  let reply: ThreadReply;
  const started = performance.now();
  try {
    reply = { id: job.id, reply: host.run(job.task), runMs: performance.now() - started };
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    reply = { id: job.id, error: { name: e.name, message: e.message, stack: e.stack ?? '' } };
  }
  port.postMessage(reply);
}

const scheduler = new Scheduler(port, runJob);
port.on('message', (job: Job) => scheduler.accept(job));
