/**
 * Processes opening one fresh SQLite data dir together all migrate it, even while signals keep
 * interrupting them: here the sampling signal of `node --cpu-prof` at a 200 us interval (how
 * bench/README.md profiles a stack), under which SQLite refused a quarter of the processes'
 * first BEGIN IMMEDIATE at once as "database is locked", its busy timeout not waited. The
 * service's processes (HTTP, core, job workers) open the store at the same moment on a first start.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, expect, it } from 'vitest';
import { MIGRATIONS } from '../../store/sqlite/migrations.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const ROUNDS = 8;
const PROCESSES = 3;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-open-'));

afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

/** Opens the store in `dir` from a child process under the profiler; resolves to its exit code and output. */
function openInChild(dir: string, profiles: string): Promise<{ code: number | null; out: string }> {
  const script = `import { openDatabase } from ${JSON.stringify(path.join(ROOT, 'dist/store/sqlite/database.js'))};
openDatabase(${JSON.stringify(dir)}).close();
console.log('opened');`;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--cpu-prof', '--cpu-prof-interval=200', `--cpu-prof-dir=${profiles}`, '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('close', (code) => resolve({ code, out }));
  });
}

it(`${PROCESSES} processes at a time open a fresh data dir under a profiler, ${ROUNDS} times: every one migrates it`, async () => {
  for (let round = 0; round < ROUNDS; round++) {
    const dir = path.join(work, `data-${round}`);
    const runs = await Promise.all(Array.from({ length: PROCESSES }, () => openInChild(dir, path.join(work, 'profiles'))));
    for (const run of runs) {
      expect(run.code, run.out).toBe(0);
      expect(run.out).toContain('opened');
    }
    const db = new Database(path.join(dir, 'quarry.sqlite'), { readonly: true });
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    } finally {
      db.close();
    }
  }
}, 120_000);
