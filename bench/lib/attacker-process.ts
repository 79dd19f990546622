/**
 * The attacking client in a child process at a lower CPU priority. On this 2-core machine the
 * client that sends an attack competes for the cores with the service it attacks: three copies
 * sending a 4.4 MB body in a loop spent ~1.3 cores of their own (building, writing and the
 * kernel's loopback copy, charged to the sender), and the victim's p99 then measured the
 * attacker's CPU as much as the service. An attacker's client runs elsewhere in any real
 * deployment; `nice` is the closest this machine gets (0 keeps it an equal competitor).
 */
import { fork, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AttackOutcome, AttackTarget } from './attacks.js';

/** One attack's outcome, by the attack's name. */
export interface NamedOutcome {
  readonly name: string;
  readonly outcome: AttackOutcome;
}

/** What to run: `loops` loops over `attacks` (loop `l` starting at `offsets[l]`), for `ms`. */
export interface AttackRun {
  readonly target: AttackTarget;
  readonly attacks: readonly string[];
  readonly loops: number;
  readonly offsets?: readonly number[];
  readonly ms: number;
}

type ChildMessage = { type: 'ready' } | { type: 'done' } | ({ type: 'outcome' } & NamedOutcome);

/** A child process that runs attack loops on request. */
export class AttackerProcess {
  private listener: ((m: ChildMessage) => void) | null = null;

  private constructor(
    private readonly child: ChildProcess,
    /** The child's nice value. */
    readonly nice: number,
  ) {
    child.on('message', (m: ChildMessage) => this.listener?.(m));
  }

  /** Forks the attacker (it builds every large attack body first) at nice `nice` (0-19). */
  static async start(nice: number): Promise<AttackerProcess> {
    const entry = path.join(path.dirname(fileURLToPath(import.meta.url)), 'attacker-entry.ts');
    // process.execArgv carries tsx's loader to the child.
    const child = fork(entry, [], { execArgv: process.execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    if (nice > 0 && child.pid !== undefined) os.setPriority(child.pid, nice);
    const attacker = new AttackerProcess(child, nice);
    await new Promise<void>((resolve, reject) => {
      attacker.listener = (m) => {
        if (m.type === 'ready') resolve();
      };
      child.once('exit', (code) => reject(new Error(`the attacker process exited (${code}) before it was ready`)));
    });
    return attacker;
  }

  /** Runs the loops; calls `onOutcome` for each attack as it is answered; resolves when every loop ended. */
  run(run: AttackRun, onOutcome: (o: NamedOutcome) => void): Promise<void> {
    return new Promise((resolve) => {
      this.listener = (m) => {
        if (m.type === 'outcome') onOutcome(m);
        else if (m.type === 'done') resolve();
      };
      this.child.send({ type: 'run', ...run });
    });
  }

  /** Ends the child. */
  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.send({ type: 'close' });
    await Promise.race([exited, new Promise((r) => setTimeout(r, 2000))]);
    if (this.child.exitCode === null) this.child.kill();
  }
}
