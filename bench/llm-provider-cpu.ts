/**
 * CPU of the OpenAI-compatible provider's streamed answers alone (core/llm/openai-chat.ts): N
 * answers at once (`--streams`, default 100) from the fake provider (test/helpers/fake-llm.ts)
 * running in a child process, `--rounds` timed rounds after 3 untimed; prints this process's CPU
 * per answer: what a job worker spends on the provider call of each answer, without the rest of
 * the service and without the load of a whole stack. `--dist DIR` loads the provider from
 * another build (a base worktree's `dist`, for before/after).
 *
 *   npm run build && npx tsx bench/llm-provider-cpu.ts [--tokens 1] [--streams 100] [--rounds 20] [--dist DIR]
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GenerationRequest } from '../core/domain/rag.js';
import type { LlmProvider } from '../core/llm/provider.js';
import { startFakeLlm } from '../test/helpers/fake-llm.js';
import { machine } from './lib/spawn-stack.js';
import { repoRoot } from './lib/scifact.js';

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(name);
  return i > 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
const TOKENS = Number(arg('--tokens', '1'));
const STREAMS = Number(arg('--streams', '100'));
const ROUNDS = Number(arg('--rounds', '20'));
const DIST = path.resolve(arg('--dist', path.join(repoRoot, 'dist')));
/** Before every token, ms: the answers overlap as they do in a burst. */
const DELAY_MS = 20;

if (process.argv.includes('--serve')) {
  // The child: the fake provider, its CPU kept out of the parent's.
  const llm = await startFakeLlm();
  llm.script({ reply: Array.from({ length: TOKENS }, (_, i) => `w${i}`).join(' '), tokenDelayMs: DELAY_MS });
  console.log(llm.url);
} else {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--serve', '--tokens', String(TOKENS)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve) => child.stdout.once('data', (b: Buffer) => resolve(b.toString().trim())));
  try {
    const { createProvider } = (await import(path.join(DIST, 'core/llm/provider.js'))) as { createProvider: (e: { baseUrl: string; apiKey: string }, d: object) => LlmProvider };
    const provider = createProvider({ baseUrl: url, apiKey: '' }, {});
    const request = {
      ragType: 'chosen_chunks',
      systemPrompt: 'Be brief.',
      ragPrompt: '',
      docs: [],
      history: [],
      question: 'Why?',
      imageUrls: [],
      includeLinks: false,
      images: { use: false, perChunk: 1 },
      options: { model: 'm', temperature: 0.5, frequencyPenalty: 0.7, presencePenalty: 0.7, stopTokens: [] },
      endpoint: { baseUrl: url, apiKey: '' },
    } satisfies GenerationRequest;
    const one = async (): Promise<void> => {
      for await (const _ of provider.stream(request, new AbortController().signal));
    };
    const round = (): Promise<void[]> => Promise.all(Array.from({ length: STREAMS }, one));
    for (let i = 0; i < 3; i++) await round();
    const before = process.cpuUsage();
    for (let i = 0; i < ROUNDS; i++) await round();
    const used = process.cpuUsage(before);
    console.log(machine());
    console.log(`${DIST}: ${ROUNDS} rounds of ${STREAMS} streamed answers at once, ${TOKENS} tokens each`);
    console.log(`CPU per answer in this process: ${((used.user + used.system) / 1000 / (ROUNDS * STREAMS)).toFixed(3)} ms`);
  } finally {
    child.kill();
  }
}
