/**
 * Starts the real quarry processes from dist/ for one test file, in the default topology (the
 * HTTP process hosting the core, and the job workers) or, with QUARRY_CORE_IN_PROCESS=false in
 * the options' env, the separate-core one (core, facade, job workers): fresh temp data dir, free
 * loopback ports, a random ADMIN_API_KEY, and a Redis database index of its own so stacks of
 * different files never share BullMQ queues.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { inject } from 'vitest';
import { freePort } from './global-setup.js';
import { migratedPgDatabase, testStore } from './pg.js';
import { PROCESS_ENV_DEFAULTS } from '../../core/process-env.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The processes of a stack. */
export type ProcessName = 'core' | 'facade' | 'jobs';

/** The build to run: dist/ of this checkout unless QUARRY_TEST_DIST_DIR names another one. */
const DIST = path.resolve(ROOT, process.env.QUARRY_TEST_DIST_DIR || 'dist');
const ENTRY: Record<ProcessName, string> = {
  core: path.join(DIST, 'core/main.js'),
  facade: path.join(DIST, 'facade/main.js'),
  jobs: path.join(DIST, 'workers/jobs/main.js'),
};

/** The compiled entry script of a process (what a stack runs with this Node). */
export function processEntry(name: ProcessName): string {
  return ENTRY[name];
}

/** Options of {@link startStack}. */
export interface StackOptions {
  /**
   * Extra environment for every process (e.g. QUARRY_BODY_LIMIT_BYTES). QUARRY_CORE_IN_PROCESS
   * `false` runs the core as a process of its own, which a test can then kill and restart alone.
   */
  env?: Record<string, string>;
}

/** A running stack. */
export interface Stack {
  readonly baseUrl: string;
  readonly adminKey: string;
  readonly dataDir: string;
  /** The PostgreSQL database the stack stores into (vitest project `postgres`), or null: SQLite in {@link dataDir}. */
  readonly databaseUrl: string | null;
  readonly env: Record<string, string>;
  /** SIGTERMs every process (SIGKILL after 15 s), then removes the data dir. Idempotent. */
  stop(): Promise<void>;
  /** Sends a signal to one process and waits until it has exited (SIGKILL after `killAfterMs`, default 15 s); returns its exit code or signal. */
  kill(name: ProcessName, signal?: NodeJS.Signals, killAfterMs?: number): Promise<number | string | null>;
  /** (Re)starts one process with the same environment; for the facade, waits for health 200. */
  start(name: ProcessName): Promise<void>;
  /** Captured stdout/stderr of every process so far (for diagnostics). */
  output(): string;
  /** Exit codes/signals of processes that have exited, by name (last exit). */
  readonly exits: Partial<Record<ProcessName, number | string | null>>;
  /** The process id of a running process, or undefined. */
  pid(name: ProcessName): number | undefined;
}

const live = new Set<ChildProcess>();
const killLive = () => {
  for (const child of live) child.kill('SIGKILL');
};
// Last resort: a test worker that exits or is told to stop must not leave processes behind.
process.once('exit', killLive);
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
  process.once(signal, () => {
    killLive();
    // Our listener is gone now ('once'): re-raise so the default action (or vitest's) still runs.
    process.kill(process.pid, signal);
  });
}

/** A free loopback TCP port (shared with the global setup). */
export { freePort };

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** `tr-` + 32 alphanumerics, the shape of a real key. */
export function randomKey(): string {
  return 'tr-' + [...randomBytes(32)].map((b) => ALNUM[b % 62]).join('');
}

/**
 * Allocates a Redis database index for this stack, in turn over 1..databases-1 (the test Redis has
 * 1,024, so no two stacks of a run share one), and empties it.
 */
export async function allocateRedisDb(baseUrl: string): Promise<string> {
  const admin = new Redis(baseUrl, { maxRetriesPerRequest: 2, lazyConnect: true });
  try {
    await admin.connect();
    const n = await admin.incr('quarry:test:stack-db-counter');
    const [, count] = (await admin.config('GET', 'databases')) as [string, string];
    const db = ((n - 1) % (Number(count) - 1)) + 1;
    await admin.select(db);
    // Leftovers of an earlier run with the same index would feed this stack stale jobs.
    await admin.flushdb();
    const url = new URL(baseUrl);
    url.pathname = `/${db}`;
    return url.toString();
  } finally {
    admin.disconnect();
  }
}

/** Polls GET /api/health until 200 or the timeout. */
export async function waitHealthy(baseUrl: string, timeoutMs: number, describe: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${baseUrl}/api/health`, { signal: AbortSignal.timeout(3000) });
      const text = await res.text();
      if (res.status === 200) return;
      last = `${res.status} ${text}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`stack did not become healthy within ${timeoutMs} ms (last: ${last})\n${describe()}`);
}

/** Starts a stack; call `stop()` in afterAll. */
export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-stack-'));
  const [httpPort, grpcPort] = [await freePort(), await freePort()];
  const adminKey = randomKey();
  const redisUrl = await allocateRedisDb(inject('redisUrl'));
  // In the vitest project `postgres` every stack stores into a database of its own.
  // A test may bring its own (QUARRY_DATABASE_URL in opts.env): the stack then neither creates nor drops one.
  const given = opts.env?.QUARRY_DATABASE_URL;
  const database = !given && testStore() === 'postgres' ? await migratedPgDatabase() : null;
  const env: Record<string, string> = {
    // The C library's settings every deployment starts the processes with (deploy/run-all.ts).
    ...PROCESS_ENV_DEFAULTS,
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? os.tmpdir(),
    NODE_ENV: 'test',
    QUARRY_DATA_DIR: dataDir,
    QUARRY_REDIS_URL: redisUrl,
    QUARRY_HTTP_HOST: '127.0.0.1',
    QUARRY_HTTP_PORT: String(httpPort),
    QUARRY_GRPC_HOST: '127.0.0.1',
    QUARRY_GRPC_PORT: String(grpcPort),
    QUARRY_CORE_ADDRESS: `127.0.0.1:${grpcPort}`,
    ADMIN_API_KEY: adminKey,
    QUARRY_LOG_LEVEL: 'warn',
    // Embedding runs in the background and changes the store under the unchanged-store oracle;
    // the tests of semantic search turn it on.
    QUARRY_EMBED_JOBS: 'false',
    // The analytics suites seed records at fixed past dates, beyond the 90 days kept by default:
    // the job workers' retention purge at their start, late under load, deleted them after the
    // seeding (empty reports on a loaded CI run). Retention has tests of its own.
    QUARRY_ANALYTICS_RETENTION_DAYS: '0',
    ...(database ? { QUARRY_DATABASE_URL: database.url, QUARRY_DATABASE_POOL_SIZE: '4' } : {}),
    ...opts.env,
  };
  const baseUrl = `http://127.0.0.1:${httpPort}`;
  // The default topology, as deploy/up.sh runs it: the facade hosts the core (and serves its gRPC
  // on QUARRY_GRPC_PORT for the job workers and the tests), one process fewer to start per stack.
  const coreInProcess = env.QUARRY_CORE_IN_PROCESS !== 'false';
  const order: ProcessName[] = coreInProcess ? ['facade', 'jobs'] : ['core', 'facade', 'jobs'];
  const hostedCore = () => new Error('the core runs inside the facade process here: start the stack with QUARRY_CORE_IN_PROCESS=false to start or kill it alone');
  const children: Partial<Record<ProcessName, ChildProcess>> = {};
  const exits: Partial<Record<ProcessName, number | string | null>> = {};
  let log = '';
  const MAX_LOG = 200_000;
  const append = (name: string, chunk: Buffer) => {
    log += chunk
      .toString()
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l) => `[${name}] ${l}\n`)
      .join('');
    if (log.length > MAX_LOG) log = log.slice(-MAX_LOG);
  };

  const spawnOne = (name: ProcessName): void => {
    if (name === 'core' && coreInProcess) throw hostedCore();
    const existing = children[name];
    if (existing && existing.exitCode === null && existing.signalCode === null) {
      throw new Error(`${name} is already running`);
    }
    const child = spawn(process.execPath, [ENTRY[name]], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    live.add(child);
    child.stdout.on('data', (d: Buffer) => append(name, d));
    child.stderr.on('data', (d: Buffer) => append(name, d));
    child.on('exit', (code, signal) => {
      live.delete(child);
      exits[name] = code ?? signal;
      append(name, Buffer.from(`exited (${code ?? signal})`));
    });
    delete exits[name];
    children[name] = child;
  };

  const exited = (child: ChildProcess): Promise<void> =>
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise((resolve) => child.once('exit', () => resolve()));

  const kill = async (name: ProcessName, signal: NodeJS.Signals = 'SIGTERM', killAfterMs = 15_000) => {
    const child = children[name];
    if (!child) {
      if (name === 'core' && coreInProcess) throw hostedCore();
      throw new Error(`${name} was never started`);
    }
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
      await exited(child);
      clearTimeout(timer);
    }
    return exits[name] ?? null;
  };

  let stopped = false;
  const stack: Stack = {
    baseUrl,
    adminKey,
    dataDir,
    databaseUrl: given ?? database?.url ?? null,
    env,
    exits,
    output: () => log,
    pid: (name) => {
      const child = children[name];
      return child && child.exitCode === null && child.signalCode === null ? child.pid : undefined;
    },
    kill,
    async start(name) {
      spawnOne(name);
      if (name === 'facade') await waitHealthy(baseUrl, 30_000, () => log);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      // Facade first so that nothing new arrives; then the workers and the core.
      for (const name of ['facade', 'jobs', 'core'] as ProcessName[]) {
        if (children[name]) await kill(name, 'SIGTERM');
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
      await database?.drop();
    },
  };

  try {
    for (const name of order) spawnOne(name);
    await waitHealthy(baseUrl, 30_000, () => log);
  } catch (err) {
    await stack.stop();
    throw err;
  }
  return stack;
}
