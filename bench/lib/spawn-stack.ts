/**
 * Starts a private quarry stack for a benchmark: its own redis-server on a free loopback port and
 * the core, facade and job workers from dist/, each with a temporary data directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from './scifact.js';
import { withProcessDefaults } from '../../core/process-env.js';

/** A running benchmark stack. */
export interface BenchStack {
  readonly baseUrl: string;
  readonly grpcAddress: string;
  readonly adminKey: string;
  readonly dataDir: string;
  /** Process ids of redis, core, facade and jobs (for memory readings); core is the facade's when it hosts the core. */
  readonly pids: Readonly<Record<'redis' | 'core' | 'facade' | 'jobs', number>>;
  stop(): Promise<void>;
}

/** A free loopback port. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not come up within ${timeoutMs} ms`);
}

/** Starts the stack; extra env goes to every quarry process. */
export async function startBenchStack(env: Record<string, string> = {}): Promise<BenchStack> {
  if (!fs.existsSync(path.join(repoRoot, 'dist/facade/main.js'))) throw new Error('run `npm run build` first');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-bench-'));
  const [redisPort, httpPort, grpcPort] = [await freePort(), await freePort(), await freePort()];
  const adminKey = `tr-${randomBytes(24).toString('base64url').replace(/[^A-Za-z0-9]/g, 'a').slice(0, 32)}`;
  const children: ChildProcess[] = [];
  const redis = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--dir', dataDir, '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  children.push(redis);
  // The C library's settings deploy/run-all.ts starts every process with, unless set here.
  const fullEnv: Record<string, string | undefined> = withProcessDefaults({
    ...process.env,
    QUARRY_DATA_DIR: dataDir,
    QUARRY_REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    QUARRY_HTTP_PORT: String(httpPort),
    QUARRY_GRPC_PORT: String(grpcPort),
    ADMIN_API_KEY: adminKey,
    QUARRY_LOG_LEVEL: process.env.QUARRY_BENCH_LOG_DIR ? 'info' : 'warn',
    ...env,
  });
  // Extra node flags for every quarry process (a profile: '--cpu-prof --cpu-prof-dir=/tmp/prof').
  const nodeArgs = (process.env.QUARRY_BENCH_NODE_ARGS ?? '').split(/\s+/).filter((a) => a !== '');
  // The default topology hosts the core in the HTTP process (QUARRY_CORE_IN_PROCESS, on unless
  // set to false): then there is no core process, and the core's figures are the facade's.
  const inProcess = !/^(0|false|no|off)$/i.test(fullEnv.QUARRY_CORE_IN_PROCESS ?? '');
  const entries = inProcess ? ['dist/facade/main.js', 'dist/workers/jobs/main.js'] : ['dist/core/main.js', 'dist/facade/main.js', 'dist/workers/jobs/main.js'];
  // QUARRY_BENCH_LOG_DIR keeps each process's log (its stdout) as <dir>/<entry name>.log.
  const logDir = process.env.QUARRY_BENCH_LOG_DIR;
  for (const entry of entries) {
    const out = logDir ? fs.openSync(path.join(logDir, `${entry.split('/').slice(-2).join('-')}.log`), 'a') : 'ignore';
    children.push(spawn(process.execPath, [...nodeArgs, path.join(repoRoot, entry)], { env: fullEnv, stdio: ['ignore', out, 'inherit'] }));
    // The child has its own copy of the descriptor.
    if (typeof out === 'number') fs.closeSync(out);
  }
  const pidsOf = children.map((c) => c.pid ?? 0);
  const [redisPid, corePid, facadePid, jobsPid] = inProcess ? [pidsOf[0], pidsOf[1], pidsOf[1], pidsOf[2]] : pidsOf;
  const baseUrl = `http://127.0.0.1:${httpPort}`;
  const stop = async (): Promise<void> => {
    for (const c of [...children].reverse()) c.kill('SIGTERM');
    await Promise.all(children.map((c) => (c.exitCode !== null || c.signalCode !== null ? Promise.resolve() : new Promise((r) => c.once('exit', r)))));
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await waitFor(async () => (await fetch(`${baseUrl}/api/health`)).status === 200, 'quarry');
  } catch (err) {
    // A stack that never came up (a process that died at start) leaves nothing running: its
    // Redis and job workers outlived a profiled facade's failed start by hours once.
    await stop();
    throw err;
  }
  return {
    baseUrl,
    grpcAddress: `127.0.0.1:${grpcPort}`,
    adminKey,
    dataDir,
    pids: { redis: redisPid!, core: corePid!, facade: facadePid!, jobs: jobsPid! },
    stop,
  };
}

/** POSTs JSON with a key and headers; throws on a non-2xx answer. */
export async function post(baseUrl: string, p: string, body: unknown, headers: Record<string, string>): Promise<any> {
  const res = await fetch(baseUrl + p, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${p}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** A sysfs value, or null where the file is missing (another OS, another kernel, a container). */
function sysfs(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
}

/**
 * How this machine's idle cores wake, when Linux says: in a KVM guest with the `haltpoll` cpuidle
 * driver and `guest_halt_poll_ns` 0 every idle core halts into the hypervisor, and each wake-up
 * of a request's reader costs tens of µs. On 2026-11-29 a bare Node server answered wrk at 1
 * connection in p50 137-141 µs with 0 and 47-57 µs with 200000, on the same boot (quarry's
 * searches, CPU-bound, did not move): figures of days whose setting differs do not compare.
 */
function cpuIdle(): string | null {
  const driver = sysfs('/sys/devices/system/cpu/cpuidle/current_driver');
  if (driver === null) return null;
  const poll = driver === 'haltpoll' ? sysfs('/sys/module/haltpoll/parameters/guest_halt_poll_ns') : null;
  return `cpuidle ${driver}${poll === null ? '' : ` (guest_halt_poll_ns ${poll})`}`;
}

/** Machine description for benchmark reports. */
export function machine(): string {
  const idle = cpuIdle();
  return `${os.cpus()[0]?.model ?? 'unknown cpu'}, ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, node ${process.version}, ${os.platform()} ${os.arch()}${idle ? `, ${idle}` : ''}`;
}
