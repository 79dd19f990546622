/**
 * Who yields the CPU to whom (QUARRY_THREAD_NICE): the job-worker process (embedding, analytics
 * batches, purges) runs at the lower priority, every thread it started included, while the HTTP
 * process's event loop, which answers requests, keeps the normal one. Read from /proc of the real
 * processes of a stack (Linux only, as the setting is).
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

/** The pid of the stack's process whose command line names `entry` (found by the stack's data directory in its environment). */
function pidOf(entry: string): number {
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8');
      if (!cmdline.includes(entry)) continue;
      const environ = fs.readFileSync(`/proc/${name}/environ`, 'utf8').split('\0');
      if (environ.includes(`QUARRY_DATA_DIR=${stack.dataDir}`)) return Number(name);
    } catch {
      // A process that ended meanwhile.
    }
  }
  throw new Error(`no process of ${entry} with this stack's data directory`);
}

/** Nice value of one thread: field 19 of its stat line, counted after the command name's closing parenthesis. */
function niceOf(pid: number, tid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

/** Nice values of the threads of `pid` that its main thread started after it set its own (libuv's pool and ours; V8's own platform threads start earlier). */
function threadNices(pid: number): { main: number; named: Record<string, number> } {
  const named: Record<string, number> = {};
  for (const tid of fs.readdirSync(`/proc/${pid}/task`).map(Number)) {
    const comm = fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
    if (tid !== pid && /^libuv-worker$/.test(comm)) named[`${comm}:${tid}`] = niceOf(pid, tid);
  }
  return { main: niceOf(pid, pid), named };
}

describe.runIf(process.platform === 'linux')('process priorities', () => {
  it('runs the job workers at QUARRY_THREAD_NICE (10) and the HTTP event loop at 0', () => {
    const jobs = threadNices(pidOf('workers/jobs/main.js'));
    expect(jobs.main).toBe(10);
    for (const [thread, nice] of Object.entries(jobs.named)) expect({ thread, nice }).toEqual({ thread, nice: 10 });
    expect(threadNices(pidOf('facade/main.js')).main).toBe(0);
  });
});
