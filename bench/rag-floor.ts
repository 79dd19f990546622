/**
 * The floor under issue 13's goal (time to first byte through the service less than 50 ms above
 * the provider's own, 100 streams at once): the same burst as `rag-streams.ts` through bare
 * relays that keep one part of the service's path each, then through the service itself, one
 * rung at a time (each up only while it is measured: see `main`).
 *
 * - `relay`: one Node process, HTTP in → the provider over `node:http` → text out. What any
 *   relay written in Node adds.
 * - `list`: an HTTP process pushes each answer on a Redis list; a worker process (8 blocking
 *   pops) calls the provider over `node:http` and publishes the text back. A queue and a second
 *   process, the least of "generation runs as a job on the job workers".
 * - `list+openai`: as `list`, the worker calling the provider through the service's own
 *   provider (`core/llm/openai-chat.ts`: the official `openai` client).
 * - `bullmq`: as `list` with BullMQ instead of the list: `Queue.add`, and the worker's
 *   `Worker`s split into lanes as the job workers split theirs (`ragLanes`).
 * - `bullmq+openai`: both parts issue 13 requires (a BullMQ job per answer, the official client),
 *   and nothing else of the service: no Koa, no API key, no Redis stream, no record.
 * - `service`: `POST /api/chunk/generate` on a stack in the default topology.
 *
 * The fake provider (test/helpers/fake-llm.ts) runs in this process, as in `rag-streams.ts`;
 * the provider's own time to first byte is measured right after each rung's burst.
 *
 *   npm run build && npx tsx bench/rag-floor.ts [--streams 100] [--tokens 40] [--delay 50] [--rounds 3] [--rungs relay,list,...] [--lane 16]
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { GenerationRequest } from '../core/domain/rag.js';
import { OpenAiChatProvider } from '../core/llm/openai-chat.js';
import { RAG_LANE_CONCURRENCY, ragLanes } from '../workers/jobs/rag.js';
import { startFakeLlm } from '../test/helpers/fake-llm.js';
import { quantile } from './lib/metrics.js';
import { cpuSeconds } from './lib/rss-sampler.js';
import { repoRoot } from './lib/scifact.js';
import { freePort, machine, startBenchStack } from './lib/spawn-stack.js';
import { benchTenant } from './lib/tenant.js';

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(name);
  return i > 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
const STREAMS = Number(arg('--streams', '100'));
const TOKENS = Number(arg('--tokens', '40'));
const DELAY_MS = Number(arg('--delay', '50'));
const ROUNDS = Number(arg('--rounds', '3'));
/** Most answers one BullMQ worker of the bare relays runs at once (`RAG_LANE_CONCURRENCY` in the job workers). */
const LANE = Number(arg('--lane', String(RAG_LANE_CONCURRENCY)));
const ALL_RUNGS = ['relay', 'list', 'list+openai', 'bullmq', 'bullmq+openai', 'service'] as const;
type Rung = (typeof ALL_RUNGS)[number];
const RUNGS = arg('--rungs', ALL_RUNGS.join(','))
  .split(',')
  .filter((r): r is Rung => (ALL_RUNGS as readonly string[]).includes(r));
/** Published after an answer's last text. */
const END = '\u0000';

/** An answer as the bare relays pass it on. */
interface FloorJob {
  readonly id: string;
  readonly question: string;
}

/** The provider's deltas of one streamed answer, read over node:http (the relays' own client). */
function rawDeltas(providerUrl: string, agent: http.Agent, question: string, onDelta: (text: string) => void, onEnd: () => void): void {
  const body = JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: question }] });
  const req = http.request(`${providerUrl}/chat/completions`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
    res.setEncoding('utf8');
    let buffered = '';
    res.on('data', (piece: string) => {
      buffered += piece;
      let end: number;
      while ((end = buffered.indexOf('\n\n')) >= 0) {
        const line = buffered.slice(0, end).replace(/^data: /, '');
        buffered = buffered.slice(end + 2);
        if (line === '[DONE]') continue;
        const text = (JSON.parse(line) as { choices: { delta?: { content?: string } }[] }).choices[0]?.delta?.content ?? '';
        if (text !== '') onDelta(text);
      }
    });
    res.on('end', onEnd);
  });
  req.end(body);
}

/** The service's provider (the official client) for a worker of the bare relays. */
function serviceProvider(providerUrl: string): (question: string, onDelta: (text: string) => void, onEnd: () => void) => void {
  const provider = new OpenAiChatProvider({ baseUrl: providerUrl, apiKey: '' }, {});
  return (question, onDelta, onEnd) => {
    const request: GenerationRequest = {
      ragType: 'chosen_chunks',
      systemPrompt: '',
      ragPrompt: '',
      docs: [],
      history: [],
      question,
      imageUrls: [],
      includeLinks: false,
      images: { use: false, perChunk: 1 },
      options: { model: 'm', temperature: 0.5, frequencyPenalty: 0.7, presencePenalty: 0.7, stopTokens: [] },
      endpoint: { baseUrl: providerUrl, apiKey: '' },
    };
    void (async () => {
      for await (const text of provider.stream(request, new AbortController().signal)) onDelta(text);
      onEnd();
    })();
  };
}

/** An HTTP server taking `{prev_messages}` and streaming the answer's text as it comes. */
function answerServer(start: (job: FloorJob, res: http.ServerResponse) => void): http.Server {
  let next = 0;
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { prev_messages: { content: string }[] };
      start({ id: `${process.pid}-${++next}`, question: body.prev_messages.at(-1)!.content }, res);
    });
  });
}

/** Writes a delta to the client's response, committing it at the first. */
function relayText(res: http.ServerResponse, text: string): void {
  if (!res.headersSent) res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
  res.write(text);
}

/** A child process's part: `relay` (the whole relay), `front` (HTTP and enqueue) or `worker`. */
async function child(role: string, queue: string, provider: string, providerUrl: string, redisUrl: string, name: string): Promise<void> {
  // Each rung its own queue and channel: no worker takes another rung's answers.
  const QUEUE = `floor-${name.replace('+', '-')}`;
  const CHANNEL = `${QUEUE}-text`;
  const agent = new http.Agent({ keepAlive: true });
  const call = provider === 'openai' ? serviceProvider(providerUrl) : (q: string, d: (t: string) => void, e: () => void) => rawDeltas(providerUrl, agent, q, d, e);
  if (role === 'relay') {
    const server = answerServer((job, res) => call(job.question, (text) => relayText(res, text), () => res.end()));
    server.listen(0, '127.0.0.1', () => console.log((server.address() as { port: number }).port));
    return;
  }
  if (role === 'front') {
    // As the service's facade: commands auto-pipelined, no offline queue.
    const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false, enableAutoPipelining: true });
    const sub = new Redis(redisUrl);
    const bull = queue === 'bullmq' ? new Queue<FloorJob>(QUEUE, { connection: redis }) : null;
    const waiting = new Map<string, http.ServerResponse>();
    await sub.subscribe(CHANNEL);
    sub.on('message', (_channel: string, message: string) => {
      const space = message.indexOf(' ');
      const id = message.slice(0, space);
      const res = waiting.get(id);
      if (!res) return;
      const text = message.slice(space + 1);
      if (text === END) {
        waiting.delete(id);
        res.end();
      } else relayText(res, text);
    });
    const server = answerServer((job, res) => {
      waiting.set(job.id, res);
      if (bull) void bull.add('answer', job, { jobId: job.id, attempts: 1, removeOnComplete: true });
      else void redis.lpush(QUEUE, JSON.stringify(job));
    });
    server.listen(0, '127.0.0.1', () => console.log((server.address() as { port: number }).port));
    return;
  }
  const pub = new Redis(redisUrl, { maxRetriesPerRequest: 1, enableAutoPipelining: true });
  const run = (job: FloorJob): Promise<void> =>
    new Promise((resolve) =>
      call(
        job.question,
        (text) => void pub.publish(CHANNEL, `${job.id} ${text}`),
        () => {
          void pub.publish(CHANNEL, `${job.id} ${END}`);
          resolve();
        },
      ),
    );
  if (queue === 'bullmq') {
    for (const concurrency of ragLanes(STREAMS, LANE)) new Worker<FloorJob>(QUEUE, (job) => run(job.data), { connection: { url: redisUrl, maxRetriesPerRequest: null }, concurrency, maxStalledCount: 0 });
  } else {
    for (let i = 0; i < 8; i++) {
      const pop = new Redis(redisUrl);
      void (async () => {
        for (;;) {
          const popped = await pop.brpop(QUEUE, 0);
          if (popped) void run(JSON.parse(popped[1]) as FloorJob);
        }
      })();
    }
  }
  console.log('ready');
}

/** The bench's HTTP client (node:http on a keep-alive `agent`, as rag-streams.ts): ms to the first byte of the text. */
function ttfb(agent: http.Agent, url: string, body: string, isText: (piece: string) => boolean, headers: Record<string, string> = {}): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      res.setEncoding('utf8');
      let first = Number.NaN;
      res.on('data', (piece: string) => {
        if (Number.isNaN(first) && isText(piece)) first = performance.now() - started;
      });
      res.on('end', () => (res.statusCode !== 200 ? reject(new Error(`status ${res.statusCode}`)) : Number.isNaN(first) ? reject(new Error('the answer had no text')) : resolve(first)));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Spawns this file in a role; resolves with the line it prints when ready. */
function spawnRole(args: string[]): Promise<{ proc: ChildProcess; line: string }> {
  const proc = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--role', ...args, '--streams', String(STREAMS), '--lane', String(LANE)], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve) => proc.stdout.once('data', (b: Buffer) => resolve({ proc, line: b.toString().trim() })));
}

async function main(): Promise<void> {
  const llm = await startFakeLlm();
  const reply = (id: string): string => Array.from({ length: TOKENS }, (_, i) => `${id}-t${i}`).join(' ');
  llm.script({ reply: (body) => reply(/request (\S+)\./.exec(String(body.messages.at(-1)?.content ?? ''))?.[1] ?? '?'), tokenDelayMs: DELAY_MS });
  const redisDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-floor-'));
  const redisPort = await freePort();
  execFileSync(path.join(repoRoot, 'deploy/redis.sh'), ['start', String(redisPort), redisDir], { stdio: 'inherit' });
  const redisUrl = `redis://127.0.0.1:${redisPort}`;
  /** A rung's processes, up: `send` asks one question and resolves with its TTFB; `stop` ends them. */
  const floorRedisPid = Number(fs.readFileSync(path.join(redisDir, 'redis.pid'), 'utf8').trim());
  const startRung = async (rung: Rung): Promise<{ send: (question: string) => Promise<number>; stop: () => Promise<void>; pids: Record<string, number> }> => {
    // The bench's connections to the rung, closed with it.
    const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
    if (rung === 'service') {
      const stack = await startBenchStack({ QUARRY_EMBED_JOBS: 'false', QUARRY_RAG_CONCURRENCY: String(Math.max(64, STREAMS)) });
      const tenant = await benchTenant(stack, 'floor');
      const owner = { 'content-type': 'application/json', authorization: tenant.ownerKey, 'tr-organization': tenant.orgId };
      const put = await fetch(`${stack.baseUrl}/api/dataset`, { method: 'PUT', headers: owner, body: JSON.stringify({ dataset_id: tenant.datasetId, server_configuration: { LLM_BASE_URL: llm.url, RAG_PROMPT: '', SEMANTIC_ENABLED: false } }) });
      // Without the provider's URL the service answers with its extractive default: another rung.
      if (!put.ok) throw new Error(`could not point the dataset at the fake provider: ${put.status} ${await put.text()}`);
      const url = `${stack.baseUrl}/api/chunk/generate`;
      const headers = { authorization: tenant.readKey, 'tr-dataset': tenant.datasetId };
      return {
        pids: { front: stack.pids.facade, worker: stack.pids.jobs, redis: stack.pids.redis },
        send: (question) => ttfb(agent, url, JSON.stringify({ prev_messages: [{ role: 'user', content: question }], chunk_ids: [] }), (piece) => piece !== '', headers),
        stop: async () => {
          agent.destroy();
          await stack.stop();
        },
      };
    }
    const [queue, provider] = rung === 'relay' ? ['none', 'raw'] : rung.includes('+') ? [rung.split('+')[0]!, 'openai'] : [rung, 'raw'];
    const procs: ChildProcess[] = [];
    const pids: Record<string, number> = {};
    if (queue !== 'none') {
      const worker = await spawnRole(['worker', queue, provider, llm.url, redisUrl, rung]);
      procs.push(worker.proc);
      pids.worker = worker.proc.pid!;
      pids.redis = floorRedisPid;
    }
    const front = await spawnRole([queue === 'none' ? 'relay' : 'front', queue, provider, llm.url, redisUrl, rung]);
    procs.push(front.proc);
    pids.front = front.proc.pid!;
    const url = `http://127.0.0.1:${front.line}/answer`;
    return {
      pids,
      send: (question) => ttfb(agent, url, JSON.stringify({ prev_messages: [{ role: 'user', content: question }] }), (piece) => piece !== ''),
      stop: async () => {
        agent.destroy();
        await Promise.all(procs.map((c) => new Promise((resolve) => c.once('exit', resolve).kill())));
      },
    };
  };
  const directAgent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
  const direct = (question: string): Promise<number> =>
    ttfb(directAgent, `${llm.url}/chat/completions`, JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: question }] }), (piece) => /-t0/.test(piece));
  const burst = (send: (q: string) => Promise<number>, tag: string): Promise<number[]> => Promise.all(Array.from({ length: STREAMS }, (_, i) => send(`Answer request ${tag}s${i}.`)));
  try {
    const added = new Map<Rung, { via: number[]; own: number[]; cpu: Record<string, number> }>();
    /** CPU seconds of the rung's processes and of this one (its client, and the provider both paths share). */
    const cpuOf = (pids: Record<string, number>): Record<string, number> => ({
      ...Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid) ?? Number.NaN])),
      bench: (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
    });
    // One rung at a time, its processes stopped before the next starts: an idle rung's
    // connections would expire (5 s in Node) in the middle of another's burst, and 100
    // connections closed at once cost every process on the path.
    for (const rung of RUNGS) {
      const up = await startRung(rung);
      try {
        // Untimed bursts first: connection pools at their steady size, code compiled.
        await burst(up.send, `warm-${rung}-`);
        await burst(direct, `warm-${rung}-d`);
        const via: number[] = [];
        const own: number[] = [];
        const before = cpuOf(up.pids);
        for (let round = 0; round < ROUNDS; round++) {
          via.push(...(await burst(up.send, `r${round}-${rung}-`)));
          own.push(...(await burst(direct, `r${round}-${rung}-d`)));
        }
        const after = cpuOf(up.pids);
        const cpu = Object.fromEntries(Object.keys(after).map((name) => [name, ((after[name]! - before[name]!) * 1000) / (ROUNDS * STREAMS)]));
        added.set(rung, { via, own, cpu });
      } finally {
        await up.stop();
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const p = (values: number[], q: number): number => quantile([...values].sort((a, b) => a - b), q);
    console.log(`\n${machine()}`);
    console.log(`${ROUNDS} rounds of ${STREAMS} concurrent streams per rung, ${TOKENS} tokens each, ${DELAY_MS} ms before every token; time to first byte, ms`);
    console.log('CPU per stream, ms (10 ms ticks): the rung\'s HTTP process, its worker, Redis; the bench (its client and the provider, both paths)');
    console.log('rung            through it p50 / p99   the provider\'s own p50 / p99   added p50 / p99   CPU per stream');
    for (const rung of RUNGS) {
      const { via, own, cpu } = added.get(rung)!;
      const cells = [p(via, 0.5), p(via, 0.99), p(own, 0.5), p(own, 0.99), p(via, 0.5) - p(own, 0.5), p(via, 0.99) - p(own, 0.99)].map((v) => v.toFixed(1).padStart(6));
      const cpuText = Object.entries(cpu).map(([name, ms]) => `${name} ${ms.toFixed(2)}`).join(', ');
      console.log(`${rung.padEnd(15)} ${cells[0]} / ${cells[1]}        ${cells[2]} / ${cells[3]}                ${cells[4]} / ${cells[5]}   ${cpuText}`);
    }
  } finally {
    directAgent.destroy();
    execFileSync(path.join(repoRoot, 'deploy/redis.sh'), ['stop', redisDir], { stdio: 'inherit' });
    fs.rmSync(redisDir, { recursive: true, force: true });
    await llm.close();
  }
}

const roleAt = process.argv.indexOf('--role');
if (roleAt > 0) {
  const [role, queue, provider, providerUrl, redisUrl, name] = process.argv.slice(roleAt + 1);
  await child(role!, queue!, provider!, providerUrl!, redisUrl!, name!);
} else {
  await main();
}
