/**
 * A search whose query text is as long as the API takes (4,096 CJK characters) is recorded, and
 * so is the rest of its analytics batch: PostgreSQL once refused the text as an index key (a
 * btree entry holds 2,704 bytes), failing the whole batch on every retry, so neither it nor the
 * searches recorded with it were ever stored. Both are counted by `head_queries`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../core/domain/limits.js';
import { eventually } from '../helpers/eventually.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { queryStore } from '../helpers/store-snapshot.js';

/** `n` CJK characters, spread over the block (so that compression saves little). */
const cjk = (n: number): string => Array.from({ length: n }, (_, i) => String.fromCharCode(0x4e00 + ((i * 7919 + 104729) % 20000))).join('');

describe('analytics of the longest query texts', () => {
  let stack: Stack;
  let t: Tenant;
  beforeAll(async () => {
    stack = await startStack();
    t = await createTenant(stack);
  }, 120_000);
  afterAll(async () => stack?.stop());

  it('records a search with the longest query and the one after it', async () => {
    expect((await t.ds.post('/api/chunk', { chunk_html: 'hello long key world' })).status).toBe(200);
    const long = cjk(LIMITS.queryLength);
    const ids: string[] = [];
    for (const query of [long, 'hello']) {
      const res = await t.ds.post('/api/chunk/search', { query, search_type: 'bm25' });
      expect(res.status, res.text).toBe(200);
      ids.push(res.body.id);
    }
    const stored = await eventually({ what: 'both searches recorded', timeoutMs: 30_000 }, async () => {
      const rows = await queryStore<{ id: string; query: string }>(stack, `SELECT id, query FROM search_queries WHERE id IN (?, ?)`, ...ids);
      return rows.length === 2 && rows;
    });
    expect(new Map(stored.map((r) => [r.id, r.query]))).toEqual(new Map([[ids[0], long], [ids[1], 'hello']]));
    const report = await t.ds.post('/api/analytics/search', { type: 'head_queries' });
    expect(report.status, report.text).toBe(200);
    expect(report.body.queries).toEqual([
      { query: 'hello', count: 1 },
      { query: long, count: 1 },
    ]);
  }, 60_000);
});
