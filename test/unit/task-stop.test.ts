/**
 * Call deadlines (`core/pool/task-stop.ts`): a finished call's controller is reused by the next
 * call only when nothing can tell, i.e. it was not aborted and nothing still listens to it.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { callDeadline, inlineTaskStop, taskStopFor } from '../../core/pool/task-stop.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('callDeadline', () => {
  it('reuses a finished call signal, with the new deadline and none of the old timer', async () => {
    const first = callDeadline(Date.now() + 30, 'the first call');
    const signal = first.signal;
    first.dispose();
    const at = Date.now() + 5000;
    const second = callDeadline(at, 'the second call');
    expect(second.signal).toBe(signal);
    expect(inlineTaskStop(second.signal).deadline).toBe(at);
    // The first call's deadline has passed: its timer must not abort the second call.
    await sleep(80);
    expect(second.signal.aborted).toBe(false);
    second.dispose();
  });

  it('still aborts at the deadline, with a timeout naming the call', async () => {
    const d = callDeadline(Date.now() + 20, 'the slow call');
    await sleep(60);
    expect(d.signal.aborted).toBe(true);
    expect(d.signal.reason).toMatchObject({ code: 'timeout', message: expect.stringContaining('the slow call') });
    d.dispose();
    // An aborted signal is never handed out again.
    const next = callDeadline(Date.now() + 5000, 'the next call');
    expect(next.signal).not.toBe(d.signal);
    expect(next.signal.aborted).toBe(false);
    next.dispose();
  });

  it('is not reused while something still listens to it, or a shard thread holds its flag', () => {
    const listened = callDeadline(Date.now() + 5000, 'a call with a stale listener');
    listened.signal.addEventListener('abort', () => undefined);
    listened.dispose();
    const threaded = callDeadline(Date.now() + 5000, 'a call with a threaded task');
    taskStopFor(threaded.signal);
    threaded.dispose();
    const fresh = [callDeadline(Date.now() + 5000, 'a'), callDeadline(Date.now() + 5000, 'b')];
    for (const f of fresh) {
      expect(f.signal).not.toBe(listened.signal);
      expect(f.signal).not.toBe(threaded.signal);
    }
    for (const f of fresh) f.dispose();
  });

  it('gives a controller disposed twice to one call only', () => {
    const d = callDeadline(Date.now() + 5000, 'disposed twice');
    d.dispose();
    d.dispose();
    const a = callDeadline(Date.now() + 5000, 'a');
    const b = callDeadline(Date.now() + 5000, 'b');
    expect(a.signal).not.toBe(b.signal);
    a.dispose();
    b.dispose();
  });

  it('follows its parent, and leaves no listener on it once disposed', () => {
    const parent = new AbortController();
    const d = callDeadline(Date.now() + 5000, 'a child call', parent.signal);
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(1);
    d.dispose();
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
    const child = callDeadline(Date.now() + 5000, 'another child call', parent.signal);
    parent.abort(new Error('the caller went away'));
    expect(child.signal.aborted).toBe(true);
    expect((child.signal.reason as Error).message).toBe('the caller went away');
    child.dispose();
  });
});
