/**
 * A PostgreSQL cluster of the test's own (deploy/postgres.sh), for tests that take PostgreSQL
 * away: the suite's shared cluster serves other test files at the same time. fsync stays on, so
 * killing every server process and starting it again is a crash, not a data loss: what it
 * acknowledged before the kill is there after the restart (crash recovery replays the WAL).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const SCRIPT = path.resolve(import.meta.dirname, '../../deploy/postgres.sh');

/** A running (or deliberately killed) private cluster. */
export interface OwnPostgres {
  /** postgres://.../quarry; the same across restarts. */
  readonly url: string;
  /** SIGKILLs the postmaster and every server process under it (a crash). */
  kill(): void;
  /** Starts the cluster again on the same port and data; resolves when it accepts connections. */
  start(): void;
  /** Stops the cluster and removes its files. Idempotent. */
  stop(): void;
}

/** Pids of the postmaster (first line of postmaster.pid) and of its children. */
function serverPids(dir: string): number[] {
  const file = path.join(dir, 'postmaster.pid');
  if (!fs.existsSync(file)) return [];
  const postmaster = Number(fs.readFileSync(file, 'utf8').split('\n')[0]);
  if (!Number.isInteger(postmaster) || postmaster <= 0) return [];
  const pids = [postmaster];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Field 4 (after the parenthesized command) is the parent pid.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === postmaster) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

/** Starts a private cluster on a free loopback port with an empty database `quarry`. */
export function startOwnPostgres(): OwnPostgres {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-own-pg-'));
  const dir = path.join(root, 'cluster');
  const port = execFileSync(SCRIPT, ['free-port'], { encoding: 'utf8' }).trim();
  const start = (): void => {
    execFileSync(SCRIPT, ['start', port, dir], { stdio: ['ignore', 'ignore', 'pipe'] });
  };
  start();
  execFileSync(SCRIPT, ['createdb', port, 'quarry'], { stdio: 'ignore' });
  let stopped = false;
  return {
    url: execFileSync(SCRIPT, ['url', port, 'quarry'], { encoding: 'utf8' }).trim(),
    kill() {
      const pids = serverPids(dir);
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      // Wait until none is left (a zombie is gone enough): a restart beside a surviving backend
      // would find the old shared memory still in use.
      const alive = (pid: number): boolean => {
        try {
          return !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
        } catch {
          return false;
        }
      };
      const deadline = Date.now() + 10_000;
      while (pids.some(alive)) {
        if (Date.now() > deadline) throw new Error('PostgreSQL processes survived SIGKILL');
        execFileSync('sleep', ['0.05']);
      }
    },
    start,
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        execFileSync(SCRIPT, ['stop', dir], { stdio: 'ignore' });
      } finally {
        fs.rmSync(root, { recursive: true, force: true });
      }
    },
  };
}
