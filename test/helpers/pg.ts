/**
 * Databases of a test's own on the suite's PostgreSQL cluster (global-setup.ts provides it), and
 * which store the store-dependent suites run on (QUARRY_TEST_STORE, set per vitest project).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

/** The store this test file runs against: `postgres` in the vitest project `postgres`, else `sqlite`. */
export function testStore(): 'sqlite' | 'postgres' {
  return process.env.QUARRY_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';
}

/** A database made for one test (or stack), dropped by `drop`. */
export interface TestDatabase {
  /** postgres://.../<name> */
  readonly url: string;
  readonly name: string;
  /** Drops the database (ending its other connections first). Idempotent. */
  drop(): Promise<void>;
}

/** The cluster's URL with another database name. */
function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Runs one statement on the cluster's maintenance database. */
async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: inject('pgUrl') });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A database named `name` on the cluster, dropped by `drop`. */
function testDatabase(name: string): TestDatabase {
  let dropped = false;
  return {
    url: withDatabase(inject('pgUrl'), name),
    name,
    async drop() {
      if (dropped) return;
      dropped = true;
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

const randomName = (): string => `quarry_t_${randomBytes(6).toString('hex')}`;

/** Creates an empty database with a random name (for tests of the migrations themselves). */
export async function freshPgDatabase(): Promise<TestDatabase> {
  const name = randomName();
  await admin(`CREATE DATABASE ${name}`);
  return testDatabase(name);
}

/**
 * Creates a database at the current schema with a random name: a clone of the template that the
 * global setup migrated with the store's own migrations (global-setup.ts), so opening a store on
 * it finds nothing to do.
 */
export async function migratedPgDatabase(): Promise<TestDatabase> {
  const name = randomName();
  await admin(`CREATE DATABASE ${name} TEMPLATE ${inject('pgTemplate')}`);
  return testDatabase(name);
}
