/**
 * Soak: every attack of `bench/lib/attacks.ts` in a loop for minutes, while another tenant
 * searches. Prints, each minute and at the end, the victim's latency, how the attacks were
 * answered, any wrong answer (exit code 1), how many attacks took longer than their bound (printed,
 * not a failure: with two attack loops a cheap request of the attacker also waits behind the
 * other loop's heavy ones, its own tenant's queue), and the resident memory of every process
 * (Redis, core, HTTP API, job workers) at the start and the end. Starts its own stack from dist/
 * (`npm run build` first).
 *
 *   npx tsx bench/soak.ts [--minutes 10] [--attackers 2] [--victims 2] [--embed] [--attacker-nice 10]
 *
 * The attack loops run in a process of their own at nice 10 (lib/attacker-process.ts: the
 * attacking client's CPU is not the service's; 0 makes it an equal competitor for the cores).
 * `--embed` keeps background embedding on (the embedded model then embeds every chunk the
 * attacks write, which is CPU the victim shares); by default it is off, as in the test suite.
 */
import fs from 'node:fs';
import { AttackerProcess } from './lib/attacker-process.js';
import { ATTACKS, judgeAnswer, type AttackTarget } from './lib/attacks.js';
import { quantile } from './lib/metrics.js';
import { machine, startBenchStack, type BenchStack } from './lib/spawn-stack.js';
import { attackerAndVictim } from './lib/tenant.js';
import { syntheticQueries } from './lib/synthetic.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) || fallback : fallback;
}
const minutes = arg('minutes', 10);
const attackers = arg('attackers', 2);
const victims = arg('victims', 2);
const embed = process.argv.includes('--embed');
const attackerNice = arg('attacker-nice', 10);

/** Resident set size of a process in MiB, from /proc (0 when it is gone). */
function rssMiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

function rssLine(stack: BenchStack): string {
  return Object.entries(stack.pids)
    .map(([name, pid]) => `${name} ${rssMiB(pid).toFixed(0)} MiB`)
    .join(', ');
}

async function main(): Promise<void> {
  const stack = await startBenchStack({ QUARRY_EMBED_JOBS: embed ? 'true' : 'false' });
  try {
    const { attacker, victim } = await attackerAndVictim(stack);
    const queries = syntheticQueries(200, 5);
    const target: AttackTarget = { baseUrl: stack.baseUrl, ...attacker, victim: { orgId: victim.orgId, datasetId: victim.datasetId } };
    const victimHeaders = { authorization: victim.readKey, 'tr-dataset': victim.datasetId };

    console.log(`soak: ${machine()}`);
    console.log(`soak: ${minutes} min, ${attackers} attack loops over ${ATTACKS.length} attacks, ${victims} victim search loops, victim 2,000 synthetic chunks, embedding ${embed ? 'on' : 'off'}`);
    const attackerProcess = await AttackerProcess.start(attackerNice);
    console.log(`soak: the attacking client in its own process at nice ${attackerNice}`);
    const startRss = rssLine(stack);
    console.log(`start RSS: ${startRss}`);

    // The victim alone first (30 s), so that the figures under attack have a reference.
    let until = Date.now() + 30_000;
    const alone: number[] = [];
    const victimSearch = async (i: number): Promise<number> => {
      const started = performance.now();
      const res = await fetch(`${stack.baseUrl}/api/chunk/search`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...victimHeaders },
        body: JSON.stringify({ query: queries[i % queries.length], search_type: 'bm25', page_size: 10 }),
      }).catch(() => undefined);
      await res?.arrayBuffer();
      if (res?.status !== 200) victimErrors++;
      return performance.now() - started;
    };
    let victimErrors = 0;
    await Promise.all(
      Array.from({ length: victims }, async (_, v) => {
        for (let i = v * 17; Date.now() < until; i++) alone.push(await victimSearch(i));
      }),
    );
    const aloneSorted = Float64Array.from(alone).sort();
    console.log(`victim alone: ${alone.length} searches, p50 ${quantile(aloneSorted, 0.5).toFixed(2)} ms, p99 ${quantile(aloneSorted, 0.99).toFixed(2)} ms`);

    until = Date.now() + minutes * 60_000;
    let window: number[] = [];
    const all: number[] = [];
    const statuses = new Map<string, number>();
    const failures: string[] = [];
    let attacksDone = 0;
    let overBound = 0;
    let slowestOver = { name: '', ms: 0 };

    const victimLoop = async (seed: number) => {
      for (let i = seed; Date.now() < until; i++) {
        const ms = await victimSearch(i);
        window.push(ms);
        all.push(ms);
      }
    };
    const attackLoops = (): Promise<void> =>
      attackerProcess.run(
        { target, attacks: ATTACKS.map((a) => a.name), loops: attackers, offsets: Array.from({ length: attackers }, (_, i) => i * 5), ms: until - Date.now() },
        ({ name, outcome }) => {
          const attack = ATTACKS.find((a) => a.name === name)!;
          attacksDone++;
          const key = String(outcome.status);
          statuses.set(key, (statuses.get(key) ?? 0) + 1);
          const verdict = judgeAnswer(attack, outcome, target);
          if (verdict && failures.length < 50) failures.push(`${attack.name}: ${verdict}`);
          // Over its time bound: reported apart. Here an attack's time includes waiting behind the
          // other attack loop's requests of the same tenant (one read and one write at a time while
          // the victim is active), e.g. a cheap probe behind six serialized slow searches.
          if (outcome.ms > attack.maxMs) {
            overBound++;
            if (outcome.ms > slowestOver.ms) slowestOver = { name: attack.name, ms: outcome.ms };
          }
        },
      );
    const reporter = setInterval(() => {
      const sorted = Float64Array.from(window).sort();
      window = [];
      console.log(
        `${new Date().toISOString()} victim p50 ${quantile(sorted, 0.5).toFixed(2)} ms p99 ${quantile(sorted, 0.99).toFixed(2)} ms (${sorted.length} searches); attacks ${attacksDone}; wrong ${failures.length}; RSS ${rssLine(stack)}`,
      );
    }, 60_000);
    await Promise.all([...Array.from({ length: victims }, (_, i) => victimLoop(i * 17)), attackLoops()]);
    clearInterval(reporter);
    await attackerProcess.close();

    const sorted = Float64Array.from(all).sort();
    console.log('');
    console.log(`start RSS: ${startRss}`);
    console.log(`end RSS:   ${rssLine(stack)}`);
    // The core holds what the attacks legitimately wrote (racing writes, accepted HTML chunks): say how much.
    for (const [name, t] of [['attacker', attacker], ['victim', victim]] as const) {
      const res = await fetch(`${stack.baseUrl}/api/dataset/usage/${t.datasetId}`, { headers: { authorization: t.ownerKey, 'tr-dataset': t.datasetId } });
      const usage = (await res.json()) as { chunk_count?: number };
      console.log(`${name} dataset: ${usage.chunk_count ?? '?'} chunks`);
    }
    console.log(`victim alone: p50 ${quantile(aloneSorted, 0.5).toFixed(2)} ms, p99 ${quantile(aloneSorted, 0.99).toFixed(2)} ms`);
    console.log(`victim under attack: ${sorted.length} searches, p50 ${quantile(sorted, 0.5).toFixed(2)} ms, p99 ${quantile(sorted, 0.99).toFixed(2)} ms, max ${sorted[sorted.length - 1]?.toFixed(0)} ms, non-200 ${victimErrors}`);
    console.log(`victim p99 under attack / alone: ${(quantile(sorted, 0.99) / quantile(aloneSorted, 0.99)).toFixed(2)}x`);
    console.log(`attacks: ${attacksDone}, answers by status: ${[...statuses].map(([s, n]) => `${s}×${n}`).join(' ')}`);
    console.log(failures.length === 0 ? 'every attack answered as it should' : `wrong answers (first ${failures.length}):\n  ${failures.join('\n  ')}`);
    console.log(`attacks over their time bound (own tenant's queue included): ${overBound}${overBound ? `, slowest ${slowestOver.name} ${Math.round(slowestOver.ms)} ms` : ''}`);
    process.exitCode = failures.length === 0 && victimErrors === 0 ? 0 : 1;
  } finally {
    await stack.stop();
  }
}

await main();
