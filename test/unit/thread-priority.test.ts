/**
 * The scheduling helpers of background work (core/domain/thread-entry.ts), run in a child process
 * of their own so that the test runner keeps its priority: `niceThisProcess` lowers every thread
 * of the process (V8's platform threads too, which started before any code ran), and
 * `idleThisThread` puts only the calling thread in SCHED_IDLE. Read back from /proc (Linux).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/** Per thread of a process: [tid, nice, scheduling policy] as /proc says after running `call` of thread-entry.ts. */
function threadsAfter(call: string): Promise<{ result: unknown; threads: [string, number, number][] }> {
  // /proc/<pid>/task/<tid>/stat: fields after the command's ')' start at field 3; nice is field 19, policy 41.
  const script = `import(${JSON.stringify(path.resolve('core/domain/thread-entry.ts'))}).then((m) => {
    const fs = require('node:fs');
    const result = m.${call};
    const threads = fs.readdirSync('/proc/self/task').map((tid) => {
      const f = fs.readFileSync('/proc/self/task/' + tid + '/stat', 'utf8').split(') ')[1].split(' ');
      return [tid, Number(f[16]), Number(f[38])];
    });
    process.stdout.write(JSON.stringify({ result: result === undefined ? null : result, threads, self: require('node:path').basename(fs.readlinkSync('/proc/thread-self')) }));
  })`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`exit ${code}`))));
  });
}

const SCHED_OTHER = 0;
const SCHED_IDLE = 5;

describe.runIf(fs.existsSync('/proc/self/task'))('background thread priorities', () => {
  it('niceThisProcess lowers every thread of the process, not only the caller', async () => {
    const { threads } = await threadsAfter('niceThisProcess(7)');
    // The main thread and V8's platform threads at least.
    expect(threads.length).toBeGreaterThan(2);
    for (const [tid, nice] of threads) expect(nice, `thread ${tid}`).toBe(7);
  });

  it('idleThisThread puts the calling thread alone in SCHED_IDLE', async () => {
    const { result, threads, self } = (await threadsAfter('idleThisThread()')) as { result: unknown; threads: [string, number, number][]; self: string };
    expect(result).toBe('idle');
    for (const [tid, , policy] of threads) expect(policy, `thread ${tid}`).toBe(tid === self ? SCHED_IDLE : SCHED_OTHER);
  });
});
