/**
 * A redis-server of the test's own, for tests that take Redis away (the shared one from the global
 * setup serves other test files at the same time). It persists every write before answering
 * (AOF, fsync always), so killing it and starting it again on the same port is an outage, not a
 * data loss: what Redis acknowledged before the kill is there after the restart.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, waitForPort } from './global-setup.js';

/** A running (or deliberately stopped) private Redis. */
export interface OwnRedis {
  /** `redis://127.0.0.1:<port>`; the same across restarts. */
  readonly url: string;
  readonly port: number;
  /** Whether the server process is up (not killed, not exited). */
  running(): boolean;
  /** SIGKILLs the server (clients see refused connections until start()). */
  kill(): Promise<void>;
  /** Starts the server again on the same port and data dir; resolves when it accepts connections. */
  start(): Promise<void>;
  /** Kills the server and removes its data dir. Idempotent. */
  stop(): Promise<void>;
  /** Captured output of every run (for diagnostics). */
  output(): string;
}

const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));

/** Starts a private redis-server on a free loopback port. */
export async function startOwnRedis(): Promise<OwnRedis> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-own-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  let log = '';
  const run = async (): Promise<void> => {
    const c = spawn(
      'redis-server',
      ['--bind', '127.0.0.1', '--port', String(port), '--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    c.stdout.on('data', (d: Buffer) => (log += d.toString()));
    c.stderr.on('data', (d: Buffer) => (log += d.toString()));
    child = c;
    process.once('exit', () => c.kill('SIGKILL'));
    try {
      await waitForPort(port, 10_000, c);
    } catch (err) {
      c.kill('SIGKILL');
      throw new Error(`${(err as Error).message}\n${log}`);
    }
  };
  const kill = async (): Promise<void> => {
    if (!child) return;
    child.kill('SIGKILL');
    await exited(child);
  };
  await run();
  let stopped = false;
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill,
    start: run,
    running: () => child !== undefined && child.exitCode === null && child.signalCode === null,
    async stop() {
      if (stopped) return;
      stopped = true;
      await kill();
      fs.rmSync(dir, { recursive: true, force: true });
    },
    output: () => log,
  };
}
