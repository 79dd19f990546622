/**
 * A CSV import survives kill -9 of the job worker: killed at three random points mid-file and
 * started again each time, it resumes at its last committed batch, and the dataset ends equal to
 * the file row for row (an oracle over the store: every row's chunk once, with the row's content),
 * with no duplicate and no row lost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../helpers/api.js';
import { eventually } from '../helpers/eventually.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { rng } from '../helpers/random-corpus.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { queryStore } from '../helpers/store-snapshot.js';

const ROWS = 20_000;
const WORDS = ['alpine', 'boot', 'canvas', 'denim', 'ember', 'fjord', 'granite', 'harbor', 'indigo', 'juniper', 'kelp', 'linen'];

let stack: Stack;
let tenant: Tenant;
let ds: Client;

/** A CSV cell, quoted when it holds a comma, quote or newline (RFC 4180). */
const cell = (s: string): string => (/[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

/** The file's rows as the oracle expects them (empty cells absent), and its bytes. */
function productCsv(n: number, seed: number): { rows: Record<string, string>[]; bytes: Buffer } {
  const r = rng(seed);
  const pick = () => WORDS[Math.floor(r() * WORDS.length)]!;
  const rows: Record<string, string>[] = [];
  const lines = ['sku,title,description,price'];
  for (let i = 0; i < n; i++) {
    const row: Record<string, string> = {
      sku: `SKU-${i}`,
      title: `${pick()} ${pick()}, size ${Math.floor(r() * 50)}`,
      // Some descriptions span lines and carry quotes, so a resume point can never be a plain line break.
      description: r() < 0.1 ? `"${pick()}" line one\r\nline two ${pick()}` : `${pick()} ${pick()} ${pick()}`,
      price: (r() * 500).toFixed(2),
    };
    rows.push(row);
    lines.push([row.sku!, row.title!, row.description!, row.price!].map(cell).join(','));
  }
  return { rows, bytes: Buffer.from(`${lines.join('\r\n')}\r\n`) };
}

beforeAll(async () => {
  // Small batches: many commits to be killed between.
  stack = await startStack({ env: { QUARRY_IMPORT_BATCH_ROWS: '250' } });
  tenant = await createTenant(stack);
  ds = tenant.ds;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe('a file import killed mid-file', () => {
  it('ends with exactly the rows of the file after three kill -9 of the job worker', async () => {
    const { rows, bytes } = productCsv(ROWS, 77);
    const created = await ds.post('/api/file/csv_or_jsonl', { file_name: 'products.csv', group_tracking_id: 'products' });
    expect(created.status, created.text).toBe(200);
    const fileId = created.body.file_metadata.id as string;
    const put = await fetch(created.body.presigned_put_url as string, { method: 'PUT', body: new Uint8Array(bytes) });
    expect(put.status, await put.text()).toBe(200);

    const r = rng(3);
    let killedAt = 0;
    for (let k = 0; k < 3; k++) {
      // A random point in the next stretch of the file; each kill lands later than the last.
      const target = killedAt + Math.floor((ROWS / 5) * (0.3 + r()));
      const progress = await eventually(
        { what: `rows_done ≥ ${target}`, timeoutMs: 90_000, intervalMs: 20, context: () => stack.output().slice(-3000) },
        async () => {
          const res = await ds.get(`/api/file/${fileId}`);
          return res.status === 200 && (res.body.rows_done >= target || res.body.status === 'done') ? res.body : undefined;
        },
      );
      expect(progress.status, 'the import must still be running when killed').toBe('processing');
      killedAt = progress.rows_done as number;
      await stack.kill('jobs', 'SIGKILL');
      await stack.start('jobs');
    }

    const done = await eventually({ what: 'the import to finish', timeoutMs: 180_000, intervalMs: 250, context: () => stack.output().slice(-3000) }, async () => {
      const res = await ds.get(`/api/file/${fileId}`);
      return res.status === 200 && (res.body.status === 'done' || res.body.status === 'failed') ? res.body : undefined;
    });
    expect(done.status, done.failure).toBe('done');
    expect(done.rows_total).toBe(ROWS);
    expect(done.rows_done, 'every row counted once in the progress').toBe(ROWS);
    expect(done.error_count).toBe(0);

    const stored = await queryStore<{ tracking_id: string; chunk_html: string }>(stack, 'SELECT tracking_id, chunk_html FROM chunks WHERE dataset_id = ?', tenant.datasetId);
    expect(stored.length, 'one chunk per row, no duplicates').toBe(ROWS);
    const byTracking = new Map(stored.map((c) => [c.tracking_id, c.chunk_html]));
    expect(byTracking.size).toBe(ROWS);
    for (let i = 0; i < ROWS; i++) {
      const html = byTracking.get(`products|${i}`);
      expect(html, `row ${i + 1}`).toBeDefined();
      expect(JSON.parse(html!), `row ${i + 1}`).toEqual(rows[i]);
    }
    const members = await queryStore<{ n: number }>(stack, 'SELECT COUNT(*) AS n FROM chunk_group_members m JOIN chunk_groups g ON g.id = m.group_id WHERE g.dataset_id = ? AND g.tracking_id = ?', tenant.datasetId, 'products');
    expect(Number(members[0]!.n), 'every chunk joined the file group once').toBe(ROWS);
  }, 600_000);
});
