/**
 * Runs once per `vitest run`: checks that the build exists, and provides a Redis URL and a
 * PostgreSQL URL to the test files. `./deploy/test.sh` starts both and exports
 * QUARRY_TEST_REDIS_URL and QUARRY_TEST_PG_URL; without them (plain `npx vitest run`) this starts
 * a throwaway `redis-server` and PostgreSQL cluster (deploy/postgres.sh) of its own and stops
 * them at teardown. It also migrates the template database the tests' PostgreSQL databases are
 * cloned from, and drops it at teardown.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openPgStore } from '../../store/postgres/pg-store.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Redis for the test stacks; each stack uses its own database index on it. */
    redisUrl: string;
    /**
     * A PostgreSQL cluster's maintenance database (postgres://.../postgres) on which tests create
     * databases of their own (test/helpers/pg.ts).
     */
    pgUrl: string;
    /**
     * A database on that cluster migrated to the current schema and left unconnected, which
     * test databases are cloned from (CREATE DATABASE ... TEMPLATE; test/helpers/pg.ts).
     */
    pgTemplate: string;
  }
}

const ROOT = path.resolve(import.meta.dirname, '../..');

/** A free loopback TCP port (released before returning, so a retry covers the race). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts TCP connections on the port, or rejects after `ms` (or when the redis child exits). */
export function waitForPort(port: number, ms: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      if (child.exitCode !== null) return reject(new Error(`redis-server exited with code ${child.exitCode}`));
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve();
      });
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() > deadline) reject(new Error(`redis-server did not listen on ${port} within ${ms} ms`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (!fs.existsSync(path.join(ROOT, 'dist/facade/main.js'))) {
    throw new Error('dist/facade/main.js is missing: run `npm run build` (or ./deploy/test.sh) before the tests');
  }
  const stopPg = await startPg(project);
  const given = process.env.QUARRY_TEST_REDIS_URL;
  if (given) {
    project.provide('redisUrl', given);
    return stopPg;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-test-redis-'));
  let child: ChildProcess | undefined;
  let port = 0;
  let output = '';
  for (let attempt = 0; attempt < 3 && !child; attempt++) {
    port = await freePort();
    const c = spawn(
      'redis-server',
      ['--bind', '127.0.0.1', '--port', String(port), '--dir', dir, '--save', '', '--appendonly', 'no', '--databases', '1024'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    c.stdout.on('data', (d: Buffer) => (output += d.toString()));
    c.stderr.on('data', (d: Buffer) => (output += d.toString()));
    try {
      await waitForPort(port, 10_000, c);
      child = c;
    } catch (err) {
      c.kill('SIGKILL');
      if (attempt === 2) throw new Error(`could not start redis-server: ${(err as Error).message}\n${output}`);
    }
  }
  project.provide('redisUrl', `redis://127.0.0.1:${port}`);
  return async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    fs.rmSync(dir, { recursive: true, force: true });
    await stopPg?.();
  };
}

/**
 * The cluster this process started and the template database, shared by every project: vitest
 * runs the global setup once per project, each with its own copy of this module, so they are kept
 * on globalThis.
 */
const shared = globalThis as { quarryTestPg?: { url: string; users: number; dir: string }; quarryPgTemplate?: { name: Promise<string>; users: number } };

/** Runs one statement on the cluster's maintenance database at `url`. */
async function adminSql(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * Makes the template database (once for all projects): a fresh database migrated by the store
 * itself and closed. A clone of it costs a file copy, where migrating each test's database cost
 * ~0.35 s of the cluster's CPU, and a test file of store contracts opens one per test.
 */
function makeTemplate(url: string): Promise<string> {
  const name = `quarry_template_${Math.random().toString(16).slice(2, 10)}`;
  return (async () => {
    await adminSql(url, `CREATE DATABASE ${name}`);
    const u = new URL(url);
    u.pathname = `/${name}`;
    const store = await openPgStore(u.toString(), { poolSize: 1 });
    await store.close();
    return name;
  })();
}

/**
 * Provides QUARRY_TEST_PG_URL, or starts a throwaway cluster (once for all projects), and the
 * template database on it; returns the teardown (the template dropped, a started cluster stopped).
 */
async function startPg(project: TestProject): Promise<() => Promise<void>> {
  const given = process.env.QUARRY_TEST_PG_URL;
  const script = path.join(ROOT, 'deploy/postgres.sh');
  let url: string;
  let stopCluster: () => void = () => {};
  if (given) url = given;
  else {
    if (!shared.quarryTestPg) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-test-pg-'));
      const port = execFileSync(script, ['free-port'], { encoding: 'utf8' }).trim();
      execFileSync(script, ['start', port, path.join(dir, 'cluster')], { stdio: ['ignore', 'ignore', 'inherit'] });
      shared.quarryTestPg = { url: `postgres://postgres@127.0.0.1:${port}/postgres`, users: 0, dir };
    }
    const cluster = shared.quarryTestPg;
    cluster.users++;
    url = cluster.url;
    stopCluster = () => {
      if (--cluster.users > 0) return;
      delete shared.quarryTestPg;
      execFileSync(script, ['stop', path.join(cluster.dir, 'cluster')], { stdio: 'ignore' });
      fs.rmSync(cluster.dir, { recursive: true, force: true });
    };
  }
  project.provide('pgUrl', url);
  const template = (shared.quarryPgTemplate ??= { name: makeTemplate(url), users: 0 });
  template.users++;
  project.provide('pgTemplate', await template.name);
  return async () => {
    if (--template.users === 0) {
      delete shared.quarryPgTemplate;
      await adminSql(url, `DROP DATABASE IF EXISTS ${await template.name} WITH (FORCE)`).catch(() => {});
    }
    stopCluster();
  };
}
