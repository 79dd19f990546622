/**
 * One tenant attacks, another searches. For every hostile request of the catalog
 * (`bench/lib/attacks.ts`): the attack gets a 4xx or a bounded answer, and meanwhile the other
 * tenant's searches return exactly what they returned before, with a p99 latency within 3x of
 * its own measured just before, or under a floor. The victim searches from a thread of its own,
 * warmed up first (`bench/lib/victim-probe.ts`): alone, its p99 is 5-15 ms here.
 *
 * The floor (250 ms) is what this suite can hold on a shared 2-core machine, where the attacker's
 * accepted work (200 KB chunks, 100-chunk batches racing fulltext searches, 1 MB bodies refused
 * after parsing) keeps both cores busy and the victim's p99 rises 2-5x, occasionally more, with
 * 30-100 samples per attack. Every bug this guards against stalled the other tenant for 4 to 60
 * seconds, 16x and more above the floor. The ratio itself, the 3x goal, is measured with
 * many more samples by `bench/attack-probe.ts` (per attack) and `bench/soak.ts` (10 minutes).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ATTACKS, judge, prepareAttackBodies, type AttackOutcome, type AttackTarget } from '../../bench/lib/attacks.js';
import { VictimProbe } from '../../bench/lib/victim-probe.js';
import { client, type Client } from '../helpers/api.js';
import { createKey, createTenant, type Tenant } from '../helpers/fixtures.js';
import { randomChunks, randomQuery, rng } from '../helpers/random-corpus.js';
import { startStack, type Stack } from '../helpers/stack.js';

/** Lowest p99 bound for the victim during an attack, in ms (see the file comment). */
const P99_FLOOR_MS = 250;
/** Copies of each attack in flight at once. */
const CONCURRENCY = 3;
/** Victim searches measured during each attack, at least. */
const MIN_SAMPLES = 30;
/** Victim searches measured alone just before each attack. */
const ALONE_SAMPLES = 40;
/** Each attack repeats (CONCURRENCY at a time) for this long, within the round bounds. */
const ATTACK_WINDOW_MS = 1000;
const MIN_ROUNDS = 2;
const MAX_ROUNDS = 20;

let stack: Stack;
let attacker: Tenant;
let victim: Tenant;
let victimRead: Client;
let target: AttackTarget;
const queries: string[] = [];
/** The victim's answers before any attack: ids and scores per query, and the chunk count. */
let expected: string[] = [];
let expectedCount = 0;
let victimKey = '';
/** The victim's searches, timed from their own thread (warm before any measure). */
let probe: VictimProbe;

function p99(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!;
}

/** The victim's answer to query `i`, as a comparable string. */
async function victimAnswer(i: number): Promise<{ answer: string; ms: number }> {
  const started = performance.now();
  let res;
  try {
    res = await victimRead.post('/api/chunk/search', { query: queries[i], search_type: 'bm25', page_size: 10 });
  } catch (err) {
    // A stalled service times the client out: a wrong answer, not a crash of the test.
    return { answer: `no answer: ${(err as Error).message}`, ms: performance.now() - started };
  }
  const ms = performance.now() - started;
  if (res.status !== 200) return { answer: `status ${res.status}: ${res.text.slice(0, 300)}`, ms };
  const hits = (res.body.chunks as { chunk: { id: string }; score: number }[]).map((h) => `${h.chunk.id}:${h.score.toFixed(6)}`);
  return { answer: hits.join(','), ms };
}

async function victimCount(): Promise<number> {
  const res = await victimRead.post('/api/chunk/count', { query: 'alpha beta gamma delta protein cells', search_type: 'bm25' });
  expect(res.status, res.text).toBe(200);
  return res.body.count as number;
}

beforeAll(async () => {
  stack = await startStack();
  [attacker, victim] = await Promise.all([createTenant(stack), createTenant(stack)]);
  const chunks = randomChunks(200, 91);
  for (let i = 0; i < chunks.length; i += 100) {
    const res = await victim.ds.post('/api/chunk', chunks.slice(i, i + 100));
    expect(res.status, res.text).toBe(200);
  }
  const attackerChunks = await attacker.ds.post('/api/chunk', randomChunks(100, 92));
  expect(attackerChunks.status, attackerChunks.text).toBe(200);
  victimKey = await createKey(stack, victim.orgId, { role: 0 });
  victimRead = client(stack.baseUrl, { authorization: victimKey, 'tr-dataset': victim.datasetId });
  target = {
    baseUrl: stack.baseUrl,
    orgId: attacker.orgId,
    ownerKey: attacker.ownerKey,
    readKey: await createKey(stack, attacker.orgId, { role: 0 }),
    datasetId: attacker.datasetId,
    victim: { orgId: victim.orgId, datasetId: victim.datasetId },
  };
  const r = rng(7);
  for (let i = 0; i < 8; i++) queries.push(randomQuery(r));
  expected = [];
  for (let i = 0; i < queries.length; i++) expected.push((await victimAnswer(i)).answer);
  expect(expected.filter((a) => a.length > 0).length).toBeGreaterThan(4);
  expectedCount = await victimCount();
  // Built now, not while the victim is timed from this same process.
  prepareAttackBodies();
  expect(expectedCount).toBeGreaterThan(100);
  // Warm, then measure the victim alone, through the same probe as during the attacks.
  for (let i = 0; i < 40; i++) await victimAnswer(i % queries.length);
  probe = await VictimProbe.start({ baseUrl: stack.baseUrl, headers: { authorization: victimKey, 'tr-dataset': victim.datasetId }, queries });
  await probe.expect(expected);
  const alone = await probe.measure(ALONE_SAMPLES, async () => undefined);
  expect(alone.wrong).toEqual([]);
}, 180_000);

afterAll(async () => {
  await probe?.close();
  await stack?.stop();
});

describe('one tenant attacks, the other is unharmed', () => {
  for (const attack of ATTACKS) {
    it(
      attack.name,
      async () => {
        // The victim alone just before, so that both figures see the same load on the machine.
        const before = await probe.measure(ALONE_SAMPLES, async () => undefined);
        expect(before.wrong).toEqual([]);
        const aloneP99 = p99(before.latencies);
        const outcomes: AttackOutcome[] = [];
        const { latencies, wrong } = await probe.measure(MIN_SAMPLES, async () => {
          const started = performance.now();
          for (let round = 0; round < MAX_ROUNDS && (round < MIN_ROUNDS || performance.now() - started < ATTACK_WINDOW_MS); round++) {
            outcomes.push(...(await Promise.all(Array.from({ length: CONCURRENCY }, () => attack.run(target)))));
          }
        });
        const verdicts = outcomes.map((o) => judge(attack, o, target)).filter((v) => v !== null);
        expect(verdicts, `the attack's answers`).toEqual([]);
        expect(wrong, 'the victim got different answers during the attack').toEqual([]);
        const bound = Math.max(3 * aloneP99, P99_FLOOR_MS);
        const during = p99(latencies);
        console.log(`${attack.name}: victim p99 alone ${aloneP99.toFixed(1)} ms, during ${during.toFixed(1)} ms (${latencies.length} searches, ${outcomes.length} attacks)`);
        expect(during, `victim p99 during the attack (alone just before: ${aloneP99.toFixed(1)} ms; ${latencies.length} samples)`).toBeLessThanOrEqual(bound);
        const health = await client(stack.baseUrl).get('/api/health');
        expect(health.status, health.text).toBe(200);
        expect(await victimCount()).toBe(expectedCount);
      },
      120_000,
    );
  }

  it('the victim still has every chunk and the same answers after all the attacks', async () => {
    expect(await victimCount()).toBe(expectedCount);
    for (let i = 0; i < queries.length; i++) expect((await victimAnswer(i)).answer).toBe(expected[i]);
  });
});
