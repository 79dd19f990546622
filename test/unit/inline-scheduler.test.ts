/**
 * Inline shard tasks share the core's event loop fairly (core/pool/inline-scheduler.ts): cheap
 * tasks run at once, and past a turn's budget tasks wait for later turns, served round-robin
 * between datasets, with I/O callbacks in between.
 */
import { describe, expect, it } from 'vitest';
import { InlineScheduler } from '../../core/pool/inline-scheduler.js';

/** Keeps the thread busy for `ms` (an inline task that holds the event loop). */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spin
  }
}

const nextTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('InlineScheduler', () => {
  it('runs tasks at once while the turn is within its budget', async () => {
    await nextTurn();
    const s = new InlineScheduler(5);
    const order: string[] = [];
    const results = ['a', 'b', 'c'].map((name) => s.run(name, () => (order.push(name), name)));
    // Not promises: the caller gets the reply in the same turn.
    expect(results).toEqual(['a', 'b', 'c']);
    expect(order).toEqual(['a', 'b', 'c']);
    expect(s.waiting).toBe(0);
  });

  it('past the budget, queues tasks and serves datasets in turn, one per turn when each spends the budget', async () => {
    await nextTurn();
    const s = new InlineScheduler(2);
    const order: string[] = [];
    const task = (name: string) => () => {
      busy(3);
      order.push(name);
      return name;
    };
    // The first spends the turn's budget; the heavy dataset then queues three, the light one one.
    expect(s.run('heavy', task('h0'))).toBe('h0');
    const pending = [s.run('heavy', task('h1')), s.run('heavy', task('h2')), s.run('heavy', task('h3')), s.run('light', task('l1'))];
    for (const p of pending) expect(p).toBeInstanceOf(Promise);
    expect(s.waiting).toBe(4);
    // A callback queued now (as a socket read would be) runs before the second queued task.
    let sawAfterFirst: string[] | null = null;
    setImmediate(() => setImmediate(() => (sawAfterFirst = [...order])));
    expect(await Promise.all(pending.map((p) => Promise.resolve(p)))).toEqual(['h1', 'h2', 'h3', 'l1']);
    // Round-robin: the light dataset's task runs second, not after the heavy one's backlog.
    expect(order).toEqual(['h0', 'h1', 'l1', 'h2', 'h3']);
    expect(sawAfterFirst).not.toBeNull();
    expect(sawAfterFirst!.length).toBeLessThan(order.length);
    expect(s.waiting).toBe(0);
  });

  it('keeps the order of one dataset and lets a later task of it wait behind its queued ones', async () => {
    await nextTurn();
    const s = new InlineScheduler(1);
    const order: number[] = [];
    void s.run('d', () => busy(2));
    const all = Array.from({ length: 5 }, (_, i) => s.run('d', () => order.push(i)));
    await Promise.all(all.map((p) => Promise.resolve(p)));
    expect(order).toEqual([0, 1, 2, 3, 4]);
  });

  it('rejects with the error of a queued task that throws, and goes on with the others', async () => {
    await nextTurn();
    const s = new InlineScheduler(1);
    void s.run('d', () => busy(2));
    const failing = s.run('d', () => {
      throw new Error('bug in a task');
    });
    const after = s.run('e', () => 'fine');
    await expect(failing).rejects.toThrow('bug in a task');
    await expect(after).resolves.toBe('fine');
  });

  it('a task that throws at once throws to its caller', async () => {
    await nextTurn();
    const s = new InlineScheduler(5);
    expect(() =>
      s.run('d', () => {
        throw new Error('at once');
      }),
    ).toThrow('at once');
  });
});
