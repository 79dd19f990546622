/**
 * The queue in front of the USE-Lite threads: at most `slots` tasks run, in arrival order; a
 * signal drops a waiting task before it starts and never touches a running one.
 */
import { describe, expect, it } from 'vitest';
import { SlotQueue } from '../../core/embed/slot-queue.js';

/** A task the test finishes by hand, recording when it started. */
function manual(started: string[], name: string) {
  let finish!: (v: string) => void;
  const done = new Promise<string>((resolve) => (finish = resolve));
  return { start: () => (started.push(name), done), finish: () => finish(name) };
}

const aborted = (signal: AbortSignal) => new Error(`dropped: ${String(signal.reason)}`);
const tick = () => new Promise((r) => setTimeout(r, 0));

describe('SlotQueue', () => {
  it('runs at most `slots` tasks at once, in arrival order', async () => {
    const q = new SlotQueue(2, aborted);
    const started: string[] = [];
    const tasks = ['a', 'b', 'c', 'd'].map((n) => manual(started, n));
    const results = tasks.map((t) => q.run(t.start));
    expect(started).toEqual(['a', 'b']);
    tasks[1]!.finish();
    await tick();
    expect(started).toEqual(['a', 'b', 'c']);
    tasks[0]!.finish();
    await tick();
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    tasks[2]!.finish();
    tasks[3]!.finish();
    expect(await Promise.all(results)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('drops a waiting task whose signal fires, without ever starting it', async () => {
    const q = new SlotQueue(1, aborted);
    const started: string[] = [];
    const [a, b, c] = ['a', 'b', 'c'].map((n) => manual(started, n));
    const ctl = new AbortController();
    const ra = q.run(a!.start, ctl.signal);
    const rb = q.run(b!.start, ctl.signal);
    const rc = q.run(c!.start);
    ctl.abort('gone');
    // The waiting task is rejected at once; the running one is untouched and still resolves.
    await expect(rb).rejects.toThrow('dropped: gone');
    a!.finish();
    expect(await ra).toBe('a');
    await tick();
    expect(started).toEqual(['a', 'c']);
    c!.finish();
    expect(await rc).toBe('c');
  });

  it('never starts a task whose signal already fired', async () => {
    const q = new SlotQueue(1, aborted);
    const started: string[] = [];
    const ctl = new AbortController();
    ctl.abort('early');
    await expect(q.run(manual(started, 'a').start, ctl.signal)).rejects.toThrow('dropped: early');
    expect(started).toEqual([]);
  });

  it('frees the slot of a task that fails, and clear() rejects the waiting ones', async () => {
    const q = new SlotQueue(1, aborted);
    const started: string[] = [];
    const failing = q.run(() => Promise.reject(new Error('boom')));
    const next = manual(started, 'next');
    const rn = q.run(next.start);
    const waiting = q.run(manual(started, 'never').start);
    await expect(failing).rejects.toThrow('boom');
    await tick();
    expect(started).toEqual(['next']);
    q.clear(new Error('closed'));
    await expect(waiting).rejects.toThrow('closed');
    next.finish();
    expect(await rn).toBe('next');
    expect(started).toEqual(['next']);
  });
});
