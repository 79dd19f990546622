/**
 * Query plans of SQLite reads that run once per indexed chunk: each must start from the chunk's
 * own rows (an index probe), never walk a dataset-wide index. A plan that walked the dataset's
 * groups for every chunk made indexing a dataset with a group per product quadratic.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../store/sqlite/database.js';
import { GROUPS_OF_CHUNK } from '../../store/sqlite/groups.js';

let dir: string;
let db: Db;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-plans-'));
  db = openDatabase(dir);
  // A dataset of many groups with a chunk each; not analysed, as the store never runs ANALYZE.
  const org = 'o-1';
  const ds = 'd-1';
  db.prepare("INSERT INTO organizations (id, name, created_at, updated_at) VALUES (?, 'o', 0, 0)").run(org);
  db.prepare("INSERT INTO datasets (id, organization_id, name, server_configuration, created_at, updated_at) VALUES (?, ?, 'd', '{}', 0, 0)").run(ds, org);
  const group = db.prepare("INSERT INTO chunk_groups (id, dataset_id, name, description, tracking_id, metadata, tag_set, created_at, updated_at) VALUES (?, ?, 'g', '', ?, NULL, '[]', ?, ?)");
  const chunk = db.prepare("INSERT INTO chunks (id, dataset_id, chunk_html, created_at, updated_at) VALUES (?, ?, 'x', 0, 0)");
  const member = db.prepare('INSERT INTO chunk_group_members (group_id, chunk_id, created_at) VALUES (?, ?, 0)');
  db.transaction(() => {
    for (let i = 0; i < 2000; i++) {
      group.run(`g-${i}`, ds, `t-${i}`, i, i);
      chunk.run(`c-${i}`, ds);
      member.run(`g-${i}`, `c-${i}`);
    }
  })();
});

afterAll(() => {
  db?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The plan's steps, one line each. */
const plan = (sql: string): string[] => (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all('c-1', 'd-1') as { detail: string }[]).map((r) => r.detail);

describe('SQLite query plans', () => {
  it("reads a chunk's groups from its memberships, each group by its primary key", () => {
    const steps = plan(GROUPS_OF_CHUNK);
    const members = steps.findIndex((s) => /^SEARCH m USING .*INDEX .*\(chunk_id=\?\)/.test(s));
    const groups = steps.findIndex((s) => /^SEARCH g USING .*INDEX sqlite_autoindex_chunk_groups_1 \(id=\?\)/.test(s));
    expect(members, steps.join('\n')).toBeGreaterThanOrEqual(0);
    expect(groups, steps.join('\n')).toBeGreaterThan(members);
    expect(steps.some((s) => /groups_dataset|SCAN g\b/.test(s)), steps.join('\n')).toBe(false);
  });
});
