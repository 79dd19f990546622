/**
 * Files over HTTP: a CSV and a JSONL imported through the presigned URL with mappings, upsert and
 * skip, per-row errors, progress, events, download, listing and deletion; documents sent as
 * base64; and every bad file answered with a clear error (or a clear failure of the file).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiResponse, Client } from '../helpers/api.js';
import { eventually } from '../helpers/eventually.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
let tenant: Tenant;
let ds: Client;

/** The most bytes an upload URL of this stack accepts. */
const MAX_FILE_BYTES = 64 * 1024;
/** The largest document this stack takes. */
const MAX_DOCUMENT_BYTES = 32 * 1024;

/** POST /api/file/upload with a form of `fields` and a `file` part. */
async function postForm(fields: Record<string, string>, file: { name: string; bytes: Uint8Array<ArrayBuffer> | string } | null, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  if (file) form.append('file', new Blob([file.bytes]), file.name);
  const res = await fetch(`${stack.baseUrl}/api/file/upload`, {
    method: 'POST',
    body: form,
    headers: { authorization: tenant.ownerKey, 'tr-dataset': tenant.datasetId, ...headers },
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

beforeAll(async () => {
  stack = await startStack({
    env: { QUARRY_FILE_MAX_BYTES: String(MAX_FILE_BYTES), QUARRY_DOCUMENT_MAX_BYTES: String(MAX_DOCUMENT_BYTES), QUARRY_IMPORT_BATCH_ROWS: '3' },
  });
  tenant = await createTenant(stack);
  ds = tenant.ds;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

/** Asks for an upload URL and PUTs the bytes to it; returns the file id. */
async function upload(body: Record<string, unknown>, bytes: string | Buffer): Promise<{ id: string; url: string; res: ApiResponse }> {
  const res = await ds.post('/api/file/csv_or_jsonl', body);
  expect(res.status, res.text).toBe(200);
  const url = res.body.presigned_put_url as string;
  const put = await fetch(url, { method: 'PUT', body: typeof bytes === 'string' ? bytes : new Uint8Array(bytes) });
  expect(put.status, await put.text()).toBe(200);
  return { id: res.body.file_metadata.id as string, url, res };
}

/** GET /api/file/{id} once the import has ended. */
async function finished(id: string): Promise<Record<string, any>> {
  return eventually({ what: `file ${id} to finish`, timeoutMs: 60_000, context: () => stack.output().slice(-2000) }, async () => {
    const res = await ds.get(`/api/file/${id}`);
    return res.status === 200 && (res.body.status === 'done' || res.body.status === 'failed') ? res.body : undefined;
  });
}

async function chunkByTracking(trackingId: string): Promise<ApiResponse> {
  return ds.get(`/api/chunk/tracking_id/${encodeURIComponent(trackingId)}`);
}

describe('CSV import', () => {
  // BOM, CRLF, a quoted field with a newline and quotes, a row with a missing field, an empty cell.
  const csv =
    '\uFEFFsku,title,price,tags,lat,lon,brand,headline\r\n' +
    'A-1,"Trail boot, waterproof",129.5,"hiking,outdoor",46.5,7.9,Alpina,summit\r\n' +
    'A-2,"Linen shirt\r\nwith ""quotes""",49,summer,,,Loom,breeze\r\n' +
    'A-3,broken row,12\r\n' +
    'A-4,Granite mug,abc,kitchen,1,2,Stone,\r\n' +
    'A-5,Ember lamp,35,home,12.5,-3.25,Glow,warm light\r\n';
  const mappings = [
    { csv_jsonl_field: 'sku', chunk_req_payload_field: 'tracking_id' },
    { csv_jsonl_field: 'price', chunk_req_payload_field: 'num_value' },
    { csv_jsonl_field: 'tags', chunk_req_payload_field: 'tag_set' },
    { csv_jsonl_field: 'brand', chunk_req_payload_field: 'tag_set' },
    { csv_jsonl_field: 'lat', chunk_req_payload_field: 'lat' },
    { csv_jsonl_field: 'lon', chunk_req_payload_field: 'lon' },
    { csv_jsonl_field: 'brand', chunk_req_payload_field: 'boost_phrase' },
    { csv_jsonl_field: 'headline', chunk_req_payload_field: 'boost_phrase' },
  ];
  let file: Record<string, any>;
  let fileId: string;

  beforeAll(async () => {
    const up = await upload(
      {
        file_name: 'products.csv',
        description: 'the spring catalogue',
        link: 'https://shop.example/catalogue',
        metadata: { source: 'erp', price: 'overridden by the row' },
        tag_set: ['catalogue'],
        time_stamp: '2024-03-01 10:00:00',
        group_tracking_id: 'spring',
        mappings,
        fulltext_boost_factor: 2,
        semantic_boost_factor: 0.5,
      },
      csv,
    );
    fileId = up.id;
    expect(up.res.body.file_metadata).toMatchObject({ file_name: 'products.csv', dataset_id: tenant.datasetId, link: 'https://shop.example/catalogue', tag_set: 'catalogue', size: 0 });
    file = await finished(fileId);
  });

  it('finishes with progress, counts and the row errors by row number', () => {
    expect(file.status).toBe('done');
    expect(file.rows_total).toBe(5);
    expect(file.rows_done).toBe(5);
    expect(file.rows_imported).toBe(3);
    expect(file.size).toBe(Buffer.byteLength(csv));
    expect(file.bytes_done).toBe(Buffer.byteLength(csv));
    expect(file.error_count).toBe(2);
    expect(file.errors.map((e: any) => e.row)).toEqual([3, 4]);
    expect(file.errors[0].reason).toMatch(/field/);
    expect(file.errors[1].reason).toMatch(/price.*not a number/);
    expect(file.group_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('applies every mapping to the chunk', async () => {
    const res = await chunkByTracking('A-1');
    expect(res.status, res.text).toBe(200);
    const c = res.body;
    expect(JSON.parse(c.chunk_html)).toEqual({ sku: 'A-1', title: 'Trail boot, waterproof', price: '129.5', tags: 'hiking,outdoor', lat: '46.5', lon: '7.9', brand: 'Alpina', headline: 'summit' });
    expect(c.num_value).toBe(129.5);
    expect([...c.tag_set].sort()).toEqual(['Alpina', 'catalogue', 'hiking', 'outdoor']);
    expect(c.location).toEqual({ lat: 46.5, lon: 7.9 });
    expect(c.link).toBe('https://shop.example/catalogue');
    expect(c.metadata).toMatchObject({ source: 'erp', price: '129.5', sku: 'A-1' });
    expect(c.time_stamp).toMatch(/^2024-03-01[T ]10:00:00/);
    // The quoted newline and quotes survive; an empty lat/lon gives no location.
    const shirt = (await chunkByTracking('A-2')).body;
    expect(JSON.parse(shirt.chunk_html).title).toBe('Linen shirt\r\nwith "quotes"');
    expect(shirt.location ?? null).toBeNull();
  });

  it('puts the chunks in the group named after the file, and they are searchable', async () => {
    const group = await ds.get(`/api/chunk_group/${file.group_id}`);
    expect(group.status, group.text).toBe(200);
    expect(group.body).toMatchObject({ name: 'products.csv', tracking_id: 'spring', file_id: fileId, description: 'the spring catalogue' });
    const members = await ds.get(`/api/chunk_group/${file.group_id}/1`);
    expect(members.status, members.text).toBe(200);
    expect(members.body.chunks.map((c: any) => c.tracking_id ?? c.metadata?.tracking_id).length).toBe(3);
    const hits = await ds.post('/api/chunk/search', { query: 'lamp', search_type: 'bm25' });
    expect(hits.status, hits.text).toBe(200);
    expect(hits.body.chunks.map((h: any) => h.chunk.tracking_id)).toContain('A-5');
  });

  it('lists the file, records its events and serves its bytes back', async () => {
    const list = await ds.get(`/api/dataset/files/${tenant.datasetId}/1`);
    expect(list.status, list.text).toBe(200);
    expect(list.body.file_and_group_ids.map((f: any) => f.file.id)).toContain(fileId);
    expect(list.body.total_pages).toBeGreaterThanOrEqual(1);
    const events = await ds.post('/api/dataset/events', { event_types: ['file_import_started', 'file_import_finished'] });
    expect(events.status, events.text).toBe(200);
    const types = events.body.events.filter((e: any) => JSON.stringify(e.event_data ?? e).includes(fileId)).map((e: any) => e.event_type);
    expect(types.sort()).toEqual(['file_import_finished', 'file_import_started']);
    const download = await fetch(file.s3_url as string);
    expect(download.status).toBe(200);
    // Bytes, not text: a text decoder would drop the BOM.
    expect(Buffer.from(await download.arrayBuffer()).equals(Buffer.from(csv))).toBe(true);
  });

  it('deletes the file with its chunks when asked', async () => {
    const del = await ds.del(`/api/file/${fileId}?delete_chunks=true`);
    expect(del.status, del.text).toBe(204);
    expect((await ds.get(`/api/file/${fileId}`)).status).toBe(404);
    expect((await chunkByTracking('A-1')).status).toBe(404);
    expect((await ds.get(`/api/chunk_group/${file.group_id}`)).status).toBe(404);
    const hits = await ds.post('/api/chunk/search', { query: 'lamp', search_type: 'bm25' });
    expect(hits.body.chunks).toEqual([]);
  });
});

describe('JSONL import', () => {
  it('upserts rows by tracking id by default, and skips existing ones with upsert_by_tracking_id false', async () => {
    const seeded = await ds.post('/api/chunk', { chunk_html: 'original', tracking_id: 'shelf|1' });
    expect(seeded.status, seeded.text).toBe(200);
    const lines = ['{"name":"first"}', '', '{"name":"second"}', '[1,2]', '{"name":', '{"name":"third","gone":null}'].join('\n');
    const skip = await finished((await upload({ file_name: 'shelf.jsonl', group_tracking_id: 'shelf', upsert_by_tracking_id: false }, lines)).id);
    expect(skip.status).toBe('done');
    // Lines are the row numbers: the blank line 2 is no row; line 3 is row index 2, whose tracking id is new.
    expect(skip.errors.map((e: any) => e.row)).toEqual([4, 5]);
    expect(skip.errors[0].reason).toMatch(/not a JSON object/);
    expect(skip.errors[1].reason).toMatch(/JSON/);
    expect((await chunkByTracking('shelf|1')).body.chunk_html).toBe('original');
    expect(JSON.parse((await chunkByTracking('shelf|0')).body.chunk_html)).toEqual({ name: 'first' });
    expect(JSON.parse((await chunkByTracking('shelf|5')).body.chunk_html)).toEqual({ name: 'third' });

    const seeded2 = await ds.post('/api/chunk', { chunk_html: 'original', tracking_id: 'shelf|1' , upsert_by_tracking_id: true });
    expect(seeded2.status, seeded2.text).toBe(200);
    const upsert = await finished((await upload({ file_name: 'shelf2.ndjson', group_tracking_id: 'shelf' }, '{"n":0}\n{"n":1}\n')).id);
    expect(upsert.status).toBe('done');
    expect(upsert.rows_imported).toBe(2);
    expect(JSON.parse((await chunkByTracking('shelf|1')).body.chunk_html)).toEqual({ n: 1 });
  });

  it('skips rows whose tracking id exists: counted as skipped', async () => {
    const first = await finished((await upload({ file_name: 'twice.jsonl', group_tracking_id: 'twice' }, '{"a":1}\n{"a":2}\n')).id);
    expect(first.rows_imported).toBe(2);
    const again = await finished((await upload({ file_name: 'twice.jsonl', group_tracking_id: 'twice', upsert_by_tracking_id: false }, '{"a":9}\n{"a":8}\n{"a":7}\n')).id);
    expect(again).toMatchObject({ status: 'done', rows_done: 3, rows_imported: 1, rows_skipped: 2 });
    expect(JSON.parse((await chunkByTracking('twice|0')).body.chunk_html)).toEqual({ a: 1 });
  });
});

describe('bad files', () => {
  it('refuses a file name whose extension is neither CSV nor JSONL', async () => {
    const res = await ds.post('/api/file/csv_or_jsonl', { file_name: 'products.xlsx' });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/\.csv/);
  });

  it('refuses bad fields with 400 and stores nothing', async () => {
    const before = await ds.get(`/api/dataset/files/${tenant.datasetId}/1`);
    for (const body of [
      {},
      { file_name: 7 },
      { file_name: 'a.csv', metadata: [1, 2] },
      { file_name: 'a.csv', mappings: [{ csv_jsonl_field: 'x', chunk_req_payload_field: 'price' }] },
      { file_name: 'a.csv', mappings: 'sku' },
      { file_name: 'a.csv', upsert_by_tracking_id: 'yes' },
      { file_name: 'a.csv', time_stamp: 'yesterday' },
      { file_name: 'a.csv', fulltext_boost_factor: 'high' },
    ]) {
      const res = await ds.post('/api/file/csv_or_jsonl', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(typeof res.body.message, JSON.stringify(body)).toBe('string');
    }
    const after = await ds.get(`/api/dataset/files/${tenant.datasetId}/1`);
    expect(after.body).toEqual(before.body);
  });

  it('fails a CSV whose header repeats a column, naming it', async () => {
    const up = await upload({ file_name: 'dup.csv' }, 'sku,title,sku\r\n1,a,2\r\n');
    const file = await finished(up.id);
    expect(file.status).toBe('failed');
    expect(file.failure).toMatch(/sku/);
    const events = await ds.post('/api/dataset/events', { event_types: ['file_import_failed'] });
    expect(JSON.stringify(events.body.events)).toContain(up.id);
  });

  it('refuses a reused, tampered or oversized upload with 403/413', async () => {
    const up = await upload({ file_name: 'once.csv' }, 'a\r\n1\r\n');
    const reused = await fetch(up.url, { method: 'PUT', body: 'a\r\n2\r\n' });
    expect(reused.status).toBe(403);
    expect(((await reused.json()) as { message: string }).message).toMatch(/used/);

    const fresh = await ds.post('/api/file/csv_or_jsonl', { file_name: 'big.csv' });
    const url = new URL(fresh.body.presigned_put_url as string);
    const tampered = new URL(url);
    const sig = [...tampered.searchParams.entries()].find(([k]) => /sig/i.test(k))!;
    tampered.searchParams.set(sig[0], sig[1].slice(0, -2) + (sig[1].endsWith('aa') ? 'bb' : 'aa'));
    const t = await fetch(tampered, { method: 'PUT', body: 'a\r\n1\r\n' });
    expect(t.status).toBe(403);
    const big = await fetch(url, { method: 'PUT', body: new Uint8Array(MAX_FILE_BYTES + 1).fill(97) });
    expect(big.status).toBe(413);
    expect(((await big.json()) as { message: string }).message).toMatch(/limit|large|bytes/i);
    // Nothing arrived, so the file is still waiting for its upload.
    const state = await ds.get(`/api/file/${fresh.body.file_metadata.id}`);
    expect(state.body.status).toBe('awaiting_upload');
  });

  it('answers 404 for an unknown file and 400 for a malformed id', async () => {
    expect((await ds.get('/api/file/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await ds.get('/api/file/not-a-uuid')).status).toBe(400);
    expect((await ds.del('/api/file/00000000-0000-4000-8000-000000000000')).status).toBe(404);
  });
});

describe('documents', () => {
  it('splits a Markdown document into chunks of the file group, and serves it back', async () => {
    const sections = Array.from({ length: 6 }, (_, i) => `# Part ${i}\n\n${`Word${i} `.repeat(120)}\n`).join('\n');
    const res = await ds.post('/api/file', { base64_file: Buffer.from(sections).toString('base64'), file_name: 'guide.md', group_tracking_id: 'guide', target_chunk_chars: 300, chunk_overlap_chars: 30 });
    expect(res.status, res.text).toBe(200);
    const id = res.body.file_metadata.id as string;
    const file = await finished(id);
    expect(file.status, file.failure).toBe('done');
    expect(file.rows_total).toBeGreaterThanOrEqual(6);
    const first = await chunkByTracking('guide|0');
    expect(first.status, first.text).toBe(200);
    expect(first.body.chunk_html).toContain('Word0');
    const hits = await ds.post('/api/chunk/search', { query: 'Word5', search_type: 'bm25' });
    expect(hits.body.chunks.length).toBeGreaterThan(0);
    const download = await fetch(file.s3_url as string);
    expect(await download.text()).toBe(sections);
  });

  it('imports a document of hundreds of batches (several turns of the job) whole, with one start and one end event', async () => {
    // ~600 chunks at 3 per batch: longer than a turn, so the job goes back to the queue and the
    // next turn goes on from the committed chunk index with the split it kept.
    const words = Array.from({ length: 5200 }, (_, i) => `w${i}`).join(' ');
    const res = await ds.post('/api/file', { base64_file: Buffer.from(words).toString('base64'), file_name: 'long.txt', group_tracking_id: 'long', target_chunk_chars: 50, chunk_overlap_chars: 0 });
    expect(res.status, res.text).toBe(200);
    const id = res.body.file_metadata.id as string;
    const file = await finished(id);
    expect(file.status, file.failure).toBe('done');
    expect(file.rows_total).toBeGreaterThan(300);
    expect([file.rows_done, file.rows_imported, file.rows_skipped, file.error_count]).toEqual([file.rows_total, file.rows_total, 0, 0]);
    expect(file.bytes_done).toBe(Buffer.byteLength(words));
    expect((await chunkByTracking('long|0')).body.chunk_html).toContain('w0 ');
    const last = await chunkByTracking(`long|${file.rows_total - 1}`);
    expect(last.status, last.text).toBe(200);
    expect(last.body.chunk_html).toContain('w5199');
    expect((await chunkByTracking(`long|${file.rows_total}`)).status).toBe(404);
    const events = await ds.post('/api/dataset/events', { event_types: ['file_import_started', 'file_import_finished', 'file_import_failed'] });
    const types = events.body.events.filter((e: any) => JSON.stringify(e.event_data ?? e).includes(id)).map((e: any) => e.event_type);
    expect(types.sort()).toEqual(['file_import_finished', 'file_import_started']);
  });

  it('streams a multipart HTML document with its fields into chunks', async () => {
    const html = `<html><body><script>var secret = 1;</script><h1>Care guide</h1><p>${'Oil the leather boots monthly. '.repeat(20)}</p><h2>Storage</h2><p>Keep them dry.</p></body></html>`;
    const res = await postForm({ group_tracking_id: 'care', tag_set: '["guide","boots"]', metadata: '{"lang":"en"}', target_chunk_chars: '200' }, { name: 'care.html', bytes: html });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.file_metadata).toMatchObject({ file_name: 'care.html', size: Buffer.byteLength(html), tag_set: 'guide,boots' });
    const file = await finished(res.body.file_metadata.id);
    expect(file.status, file.failure).toBe('done');
    const first = (await chunkByTracking('care|0')).body;
    expect(first.tag_set).toEqual(['guide', 'boots']);
    expect(first.metadata).toMatchObject({ lang: 'en', file_name: 'care.html' });
    expect(first.chunk_html).toContain('Care guide');
    const all = await ds.post('/api/chunk/search', { query: 'secret', search_type: 'bm25' });
    expect(all.body.chunks, 'script text is never indexed').toEqual([]);
  });

  it('refuses a document over the limit with 413, storing nothing', async () => {
    const big = new Uint8Array(MAX_DOCUMENT_BYTES + 1).fill(97);
    const form = await postForm({}, { name: 'big.txt', bytes: big });
    expect(form.status).toBe(413);
    expect(form.body.message).toMatch(/limit|bytes/);
    const b64 = await ds.post('/api/file', { base64_file: Buffer.from(big).toString('base64'), file_name: 'big.txt' });
    expect(b64.status).toBe(413);
  });

  it('refuses a form without a file part, a bad field, or a body that is not a form', async () => {
    expect((await postForm({ file_name: 'a.txt' }, null)).status).toBe(400);
    expect((await postForm({ metadata: '{oops' }, { name: 'a.txt', bytes: 'hello' })).status).toBe(400);
    expect((await postForm({ target_chunk_chars: 'many' }, { name: 'a.txt', bytes: 'hello' })).status).toBe(400);
    expect((await postForm({}, { name: 'a.exe', bytes: 'hello' })).status).toBe(400);
    const json = await ds.post('/api/file/upload', { file_name: 'a.txt' });
    expect(json.status).toBe(400);
    expect(json.body.message).toMatch(/multipart/);
    const keyless = await fetch(`${stack.baseUrl}/api/file/upload`, { method: 'POST', body: new FormData() });
    expect(keyless.status).toBe(401);
  });

  it('refuses an unknown document type, bad base64 and a missing body field', async () => {
    const b64 = Buffer.from('hello').toString('base64');
    expect((await ds.post('/api/file', { base64_file: b64, file_name: 'x.exe' })).status).toBe(400);
    expect((await ds.post('/api/file', { base64_file: '%%%not base64%%%', file_name: 'x.txt' })).status).toBe(400);
    expect((await ds.post('/api/file', { file_name: 'x.txt' })).status).toBe(400);
    expect((await ds.post('/api/file', { base64_file: b64 })).status).toBe(400);
  });
});
