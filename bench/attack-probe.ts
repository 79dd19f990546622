/**
 * One attack of the catalog (`bench/lib/attacks.ts`), a few copies in flight for some seconds,
 * beside a victim tenant searching from its own thread; prints the victim's latency alone and
 * during the attack, and how the attacks were answered. The quick, repeatable form of the soak
 * for one attack (a profile of the processes: run with QUARRY_BENCH_NODE_ARGS='--cpu-prof
 * --cpu-prof-dir=/tmp/prof'). Starts its own stack from dist/ (`npm run build` first).
 *
 *   npx tsx bench/attack-probe.ts [--attack <part of its name>] [--seconds 6] [--copies 3]
 *
 * Without --attack, every attack in turn.
 */
import { ATTACKS, judge, prepareAttackBodies, type AttackOutcome, type AttackTarget } from './lib/attacks.js';
import { quantile } from './lib/metrics.js';
import { machine, startBenchStack } from './lib/spawn-stack.js';
import { syntheticQueries } from './lib/synthetic.js';
import { attackerAndVictim } from './lib/tenant.js';
import { VictimProbe } from './lib/victim-probe.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}
const only = arg('attack');
const seconds = Number(arg('seconds') ?? 6);
const copies = Number(arg('copies') ?? 3);

/** p50 / p99 / max of latencies, as text. */
function summary(latencies: readonly number[]): string {
  const sorted = Float64Array.from(latencies).sort();
  return `p50 ${quantile(sorted, 0.5).toFixed(1)} ms, p99 ${quantile(sorted, 0.99).toFixed(1)} ms, max ${sorted[sorted.length - 1]!.toFixed(1)} ms (${sorted.length})`;
}

const stack = await startBenchStack({ QUARRY_EMBED_JOBS: 'false' });
try {
  const { attacker, victim } = await attackerAndVictim(stack);
  prepareAttackBodies();
  const target: AttackTarget = { baseUrl: stack.baseUrl, ...attacker, victim: { orgId: victim.orgId, datasetId: victim.datasetId } };
  const probe = await VictimProbe.start({ baseUrl: stack.baseUrl, headers: { authorization: victim.readKey, 'tr-dataset': victim.datasetId }, queries: syntheticQueries(200, 5) });
  console.log(`attack-probe: ${machine()}`);
  console.log(`attack-probe: victim 2,000 synthetic chunks searched (bm25, 10 results) from its own thread; ${copies} copies of each attack in flight for ${seconds} s`);
  try {
    for (const attack of ATTACKS.filter((a) => only === undefined || a.name.includes(only))) {
      const alone = await probe.measure(50, () => new Promise((r) => setTimeout(r, (seconds * 1000) / 2)));
      const outcomes: AttackOutcome[] = [];
      const until = Date.now() + seconds * 1000;
      const during = await probe.measure(30, () =>
        Promise.all(Array.from({ length: copies }, async () => {
          while (Date.now() < until) outcomes.push(await attack.run(target));
        })),
      );
      const wrong = outcomes.map((o) => judge(attack, o, target)).filter((v) => v !== null);
      const statuses = new Map<string, number>();
      for (const o of outcomes) statuses.set(String(o.status), (statuses.get(String(o.status)) ?? 0) + 1);
      const ratio = quantile(Float64Array.from(during.latencies).sort(), 0.99) / quantile(Float64Array.from(alone.latencies).sort(), 0.99);
      console.log(`${attack.name}`);
      console.log(`  victim alone  ${summary(alone.latencies)}`);
      // When the slowest search started, in seconds into the attack: a one-off stall (a first
      // load, a snapshot) shows up early, contention anywhere.
      const slowest = during.latencies.indexOf(Math.max(...during.latencies));
      const slowestAt = during.latencies.slice(0, slowest).reduce((a, b) => a + b, 0) / 1000;
      console.log(`  victim during ${summary(during.latencies)}; p99 ${ratio.toFixed(1)}x alone; slowest began ${slowestAt.toFixed(2)} s in`);
      console.log(`  attacks ${outcomes.length}: ${[...statuses].map(([s, n]) => `${s}×${n}`).join(' ')}${wrong.length ? `; WRONG: ${wrong.slice(0, 3).join('; ')}` : ''}`);
    }
  } finally {
    await probe.close();
  }
} finally {
  await stack.stop();
}
