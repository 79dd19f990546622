/** The analytics thread's host: a thread that dies is started again, one that cannot start is tried again, close ends it. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startAnalyticsThread } from '../../workers/jobs/analytics-host.js';

const STUB = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/analytics-thread-stub.mjs');

/** Runs the host on the stub with `plan`; returns it, the stub's log and the host's log lines. */
async function hosted(plan: string) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'analytics-host-'));
  const log = path.join(dir, 'stub.log');
  // A worker thread gets a copy of the environment as it is when the thread starts.
  process.env.STUB_LOG = log;
  process.env.STUB_PLAN = plan;
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
  const host = await startAnalyticsThread(logger, { entry: STUB, restartDelayMs: 20 });
  const stubLog = (): string[] => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter((l) => l !== '') : []);
  return { host, stubLog, lines, dir };
}

const until = async (check: () => boolean, ms = 5000): Promise<void> => {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
};

let cleanup: (() => Promise<void>) | null = null;
afterEach(async () => {
  await cleanup?.();
  cleanup = null;
  delete process.env.STUB_LOG;
  delete process.env.STUB_PLAN;
});

describe('analytics thread host', () => {
  it('starts a thread that died again, and closes the new one', async () => {
    const { host, stubLog, lines, dir } = await hosted('die,stay');
    cleanup = async () => fs.rmSync(dir, { recursive: true, force: true });
    await until(() => stubLog().includes('start 1'));
    expect(stubLog()).toEqual(['start 0', 'start 1']);
    expect(lines.some((l) => l.includes('analytics thread ended; starting it again'))).toBe(true);
    await host.close(2000);
    expect(stubLog()).toEqual(['start 0', 'start 1', 'closed']);
  });

  it('keeps trying a thread that cannot start again until one does', async () => {
    const { host, stubLog, lines, dir } = await hosted('die,fail,fail,stay');
    cleanup = async () => fs.rmSync(dir, { recursive: true, force: true });
    await until(() => stubLog().includes('start 3'));
    expect(stubLog()).toEqual(['start 0', 'start 1', 'start 2', 'start 3']);
    expect(lines.filter((l) => l.includes('could not start again; retrying')).length).toBe(2);
    // Running again: no further starts.
    await new Promise((r) => setTimeout(r, 100));
    expect(stubLog()).toHaveLength(4);
    await host.close(2000);
    expect(stubLog().at(-1)).toBe('closed');
  });

  it('starts nothing more once closed, even when closed while a restart is pending', async () => {
    const { host, stubLog, dir } = await hosted('die');
    cleanup = async () => fs.rmSync(dir, { recursive: true, force: true });
    // The thread dies 20 ms after its start; close lands during the restart pause or after.
    await new Promise((r) => setTimeout(r, 30));
    await host.close(2000);
    const starts = stubLog().filter((l) => l.startsWith('start')).length;
    await new Promise((r) => setTimeout(r, 200));
    expect(stubLog().filter((l) => l.startsWith('start')).length).toBe(starts);
  });
});
