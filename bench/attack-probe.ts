/**
 * One attack of the catalog (`bench/lib/attacks.ts`), a few copies in flight for some seconds,
 * beside a victim tenant searching from its own thread; prints the victim's latency alone and
 * during the attack, and how the attacks were answered. The quick, repeatable form of the soak
 * for one attack (a profile of the processes: run with QUARRY_BENCH_NODE_ARGS='--cpu-prof
 * --cpu-prof-dir=/tmp/prof'). Starts its own stack from dist/ (`npm run build` first).
 *
 *   npx tsx bench/attack-probe.ts [--attack <part of its name>] [--seconds 6] [--copies 3] [--rounds 4] [--attacker-nice 10]
 *
 * The attacking client runs in a process of its own at nice 10 (see lib/attacker-process.ts:
 * its own CPU is not the service's; --attacker-nice 0 makes it an equal competitor for the cores).
 * Without --attack, every attack in turn. Each attack's seconds are cut into rounds, each a window
 * of the victim alone and then one under attack, and the two kinds of window are pooled: this
 * machine's speed drifts by tens of percent within seconds (other tenants of the host), and a
 * single "alone" window before a single "during" one measured that drift as often as the attack.
 */
import { AttackerProcess } from './lib/attacker-process.js';
import { ATTACKS, judge, type AttackOutcome, type AttackTarget } from './lib/attacks.js';
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
const rounds = Number(arg('rounds') ?? 4);
const attackerNice = Number(arg('attacker-nice') ?? 10);
/** Unmeasured pause after an attack window: what the attack left running (a snapshot, a collection) settles. */
const SETTLE_MS = 300;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** p50 / p99 / max of latencies, as text. */
function summary(latencies: readonly number[]): string {
  const sorted = Float64Array.from(latencies).sort();
  return `p50 ${quantile(sorted, 0.5).toFixed(1)} ms, p99 ${quantile(sorted, 0.99).toFixed(1)} ms, max ${sorted[sorted.length - 1]!.toFixed(1)} ms (${sorted.length})`;
}

const stack = await startBenchStack({ QUARRY_EMBED_JOBS: 'false' });
try {
  const { attacker, victim } = await attackerAndVictim(stack);
  const attackerProcess = await AttackerProcess.start(attackerNice);
  const target: AttackTarget = { baseUrl: stack.baseUrl, ...attacker, victim: { orgId: victim.orgId, datasetId: victim.datasetId } };
  const probe = await VictimProbe.start({ baseUrl: stack.baseUrl, headers: { authorization: victim.readKey, 'tr-dataset': victim.datasetId }, queries: syntheticQueries(200, 5) });
  console.log(`attack-probe: ${machine()}`);
  console.log(`attack-probe: victim 2,000 synthetic chunks searched (bm25, 10 results) from its own thread; ${copies} copies of each attack in flight for ${seconds} s, in ${rounds} rounds each after a window of the victim alone; the attacking client in its own process at nice ${attackerNice}`);
  try {
    for (const attack of ATTACKS.filter((a) => only === undefined || a.name.includes(only))) {
      const windowMs = (seconds * 1000) / rounds;
      const alone: number[] = [];
      const during: number[] = [];
      const outcomes: AttackOutcome[] = [];
      // The slowest search under attack: its round, and when it began in seconds into that round's attack.
      let slowest = { ms: 0, round: 0, at: 0 };
      for (let round = 0; round < rounds; round++) {
        await sleep(SETTLE_MS);
        alone.push(...(await probe.measure(Math.ceil(50 / rounds), () => sleep(windowMs / 2))).latencies);
        const window = await probe.measure(Math.ceil(30 / rounds), () =>
          attackerProcess.run({ target, attacks: [attack.name], loops: copies, ms: windowMs }, (o) => outcomes.push(o.outcome)),
        );
        let elapsed = 0;
        for (const ms of window.latencies) {
          if (ms > slowest.ms) slowest = { ms, round, at: elapsed / 1000 };
          elapsed += ms;
        }
        during.push(...window.latencies);
      }
      const wrong = outcomes.map((o) => judge(attack, o, target)).filter((v) => v !== null);
      const statuses = new Map<string, number>();
      for (const o of outcomes) statuses.set(String(o.status), (statuses.get(String(o.status)) ?? 0) + 1);
      const ratio = quantile(Float64Array.from(during).sort(), 0.99) / quantile(Float64Array.from(alone).sort(), 0.99);
      console.log(`${attack.name}`);
      console.log(`  victim alone  ${summary(alone)}`);
      // A one-off stall (a first load, a snapshot) shows up in round 0, early; contention anywhere.
      console.log(`  victim during ${summary(during)}; p99 ${ratio.toFixed(1)}x alone; slowest in round ${slowest.round + 1} of ${rounds}, ${slowest.at.toFixed(2)} s in`);
      console.log(`  attacks ${outcomes.length}: ${[...statuses].map(([s, n]) => `${s}×${n}`).join(' ')}${wrong.length ? `; WRONG: ${wrong.slice(0, 3).join('; ')}` : ''}`);
    }
  } finally {
    await probe.close();
    await attackerProcess.close();
  }
} finally {
  await stack.stop();
}
