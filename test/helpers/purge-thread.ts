/**
 * Runs a long store deletion in a worker thread over its own store connection: the job workers'
 * purge sweep (`sweepDeleted`, what the maintenance worker runs; the thread stands for the job
 * process) or a dataset clear (the facade's PUT /api/dataset/clear). The test's own thread is then
 * another process writing to the same file. Reports the longest stall of the thread's event loop
 * (what BullMQ's lock renewals, or the facade's other requests, would have suffered).
 */
import { parentPort, workerData } from 'node:worker_threads';
import pino from 'pino';
import { openLocalBlobStore } from '../../core/blob/local-blob-store.js';
import { loadConfig } from '../../core/config.js';
import { openSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { sweepDeleted } from '../../workers/jobs/maintenance.js';

/** What the thread runs. */
export type PurgeThreadTask = { readonly kind: 'sweep' } | { readonly kind: 'clear'; readonly datasetId: string };

/** What the thread reports when it is done. */
export interface PurgeThreadReport {
  /** Longest gap between two ticks of a 5 ms timer, in ms, minus the 5 ms. */
  readonly maxLoopGapMs: number;
  readonly elapsedMs: number;
}

const TICK_MS = 5;

const { dataDir, task } = workerData as { dataDir: string; task: PurgeThreadTask };
const store = openSqliteStore(dataDir);
let last = performance.now();
let maxLoopGapMs = 0;
const ticker = setInterval(() => {
  const now = performance.now();
  maxLoopGapMs = Math.max(maxLoopGapMs, now - last - TICK_MS);
  last = now;
}, TICK_MS);
parentPort!.postMessage('started');
const started = performance.now();
if (task.kind === 'sweep') {
  const blobs = await openLocalBlobStore(loadConfig({ QUARRY_DATA_DIR: dataDir }));
  await sweepDeleted(store, { dataDir, blobs }, pino({ level: 'silent' }));
}
else await store.datasets.clear(task.datasetId);
// The last gap too: work that never yields never lets the ticker run at all.
maxLoopGapMs = Math.max(maxLoopGapMs, performance.now() - last - TICK_MS);
clearInterval(ticker);
const report: PurgeThreadReport = { maxLoopGapMs, elapsedMs: performance.now() - started };
await store.close();
parentPort!.postMessage(report);
