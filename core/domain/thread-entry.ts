/** How a worker thread's entry module is started, compiled or from source. */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The script of a worker thread whose entry is `relative` to the module at `fromUrl`, with the
 * caller's own extension: the `.js` file once compiled, or for `.ts` source (tsx, vitest) a small
 * `data:` module that registers tsx and then imports it (Node starts a worker's main module
 * before a loader registered with `--import` can claim a `.ts` file).
 */
export function threadEntry(fromUrl: string, relative: string): string | URL {
  const here = fileURLToPath(fromUrl);
  const ext = path.extname(here);
  const filename = path.resolve(path.dirname(here), `${relative}${ext}`);
  if (ext !== '.ts') return filename;
  const tsx = import.meta.resolve('tsx/esm/api');
  const source = `const { register } = await import(${JSON.stringify(tsx)}); register(); await import(${JSON.stringify(pathToFileURL(filename).href)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(source)}`);
}

/**
 * Lowers the calling thread's scheduling priority to `nice` (Linux keeps a nice value per
 * thread), so that bulk work in it yields the CPU to the event loops that answer requests.
 * Best effort: 0 or an unsupported platform leaves it as it is.
 */
export function niceThisThread(nice: number): void {
  if (nice <= 0) return;
  try {
    os.setPriority(nice);
  } catch {
    // Not permitted or not supported: run at the default priority.
  }
}

/**
 * Lowers every thread of this process to `nice`, not only the calling one: V8 starts its platform
 * threads (garbage collection helpers, compiler) before any code runs, and they kept the
 * priority the process started with, so a background process's collections competed with the
 * searches at full priority (the job workers: search p99 at 1 connection ~3 ms with them at 0,
 * ~2 ms at 10; bench/README.md). Threads started later inherit their creator's. Linux only
 * (a nice value per thread, listed in /proc/self/task); elsewhere only the calling thread.
 */
export function niceThisProcess(nice: number): void {
  if (nice <= 0) return;
  let tids: string[];
  try {
    tids = fs.readdirSync('/proc/self/task');
  } catch {
    niceThisThread(nice);
    return;
  }
  for (const tid of tids) {
    try {
      if (os.getPriority(Number(tid)) < nice) os.setPriority(Number(tid), nice);
    } catch {
      // A thread that ended meanwhile, or not permitted: leave it.
    }
  }
}

/**
 * Puts the calling thread in Linux's SCHED_IDLE class: it runs on a CPU nothing else wants, and
 * any other thread that wakes takes the CPU from it at once (a nice value only weighs it less,
 * and a waking thread may still wait a scheduler tick behind it). For writes nobody waits on,
 * beside threads that answer requests. Node has no call for it: util-linux's `chrt` (Debian:
 * essential) sets it on this thread's id, read from /proc/thread-self. Where that fails (not
 * Linux, no chrt), the thread runs at nice 19. Returns which it got.
 */
export function idleThisThread(): 'idle' | 'nice' {
  try {
    const tid = path.basename(fs.readlinkSync('/proc/thread-self'));
    if (spawnSync('chrt', ['--idle', '--pid', '0', tid], { stdio: 'ignore', timeout: 5000 }).status === 0) return 'idle';
  } catch {
    // No /proc: not Linux.
  }
  niceThisThread(19);
  return 'nice';
}
