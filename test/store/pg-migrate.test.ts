/**
 * PostgreSQL migrations from an empty database: processes that open it at the same moment (a
 * stack's HTTP process, core and job workers start together) all migrate it without error, and
 * the schema they leave is exactly the one the test databases are cloned from (global-setup.ts
 * migrates that template once; every other test runs on a clone, so this file is where an empty
 * database still gets migrated at start).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { freshPgDatabase, migratedPgDatabase, type TestDatabase } from '../helpers/pg.js';

const ENTRY = path.resolve(import.meta.dirname, '../../dist/store/postgres/pg-store.js');
const databases: TestDatabase[] = [];

afterAll(async () => {
  for (const db of databases) await db.drop();
});

/** Tables, columns with their types and defaults, indexes and the schema version of the database at `url`. */
async function schemaOf(url: string): Promise<{ columns: unknown[]; indexes: unknown[]; version: number }> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const columns = (
      await c.query(
        `SELECT table_name, column_name, data_type, column_default, is_nullable FROM information_schema.columns
          WHERE table_schema = 'public' ORDER BY table_name, column_name`,
      )
    ).rows;
    const indexes = (await c.query(`SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY tablename, indexname`)).rows;
    const version = Number((await c.query('SELECT version FROM schema_version')).rows[0].version);
    return { columns, indexes, version };
  } finally {
    await c.end();
  }
}

describe('PostgreSQL migrations', () => {
  it('processes opening an empty database at the same moment all migrate it, to the schema of the template', async () => {
    const db = await freshPgDatabase();
    databases.push(db);
    const script = `const m = await import(${JSON.stringify(ENTRY)}); const s = await m.openPgStore(process.argv[1], { poolSize: 1 }); await s.close();`;
    const results = await Promise.all(
      Array.from({ length: 6 }, () => {
        const child = spawn(process.execPath, ['--input-type=module', '-e', script, db.url], { stdio: ['ignore', 'ignore', 'pipe'] });
        let err = '';
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        return new Promise<{ code: number | null; err: string }>((resolve) => child.on('exit', (code) => resolve({ code, err })));
      }),
    );
    for (const r of results) expect(r.code, r.err).toBe(0);

    // A clone, not the template itself: a connection to the template would make the other test
    // files' clones of it fail while it is open.
    const clone = await migratedPgDatabase();
    databases.push(clone);
    const [migrated, cloned] = await Promise.all([schemaOf(db.url), schemaOf(clone.url)]);
    expect(migrated.version).toBeGreaterThan(0);
    expect(migrated.columns.length).toBeGreaterThan(50);
    expect(migrated).toEqual(cloned);
  }, 60_000);
});
