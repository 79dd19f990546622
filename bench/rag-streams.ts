/**
 * RAG answers streamed through the service at once: 100 concurrent POST /api/chunk/generate
 * against a fake OpenAI-compatible server (test/helpers/fake-llm.ts, real HTTP and SSE on
 * loopback) whose tokens come slowly. Each stream's scripted text carries its own request id in
 * every token, so a dropped, duplicated or crossed token shows as a mismatch. Prints time to
 * first byte through the service (facade → Redis queue → job worker → provider → Redis stream →
 * facade) against the provider's own (the same 100 requests sent to the fake directly).
 *
 *   npm run build && npx tsx bench/rag-streams.ts [--streams 100] [--tokens 40] [--delay 50] [--rounds 3]
 */
import { performance } from 'node:perf_hooks';
import { fakeTokens, startFakeLlm } from '../test/helpers/fake-llm.js';
import { quantile } from './lib/metrics.js';
import { cpuSeconds } from './lib/rss-sampler.js';
import { machine, startBenchStack } from './lib/spawn-stack.js';
import { benchTenant } from './lib/tenant.js';

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) || fallback : fallback;
};
const STREAMS = arg('--streams', 100);
const TOKENS = arg('--tokens', 40);
const DELAY_MS = arg('--delay', 50);
const ROUNDS = arg('--rounds', 3);

/** The text the fake answers to request `id`: every token names it and its position. */
const replyFor = (id: string): string => Array.from({ length: TOKENS }, (_, i) => `${id}-t${i}`).join(' ');
/** The request id a prompt carries ("Answer request <id>."). */
const idOf = (question: string): string => /request (\S+)\./.exec(question)?.[1] ?? 'unknown';

/** One streamed response: ms to its first byte and to its end, and its text. */
interface Streamed {
  readonly ttfb: number;
  readonly total: number;
  readonly text: string;
}

/** Reads a streaming response to its end, timing its first byte. */
async function readStream(res: Response, started: number): Promise<Streamed> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let ttfb = -1;
  for (;;) {
    const r = await reader.read();
    if (r.done) break;
    if (ttfb < 0) ttfb = performance.now() - started;
    text += decoder.decode(r.value, { stream: true });
  }
  return { ttfb, total: performance.now() - started, text };
}

/** A request straight to the fake provider (SSE), timed to its first content delta. */
async function direct(url: string, id: string): Promise<Streamed> {
  const started = performance.now();
  const res = await fetch(`${url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: `Answer request ${id}.` }] }),
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  let text = '';
  let ttfb = -1;
  for (;;) {
    const r = await reader.read();
    if (r.done) break;
    buffered += decoder.decode(r.value, { stream: true });
    let end: number;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const line = buffered.slice(0, end).replace(/^data: /, '');
      buffered = buffered.slice(end + 2);
      if (line === '[DONE]') continue;
      const delta = (JSON.parse(line) as { choices: { delta?: { content?: string } }[] }).choices[0]?.delta?.content ?? '';
      if (delta !== '' && ttfb < 0) ttfb = performance.now() - started;
      text += delta;
    }
  }
  return { ttfb, total: performance.now() - started, text };
}

const ms = (v: number): string => `${v.toFixed(1)} ms`;
const summary = (values: number[]): string => {
  const s = [...values].sort((a, b) => a - b);
  return `p50 ${ms(quantile(s, 0.5))}, p90 ${ms(quantile(s, 0.9))}, p99 ${ms(quantile(s, 0.99))}, max ${ms(s.at(-1)!)}`;
};

async function main(): Promise<void> {
  const llm = await startFakeLlm();
  llm.script({ reply: (body) => replyFor(idOf(String(body.messages.at(-1)?.content ?? ''))), tokenDelayMs: DELAY_MS });
  // Answers wait on the provider: the worker takes every stream at once (the default is 64).
  const concurrency = Number(process.env.QUARRY_RAG_CONCURRENCY) || Math.max(64, STREAMS);
  const stack = await startBenchStack({ QUARRY_EMBED_JOBS: 'false', QUARRY_RAG_CONCURRENCY: String(concurrency) });
  try {
    const tenant = await benchTenant(stack, 'rag');
    await fetch(`${stack.baseUrl}/api/dataset`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: tenant.ownerKey, 'tr-organization': tenant.orgId },
      body: JSON.stringify({ dataset_id: tenant.datasetId, server_configuration: { LLM_BASE_URL: llm.url, RAG_PROMPT: '', SEMANTIC_ENABLED: false } }),
    });
    const headers = { 'content-type': 'application/json', authorization: tenant.readKey, 'tr-dataset': tenant.datasetId };
    const viaService = async (id: string): Promise<Streamed> => {
      const started = performance.now();
      const res = await fetch(`${stack.baseUrl}/api/chunk/generate`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ prev_messages: [{ role: 'user', content: `Answer request ${id}.` }], chunk_ids: [] }),
      });
      if (res.status !== 200) throw new Error(`status ${res.status}: ${await res.text()}`);
      return readStream(res, started);
    };
    // Warm-up, one untimed round of the same size: the connection pools (client to service,
    // worker to provider) reach their steady size and the code paths are compiled, as on a
    // service that has been up a while. Its figure is printed, not counted.
    const warm = await Promise.all(Array.from({ length: STREAMS }, (_, i) => viaService(`warm${i}`)));
    console.log(`warm-up round (not counted): service TTFB p50 ${ms(quantile(warm.map((s) => s.ttfb).sort((a, b) => a - b), 0.5))}`);

    // CPU of every process over the timed rounds (Linux: /proc), per stream through the service:
    // what an answer costs where, the bench's own (client and provider) included.
    const procs = { facade: stack.pids.facade, jobs: stack.pids.jobs, redis: stack.pids.redis };
    const cpuAt = (): Record<string, number> => ({
      ...Object.fromEntries(Object.entries(procs).map(([name, pid]) => [name, cpuSeconds(pid) ?? Number.NaN])),
      bench: (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
    });
    const cpuBefore = cpuAt();
    const service: Streamed[] = [];
    const provider: Streamed[] = [];
    let wrong = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const ids = Array.from({ length: STREAMS }, (_, i) => `r${round}s${i}`);
      // A stream that fails (status, connection) counts as wrong, with its error printed.
      const viaRound = await Promise.all(ids.map((id) => viaService(id).catch((err: unknown): Streamed => ({ ttfb: Number.NaN, total: Number.NaN, text: `[failed: ${String(err)}]` }))));
      const directRound = await Promise.all(ids.map((id) => direct(llm.url, `${id}d`)));
      viaRound.forEach((s, i) => {
        if (s.text !== replyFor(ids[i]!)) {
          wrong++;
          const got = fakeTokens(s.text).length;
          console.error(`stream ${ids[i]}: text differs (${got} tokens of ${TOKENS}): ${s.text.slice(0, 200)}`);
        }
      });
      directRound.forEach((s, i) => {
        if (s.text !== replyFor(`${ids[i]!}d`)) wrong++;
      });
      service.push(...viaRound.filter((s) => !Number.isNaN(s.ttfb)));
      provider.push(...directRound);
      console.log(`round ${round + 1}: service TTFB p50 ${ms(quantile(viaRound.map((s) => s.ttfb).filter((t) => !Number.isNaN(t)).sort((a, b) => a - b), 0.5))}, provider ${ms(quantile(directRound.map((s) => s.ttfb).sort((a, b) => a - b), 0.5))}`);
    }
    const cpuAfter = cpuAt();
    const serviceTtfb = service.map((s) => s.ttfb);
    const providerTtfb = provider.map((s) => s.ttfb);
    const sortedS = [...serviceTtfb].sort((a, b) => a - b);
    const sortedP = [...providerTtfb].sort((a, b) => a - b);
    console.log(`\n${machine()}`);
    console.log(`${ROUNDS} rounds of ${STREAMS} concurrent streams, ${TOKENS} tokens each, ${DELAY_MS} ms before every token (the first included); QUARRY_RAG_CONCURRENCY=${concurrency}`);
    console.log(`streams whose text was not exactly their own scripted text (dropped, duplicated or crossed tokens): ${wrong} of ${2 * ROUNDS * STREAMS}`);
    console.log(`time to first byte, through the service: ${summary(serviceTtfb)}`);
    console.log(`time to first byte, the provider's own:  ${summary(providerTtfb)}`);
    console.log(`added by the service: p50 ${ms(quantile(sortedS, 0.5) - quantile(sortedP, 0.5))}, p99 ${ms(quantile(sortedS, 0.99) - quantile(sortedP, 0.99))} (goal: < 50 ms)`);
    const perStream = Object.keys(cpuAfter).map((name) => `${name} ${(((cpuAfter[name]! - cpuBefore[name]!) * 1000) / (ROUNDS * STREAMS)).toFixed(2)}`);
    console.log(`CPU per stream through the service, ms (the bench's includes its direct requests; 10 ms ticks): ${perStream.join(', ')}`);
    console.log(`whole answer, through the service: ${summary(service.map((s) => s.total))}; provider's own: ${summary(provider.map((s) => s.total))}`);
  } finally {
    await stack.stop();
    await llm.close();
  }
}

await main();
