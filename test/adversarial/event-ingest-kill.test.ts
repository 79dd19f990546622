/**
 * Events acknowledged are events kept: several clients send user events without pause (each with
 * a unique `metadata.seq`, never sent twice) while the HTTP process, then the job workers, then
 * Redis are killed with SIGKILL and started again. Afterwards every event that got a 204 is in the
 * store once, under the id its `TR-Event-Id` named and with its seq; no seq is stored twice. (An
 * event whose answer was lost in a kill may or may not be stored: it was never acknowledged.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../helpers/api.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { startOwnRedis, type OwnRedis } from '../helpers/own-redis.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { queryStore } from '../helpers/store-snapshot.js';

const CLIENTS = 4;
/** How long ingest runs in each phase (before a kill, while down, after a restart), in ms. */
const PHASE_MS = 1500;

let redis: OwnRedis;
let stack: Stack;
let t: Tenant;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  redis = await startOwnRedis();
  stack = await startStack({ env: { QUARRY_REDIS_URL: redis.url } });
  t = await createTenant(stack);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await redis?.stop();
});

/** An acknowledged event: its seq and the id the answer named. */
interface Ack {
  readonly seq: number;
  readonly id: string;
}

describe('event ingest under kill -9', () => {
  it('keeps every acknowledged event exactly once through kills of the facade, the job workers and Redis', async () => {
    const acks: Ack[] = [];
    let nextSeq = 0;
    let sent = 0;
    let failed = 0;
    let running = true;
    const headers = { authorization: t.ownerKey, 'tr-dataset': t.datasetId };

    const clientLoop = async (client: number): Promise<void> => {
      while (running) {
        // A fresh seq per attempt: a request whose answer was lost is never sent again.
        const seq = nextSeq++;
        sent++;
        const types = ['view', 'click', 'add_to_cart'] as const;
        const type = types[seq % 3]!;
        const body = { event_type: type, event_name: `ingest ${seq}`, metadata: { seq, client }, ...(type === 'click' ? {} : { items: [`item-${seq}`] }) };
        try {
          const res = await request(stack.baseUrl, 'PUT', '/api/analytics/events', { body, headers });
          if (res.status === 204) acks.push({ seq, id: res.headers.get('tr-event-id')! });
          else {
            failed++;
            await sleep(20);
          }
        } catch {
          // Refused or reset while the facade is down.
          failed++;
          await sleep(20);
        }
      }
    };

    /** Acks during `ms`, counted. */
    const during = async (ms: number): Promise<number> => {
      const before = acks.length;
      await sleep(ms);
      return acks.length - before;
    };

    const clients = Array.from({ length: CLIENTS }, (_, i) => clientLoop(i));
    const progress: Record<string, number> = {};
    const lastBefore: Record<string, Ack | undefined> = {};
    try {
      progress.start = await during(PHASE_MS);

      lastBefore.facade = acks.at(-1);
      expect(await stack.kill('facade', 'SIGKILL')).toBe('SIGKILL');
      await sleep(300);
      await stack.start('facade');
      progress.afterFacade = await during(PHASE_MS);

      lastBefore.jobs = acks.at(-1);
      expect(await stack.kill('jobs', 'SIGKILL')).toBe('SIGKILL');
      progress.withoutJobs = await during(PHASE_MS);
      await stack.start('jobs');

      lastBefore.redis = acks.at(-1);
      await redis.kill();
      progress.withoutRedis = await during(PHASE_MS);
      await redis.start();
      progress.afterRedis = await during(PHASE_MS);
    } finally {
      running = false;
      await Promise.all(clients);
    }

    const context = `sent ${sent}, acknowledged ${acks.length}, failed ${failed}, by phase ${JSON.stringify(progress)}\n${stack.output().slice(-3000)}`;
    // Ingest went on in every phase: events never wait for the job workers or Redis.
    for (const [phase, n] of Object.entries(progress)) expect(n, `acknowledged during ${phase}: ${context}`).toBeGreaterThan(0);

    const rows = await queryStore<{ id: string; metadata: string }>(stack, 'SELECT id, metadata FROM user_events WHERE dataset_id = ?', t.datasetId);
    const stored = new Map<number, string[]>();
    for (const r of rows) {
      const seq = (JSON.parse(r.metadata) as { seq: number }).seq;
      stored.set(seq, [...(stored.get(seq) ?? []), r.id]);
    }
    const twice = [...stored].filter(([, ids]) => ids.length > 1);
    expect(twice, `seqs stored more than once: ${context}`).toEqual([]);
    const lost = acks.filter((a) => stored.get(a.seq)?.[0] !== a.id);
    expect(lost, `acknowledged events missing or under another id: ${context}`).toEqual([]);
    // Nothing stored that was never sent.
    expect(rows.length).toBeLessThanOrEqual(sent);
    expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);

    // The last event acknowledged before each kill, read back through the API by its TR-Event-Id.
    for (const [what, ack] of Object.entries(lastBefore)) {
      expect(ack, `an event acknowledged before killing ${what}`).toBeDefined();
      const res = await request(stack.baseUrl, 'GET', `/api/analytics/events/${ack!.id}`, { headers });
      expect(res.status, `${what}: ${res.text}`).toBe(200);
      expect(JSON.parse(res.body.metadata).seq).toBe(ack!.seq);
    }
  }, 90_000);
});
