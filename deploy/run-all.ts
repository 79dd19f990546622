/**
 * Embedded-default supervisor: runs the HTTP facade (hosting the search core unless
 * QUARRY_CORE_IN_PROCESS is false, then the core too) and the job workers as one process tree. Children inherit stdout/stderr and log their own JSON lines; this process only logs
 * about starting, restarting and stopping them.
 *
 * With `--redis-port <port> --redis-dir <dir>` (what `deploy/up.sh` passes when it owns the Redis)
 * the supervisor also runs that Redis (`deploy/redis.sh run`, same data dir and AOF settings):
 * started first, restarted with the same backoff when it dies, and stopped last so the workers
 * finish with Redis still there. The other children reconnect on their own.
 *
 * Signals: the first SIGINT or SIGTERM is forwarded to every child and the supervisor exits once
 * all have exited (0 when every child exited 0). A SIGINT while stopping (a second Ctrl-C) kills
 * the children hard. A SIGTERM while stopping is ignored: `deploy/up.sh` sends one right after the
 * terminal's own SIGINT, and that pair must not count as a second Ctrl-C.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { loadConfig, type Config } from '../core/config.js';
import { createLogger } from '../core/logger.js';
import { withProcessDefaults } from '../core/process-env.js';

/** One supervised entry point. */
export interface ChildSpec {
  readonly name: string;
  /** Absolute path of the compiled entry script (run with this Node), unless `command` is set. */
  readonly script: string;
  /** Program and arguments to run instead of a Node script (the supervised Redis). */
  readonly command?: readonly [string, ...string[]];
  /**
   * Started before, and stopped after, every other child: the others start once it accepts
   * connections on `readyPort` (or after {@link READY_WAIT_MS}, they reconnect anyway).
   */
  readonly first?: { readonly readyPort: number };
}

interface ChildState {
  readonly spec: ChildSpec;
  proc: ChildProcess | undefined;
  restartTimer: NodeJS.Timeout | undefined;
  restarts: number;
  startedAt: number;
  lastExitCode: number | null;
}

const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 30_000;
/** A child that stayed up this long is considered healthy again, so its backoff starts over. */
const STABLE_AFTER_MS = 60_000;
/** Extra time past the children's own shutdown grace before they are killed hard. */
const KILL_MARGIN_MS = 5_000;
/** Longest wait for a `first` child to answer PING before the others start regardless. */
const READY_WAIT_MS = 20_000;

/** Resolves true once a Redis on 127.0.0.1:`port` answers PING with PONG (not LOADING), false at the deadline. */
async function redisReady(port: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const pong = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port });
      let reply = '';
      const done = (ok: boolean): void => {
        socket.destroy();
        resolve(ok);
      };
      socket.setTimeout(1_000, () => done(false));
      socket.on('error', () => done(false));
      socket.on('connect', () => socket.write('PING\r\n'));
      socket.on('data', (d) => {
        reply += d.toString();
        if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
      });
    });
    if (pong) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/** The supervised Redis of `deploy/up.sh`: `redis.sh run`, which execs redis-server in the foreground. */
export function redisSpec(port: number, dir: string): ChildSpec {
  // Beside this file when run from source, two levels up from dist/deploy once compiled.
  const script = [new URL('./redis.sh', import.meta.url), new URL('../../deploy/redis.sh', import.meta.url)].map((u) => fileURLToPath(u)).find((p) => existsSync(p)) ?? 'deploy/redis.sh';
  return { name: 'redis', script, command: ['bash', script, 'run', String(port), dir], first: { readyPort: port } };
}

/** The compiled entry points, resolved next to this file so the supervisor works from any cwd. */
function childSpecs(): ChildSpec[] {
  const at = (rel: string): string => fileURLToPath(new URL(rel, import.meta.url));
  return [
    { name: 'core', script: at('../core/main.js') },
    { name: 'facade', script: at('../facade/main.js') },
    { name: 'jobs', script: at('../workers/jobs/main.js') },
  ];
}

/** Starts all children and supervises them until a requested stop; resolves to the exit code. */
export function runAll(config: Config, specs: readonly ChildSpec[] = childSpecs()): Promise<number> {
  const log = createLogger(config, 'run-all');
  const children: ChildState[] = specs.map((spec) => ({
    spec,
    proc: undefined,
    restartTimer: undefined,
    restarts: 0,
    startedAt: 0,
    lastExitCode: null,
  }));
  let stopping = false;
  let forced = false;
  let killTimer: NodeJS.Timeout | undefined;

  return new Promise<number>((resolve) => {
    const finishIfDone = (): void => {
      if (!stopping || children.some((c) => c.proc !== undefined)) return;
      if (killTimer) clearTimeout(killTimer);
      process.off('SIGINT', onSigint);
      process.off('SIGTERM', onSigterm);
      process.off('exit', killAllNow);
      const failed = children.filter((c) => c.lastExitCode !== 0).map((c) => c.spec.name);
      if (failed.length > 0) log.warn({ children: failed }, 'children did not exit cleanly');
      else log.info('all children stopped');
      resolve(forced ? 130 : failed.length > 0 ? 1 : 0);
    };

    const start = (child: ChildState): void => {
      child.restartTimer = undefined;
      child.startedAt = Date.now();
      // env is passed through (configuration is parsed by each child, core/config.ts), with the C
      // library's settings of core/process-env.ts where the operator set none.
      // detached puts each child in its own process group, so a terminal Ctrl-C reaches only this
      // supervisor and every child receives exactly one forwarded signal.
      const [program, ...args] = child.spec.command ?? [process.execPath, child.spec.script];
      const proc = spawn(program, args, {
        env: withProcessDefaults(process.env),
        stdio: 'inherit',
        detached: true,
      });
      child.proc = proc;
      // 'error' (spawn failure) may come without 'exit', or before it; handle the pair once.
      let handled = false;
      const onGone = (code: number | null, signal: NodeJS.Signals | null, err?: Error): void => {
        if (handled) return;
        handled = true;
        child.proc = undefined;
        child.lastExitCode = code;
        if (stopping) {
          log.info({ child: child.spec.name, code, signal }, 'child stopped');
          signalLastIfOthersGone();
          finishIfDone();
          return;
        }
        // Backoff doubles per consecutive crash; a child that ran long enough starts over at 1 s.
        if (Date.now() - child.startedAt >= STABLE_AFTER_MS) child.restarts = 0;
        const delay = Math.min(FIRST_BACKOFF_MS * 2 ** child.restarts, MAX_BACKOFF_MS);
        child.restarts += 1;
        log.error(
          { child: child.spec.name, code, signal, err: err?.message, restartInMs: delay },
          'child exited unexpectedly; restarting',
        );
        child.restartTimer = setTimeout(() => start(child), delay);
      };
      proc.once('exit', (code, signal) => onGone(code, signal));
      proc.once('error', (err) => onGone(null, null, err));
    };

    const signalAll = (signal: NodeJS.Signals): void => {
      for (const c of children) c.proc?.kill(signal);
    };
    // On a requested stop the `first` children (Redis) get the signal only once the others are gone.
    let lastSignal: NodeJS.Signals | undefined;
    const signalLastIfOthersGone = (): void => {
      if (!lastSignal || children.some((c) => !c.spec.first && c.proc !== undefined)) return;
      for (const c of children) if (c.spec.first) c.proc?.kill(lastSignal);
      lastSignal = undefined;
    };

    // Last resort if this process dies with children still running (e.g. an uncaught exception):
    // detached children would otherwise outlive it.
    const killAllNow = (): void => signalAll('SIGKILL');

    const requestStop = (signal: NodeJS.Signals): void => {
      stopping = true;
      log.info({ signal }, 'stopping children');
      for (const c of children) {
        if (c.restartTimer) clearTimeout(c.restartTimer);
        c.restartTimer = undefined;
        // A child waiting to be restarted has nothing left to stop; its earlier crash was already
        // logged and must not turn a requested stop into a failure.
        if (!c.proc) c.lastExitCode = 0;
      }
      // SIGTERM for the `first` children whatever the trigger: redis-server persists on it.
      lastSignal = 'SIGTERM';
      for (const c of children) if (!c.spec.first) c.proc?.kill(signal);
      signalLastIfOthersGone();
      // Children finish in-flight work within shutdownGraceMs; past that plus a margin they hang.
      killTimer = setTimeout(() => {
        log.error('children did not stop in time; killing them');
        forced = true;
        signalAll('SIGKILL');
      }, config.shutdownGraceMs + KILL_MARGIN_MS);
      killTimer.unref();
      finishIfDone();
    };

    const onSigint = (): void => {
      if (!stopping) return requestStop('SIGINT');
      log.warn('second interrupt; killing children');
      forced = true;
      signalAll('SIGKILL');
    };
    const onSigterm = (): void => {
      if (!stopping) requestStop('SIGTERM');
    };

    process.on('SIGINT', onSigint);
    process.on('SIGTERM', onSigterm);
    process.on('exit', killAllNow);
    log.info({ children: children.map((c) => c.spec.name) }, 'starting children');
    const firsts = children.filter((c) => c.spec.first);
    for (const c of firsts) start(c);
    void Promise.all(firsts.map((c) => redisReady(c.spec.first!.readyPort, READY_WAIT_MS))).then((ready) => {
      if (ready.includes(false)) log.warn('redis did not answer PING in time; starting the other children anyway');
      if (stopping) return;
      for (const c of children) if (!c.spec.first) start(c);
    });
  });
}

/** Command-line entry: validates config and entry points first so mistakes fail fast, not in a restart loop. */
async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    console.error(`run-all: invalid configuration: ${(err as Error).message}`);
    process.exit(1);
  }
  // A facade that hosts the core (QUARRY_CORE_IN_PROCESS) replaces the core process.
  const specs = childSpecs().filter((s) => !(config.coreInProcess && s.name === 'core'));
  // Deployment arguments, not configuration: up.sh says where the Redis it owns lives.
  const arg = (name: string): string | undefined => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const redisPort = arg('--redis-port');
  const redisDir = arg('--redis-dir');
  if ((redisPort === undefined) !== (redisDir === undefined) || (redisPort !== undefined && !/^[0-9]{1,5}$/.test(redisPort))) {
    console.error('run-all: usage: run-all.js [--redis-port <port> --redis-dir <dir>]');
    process.exit(1);
  }
  if (redisPort !== undefined) specs.unshift(redisSpec(Number(redisPort), redisDir!));
  const missing = specs.filter((s) => !existsSync(s.script)).map((s) => s.script);
  if (missing.length > 0) {
    console.error(`run-all: missing entry points (run npm run build): ${missing.join(', ')}`);
    process.exit(1);
  }
  process.exitCode = await runAll(config, specs);
}

// Only run when executed directly, so tests can import runAll without side effects. realpath
// because Node reports the main module's real path in import.meta.url but argv[1] as typed.
const invokedAs = process.argv[1];
if (invokedAs !== undefined && existsSync(invokedAs) && fileURLToPath(import.meta.url) === realpathSync(invokedAs)) {
  void main();
}
