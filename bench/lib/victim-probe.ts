/**
 * The other tenant's searches, timed from a thread of their own: an attacking client that builds
 * and sends megabytes from the main thread must not delay the victim's requests and have that
 * billed to the server. One thread and one connection pool for the probe's whole life, warmed
 * up before anything is measured (a fresh thread's first request costs ~30 ms of connection
 * setup and compilation, which a p99 of a few dozen samples would report as the service's).
 * Shared by the adversarial suite (test/adversarial/tenant-isolation.test.ts) and
 * bench/attack-probe.ts.
 */
import { Worker } from 'node:worker_threads';

/** Plain JavaScript, evaluated as is. On 'run' it searches the queries round-robin until 'stop'
 * (and at least `min` searches), then posts every latency and each answer that differs. */
const PROBE_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { baseUrl, headers, queries } = workerData;
let expected = workerData.expected;
let running = false;
async function answer(q) {
  const started = performance.now();
  try {
    const res = await fetch(baseUrl + '/api/chunk/search', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ query: queries[q], search_type: 'bm25', page_size: 10 }),
      signal: AbortSignal.timeout(20000),
    });
    const text = await res.text();
    const ms = performance.now() - started;
    if (res.status !== 200) return { answer: 'status ' + res.status + ': ' + text.slice(0, 300), ms };
    return { answer: JSON.parse(text).chunks.map((h) => h.chunk.id + ':' + h.score.toFixed(6)).join(','), ms };
  } catch (err) {
    return { answer: 'no answer: ' + err.message, ms: performance.now() - started };
  }
}
parentPort.on('message', async (m) => {
  if (m.cmd === 'stop') { running = false; return; }
  if (m.cmd === 'expect') { expected = m.expected; parentPort.postMessage({}); return; }
  running = true;
  const latencies = [];
  const wrong = [];
  for (let i = 0; running || latencies.length < m.min; i++) {
    const q = i % queries.length;
    const r = await answer(q);
    latencies.push(r.ms);
    if (expected && r.answer !== expected[q]) wrong.push('query "' + queries[q] + '": ' + r.answer.slice(0, 200) + ' instead of ' + expected[q].slice(0, 200));
  }
  parentPort.postMessage({ latencies, wrong });
});
`;

/** What a probe saw: every search's latency in ms, and each answer that differed from the expected one. */
export interface ProbeResult {
  readonly latencies: number[];
  readonly wrong: string[];
}

/** Where the victim searches and what it searches for. */
export interface ProbeTarget {
  readonly baseUrl: string;
  /** Headers of the victim's searches (its key and dataset). */
  readonly headers: Record<string, string>;
  readonly queries: readonly string[];
}

/** A victim that searches from its own thread while something else runs. */
export class VictimProbe {
  private constructor(private readonly worker: Worker) {}

  /** Starts the thread and runs `warmup` searches that are not measured. */
  static async start(target: ProbeTarget, warmup = 20): Promise<VictimProbe> {
    const worker = new Worker(PROBE_SOURCE, { eval: true, workerData: { ...target, queries: [...target.queries], expected: null } });
    const probe = new VictimProbe(worker);
    await probe.measure(warmup, async () => undefined);
    return probe;
  }

  /** From now on, an answer to query `i` that is not `expected[i]` is reported as wrong. */
  async expect(expected: readonly string[]): Promise<void> {
    const done = new Promise((resolve) => this.worker.once('message', resolve));
    this.worker.postMessage({ cmd: 'expect', expected: [...expected] });
    await done;
  }

  /** The victim's searches while `during` runs (at least `min` of them). */
  async measure(min: number, during: () => Promise<unknown>): Promise<ProbeResult> {
    const done = new Promise<ProbeResult>((resolve, reject) => {
      const failed = (err: Error) => reject(err);
      this.worker.once('error', failed);
      this.worker.once('message', (result: ProbeResult) => {
        this.worker.off('error', failed);
        resolve(result);
      });
    });
    this.worker.postMessage({ cmd: 'run', min });
    try {
      await during();
    } finally {
      this.worker.postMessage({ cmd: 'stop' });
    }
    return await done;
  }

  /** Ends the thread. */
  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
