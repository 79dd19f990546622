/**
 * A stack with SciFact ingested over HTTP, kept up until Ctrl-C or SIGTERM, for looking at the
 * service by hand: wrk, `perf stat`, strace, a profiler, SIGSTOP of one process. Not a benchmark:
 * it prints the address, the dataset's headers, the processes' ids and a wrk script POSTing the
 * 300 SciFact test queries' bm25 bodies (page_size 10) in turn, as search-latency sends them.
 *
 *   npm run build && npx tsx bench/scifact-stack.ts [--env '{"QUARRY_SERVER_TIMING":"true"}']
 *   wrk -t1 -c1 -d10s --latency -s <the printed script> <the printed address>
 *
 * `--env` adds to the stack's environment (background embedding is off unless it says otherwise).
 * QUARRY_BENCH_NODE_ARGS (node flags for every quarry process) and QUARRY_BENCH_LOG_DIR (keep each
 * process's log) apply, as for every bench stack (lib/spawn-stack.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadQrels, loadSciFact } from './lib/scifact.js';
import { ingestSciFact } from './lib/scifact-ingest.js';
import { startBenchStack } from './lib/spawn-stack.js';
import { searchBodies, searchScript } from './lib/wrk.js';

const envArg = process.argv.indexOf('--env');
const extraEnv = envArg > 0 ? (JSON.parse(process.argv[envArg + 1] ?? '{}') as Record<string, string>) : {};
const data = loadSciFact();
const queries = [...loadQrels('test').keys()].map((id) => data.queries.get(id)!);
const stack = await startBenchStack({ QUARRY_EMBED_JOBS: 'false', ...extraEnv });
let stopping = false;
const stop = async (): Promise<void> => {
  if (stopping) return;
  stopping = true;
  await stack.stop();
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
try {
  const { headers, ingestMs } = await ingestSciFact(stack.baseUrl, stack.adminKey, data.docs);
  const script = searchScript(headers, searchBodies(queries));
  console.log(`SciFact ingested (${data.docs.length} chunks in ${ingestMs} ms)`);
  console.log(`address: ${stack.baseUrl}`);
  console.log(`headers: ${JSON.stringify(headers)}`);
  console.log(`processes: ${JSON.stringify(stack.pids)}`);
  console.log(`wrk script: ${script} (its directory goes when the stack stops)`);
  process.on('exit', () => fs.rmSync(path.dirname(script), { recursive: true, force: true }));
  console.log('up; Ctrl-C stops it');
} catch (err) {
  await stack.stop();
  throw err;
}
// The stack's children keep running; this process only waits for the signal.
setInterval(() => undefined, 1 << 30);
