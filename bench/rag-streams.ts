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
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { fakeTokens, startFakeLlm } from '../test/helpers/fake-llm.js';
import { quantile } from './lib/metrics.js';
import { cpuSeconds } from './lib/rss-sampler.js';
import { machine, startBenchStack } from './lib/spawn-stack.js';
import { benchTenant } from './lib/tenant.js';
import { numberArg } from './lib/args.js';

const STREAMS = numberArg('--streams', 100);
const TOKENS = numberArg('--tokens', 40);
const DELAY_MS = numberArg('--delay', 50);
const ROUNDS = numberArg('--rounds', 3);

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

/**
 * The bench's HTTP client, for both paths alike: node:http on a keep-alive agent. The bench runs
 * on the same 2 cores as the service, and the global fetch (web streams, a promise per read)
 * cost the bench ~0.8 ms of CPU per stream start: CPU the service's processes then waited for
 * in the 100-stream burst, inflating the service's time to first byte more than the provider's.
 */
const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });

/**
 * POSTs `body` to `url` and reads the streamed response to its end: `onData` gets each piece of
 * the body and says whether it held the first byte that counts (`ttfb` is taken then).
 */
function postStream(url: string, headers: Record<string, string>, body: string, onData: (piece: string) => boolean): Promise<Streamed> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      res.setEncoding('utf8');
      let ttfb = -1;
      if (res.statusCode !== 200) {
        let text = '';
        res.on('data', (piece: string) => (text += piece));
        res.on('end', () => reject(new Error(`status ${res.statusCode}: ${text}`)));
        return;
      }
      res.on('data', (piece: string) => {
        if (onData(piece) && ttfb < 0) ttfb = performance.now() - started;
      });
      res.on('end', () => resolve({ ttfb, total: performance.now() - started, text: '' }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A request straight to the fake provider (SSE), timed to its first content delta. */
async function direct(url: string, id: string): Promise<Streamed> {
  let buffered = '';
  let text = '';
  const body = JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: `Answer request ${id}.` }] });
  const s = await postStream(`${url}/chat/completions`, { 'content-type': 'application/json' }, body, (piece) => {
    buffered += piece;
    let delta = '';
    let end: number;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const line = buffered.slice(0, end).replace(/^data: /, '');
      buffered = buffered.slice(end + 2);
      if (line === '[DONE]') continue;
      delta += (JSON.parse(line) as { choices: { delta?: { content?: string } }[] }).choices[0]?.delta?.content ?? '';
    }
    text += delta;
    return delta !== '';
  });
  return { ...s, text };
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
      let text = '';
      const body = JSON.stringify({ prev_messages: [{ role: 'user', content: `Answer request ${id}.` }], chunk_ids: [] });
      const s = await postStream(`${stack.baseUrl}/api/chunk/generate`, headers, body, (piece) => {
        text += piece;
        return piece !== '';
      });
      return { ...s, text };
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
