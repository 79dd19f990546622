/**
 * The supervisor started the way up.sh starts it (`run-all.js --redis-port --redis-dir`) owns its
 * Redis: a Redis killed with SIGKILL comes back on the same port with its data (same dir and AOF),
 * and the other processes recover: a chunk created afterwards is embedded and found by semantic
 * search. A requested stop stops Redis last.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type Client } from '../helpers/api.js';
import { FAKE_DIM, startFakeEmbeddings, type FakeEmbeddings } from '../helpers/fake-embeddings.js';
import { createDataset, createTenant } from '../helpers/fixtures.js';
import { freePort, randomKey, waitHealthy, type Stack } from '../helpers/stack.js';
import { eventually } from '../helpers/eventually.js';
import { PROCESS_ENV_DEFAULTS } from '../../core/process-env.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

let dataDir: string;
let redisDir: string;
let redisPort: number;
let baseUrl: string;
let adminKey: string;
let supervisor: ChildProcess;
let log = '';
let fake: FakeEmbeddings;
let ds: Client;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const redisPid = (): number => Number(fs.readFileSync(path.join(redisDir, 'redis.pid'), 'utf8').trim());

/** Polls until `fn` holds or the timeout passes (the message says what did not happen). */
const holds = (what: string, timeoutMs: number, fn: () => Promise<boolean>): Promise<true> =>
  eventually({ what, timeoutMs, intervalMs: 200, context: () => log.slice(-4000) }, async () => (await fn()) || undefined);

async function ping(): Promise<boolean> {
  const r = new Redis(`redis://127.0.0.1:${redisPort}`, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  r.on('error', () => {});
  try {
    await r.connect();
    return (await r.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

/** Whether a semantic search finds a chunk with this tracking id. */
async function found(trackingId: string, query: string): Promise<boolean> {
  const res = await ds.post('/api/chunk/search', { query, search_type: 'semantic', page_size: 10 });
  return res.status === 200 && res.body.chunks.some((c: any) => c.chunk.tracking_id === trackingId);
}

beforeAll(async () => {
  fake = await startFakeEmbeddings();
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-supervised-'));
  redisDir = path.join(dataDir, 'redis');
  [redisPort] = [await freePort()];
  const [httpPort, grpcPort] = [await freePort(), await freePort()];
  adminKey = randomKey();
  baseUrl = `http://127.0.0.1:${httpPort}`;
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? os.tmpdir(),
    NODE_ENV: 'test',
    QUARRY_DATA_DIR: dataDir,
    QUARRY_REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    QUARRY_HTTP_PORT: String(httpPort),
    QUARRY_GRPC_PORT: String(grpcPort),
    QUARRY_CORE_ADDRESS: `127.0.0.1:${grpcPort}`,
    ADMIN_API_KEY: adminKey,
    QUARRY_LOG_LEVEL: 'info',
    QUARRY_EMBED_JOBS: 'true',
    QUARRY_EMBED_BACKOFF_MS: '50',
    QUARRY_EMBED_THREADS: '1',
    QUARRY_SHARD_THREADS: '1',
  };
  supervisor = spawn(process.execPath, [path.join(ROOT, 'dist/deploy/run-all.js'), '--redis-port', String(redisPort), '--redis-dir', redisDir], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  supervisor.stdout!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-200_000)));
  supervisor.stderr!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-200_000)));
  await waitHealthy(baseUrl, 60_000, () => log);
  const stack = { baseUrl, adminKey } as Stack;
  const tenant = await createTenant(stack);
  const datasetId = await createDataset(stack, tenant.orgId, tenant.ownerKey, {
    server_configuration: { EMBEDDING_BASE_URL: fake.baseUrl, EMBEDDING_MODEL_NAME: 'fake', EMBEDDING_SIZE: FAKE_DIM },
  });
  ds = client(baseUrl, { authorization: tenant.ownerKey, 'tr-dataset': datasetId });
}, 90_000);

afterAll(async () => {
  if (supervisor && supervisor.exitCode === null && supervisor.signalCode === null) {
    supervisor.kill('SIGTERM');
    await Promise.race([new Promise((r) => supervisor.once('exit', r)), sleep(30_000)]);
    supervisor.kill('SIGKILL');
  }
  // Whatever happened above, no redis-server of this test may outlive it.
  try {
    const pid = redisPid();
    if (alive(pid)) process.kill(pid, 'SIGKILL');
  } catch {
    /* no pidfile */
  }
  await fake?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('supervised Redis', () => {
  it('starts every child with the C library settings of core/process-env.ts the operator did not set', () => {
    const children = fs
      .readdirSync(`/proc/${supervisor.pid}/task`)
      .flatMap((tid) => fs.readFileSync(`/proc/${supervisor.pid}/task/${tid}/children`, 'utf8').split(' '))
      .filter((c) => c.trim() !== '');
    // The HTTP process (with the core) and the job workers. (redis-server writes its process title
    // over the memory /proc shows as its environment, so it is not read.)
    const nodes = children.filter((pid) => fs.readlinkSync(`/proc/${pid}/exe`) === fs.realpathSync(process.execPath));
    expect(nodes.length).toBeGreaterThanOrEqual(2);
    for (const pid of nodes) {
      const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      for (const [name, value] of Object.entries(PROCESS_ENV_DEFAULTS)) expect(environ).toContain(`${name}=${value}`);
    }
  });

  it('restarts a Redis killed with SIGKILL, keeping its data, and the stack recovers', async () => {
    expect((await ds.post('/api/chunk', { chunk_html: 'first okapi rainforest', tracking_id: 'before' })).status).toBe(200);
    await holds('the first chunk was not embedded', 30_000, () => found('before', 'okapi rainforest'));

    // Older than the AOF's one-second fsync, so it must survive the kill.
    const r = new Redis(`redis://127.0.0.1:${redisPort}`);
    await r.set('quarry:test:marker', 'kept');
    r.disconnect();
    await sleep(1_500);

    const first = redisPid();
    process.kill(first, 'SIGKILL');
    await holds('redis did not die', 5_000, async () => !alive(first));
    await holds('redis was not restarted', 30_000, async () => (await ping()) && redisPid() !== first);

    const r2 = new Redis(`redis://127.0.0.1:${redisPort}`);
    expect(await r2.get('quarry:test:marker')).toBe('kept');
    r2.disconnect();

    // The facade enqueues again and the job workers take jobs again.
    await holds('the facade did not accept a chunk', 30_000, async () => (await ds.post('/api/chunk', { chunk_html: 'second pangolin savanna', tracking_id: 'after' })).status === 200);
    await holds('the chunk created after the restart was not embedded', 60_000, () => found('after', 'pangolin savanna'));
  }, 180_000);

  it('stops Redis last on a requested stop', async () => {
    const pid = redisPid();
    supervisor.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => supervisor.once('exit', (c) => resolve(c)));
    const lines = log.split('\n').filter((l) => !l.includes('ECONNREFUSED'));
    expect(code, lines.slice(-60).join('\n')).toBe(0);
    expect(alive(pid)).toBe(false);
    expect(log).toMatch(/"child":"redis"[^\n]*"child stopped"|child stopped[^\n]*"child":"redis"/);
  }, 60_000);
});
