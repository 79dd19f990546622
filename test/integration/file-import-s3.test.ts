/**
 * A CSV import with the S3-compatible blob store (S3_ENDPOINT): the presigned PUT URL is the S3
 * server's own, the service hears nothing of the upload, and the import job finds it by looking
 * (a growing delay); the file's download URL is S3's; purging the dataset removes its objects.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBlobStore, type BlobStore } from '../../core/blob/blob-store.js';
import { loadConfig } from '../../core/config.js';
import { datasetBlobPrefix } from '../../core/domain/files.js';
import { eventually } from '../helpers/eventually.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { startS3Server, type S3Server } from '../helpers/s3-server.js';
import { startStack, type Stack } from '../helpers/stack.js';

let s3: S3Server;
let stack: Stack;
let tenant: Tenant;
let blobs: BlobStore;

beforeAll(async () => {
  s3 = await startS3Server();
  stack = await startStack({ env: { ...s3.env } });
  tenant = await createTenant(stack);
  blobs = await openBlobStore(loadConfig({ QUARRY_DATA_DIR: stack.dataDir, ...s3.env }));
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await s3?.stop();
});

describe('file import through S3', () => {
  it('imports a CSV uploaded straight to S3, serves it back, and purges it with the dataset', async () => {
    const csv = 'name,colour\nkite,red\nsail,"blue, deep"\n';
    const created = await tenant.ds.post('/api/file/csv_or_jsonl', { file_name: 'gear.csv', group_tracking_id: 'gear' });
    expect(created.status, created.text).toBe(200);
    const url = new URL(created.body.presigned_put_url as string);
    expect(url.origin, 'the upload goes to the S3 server, not the API').toBe(new URL(s3.env.S3_ENDPOINT!).origin);
    const put = await fetch(url, { method: 'PUT', body: csv });
    expect(put.status, await put.text()).toBe(200);
    const id = created.body.file_metadata.id as string;
    const file = await eventually({ what: 'the S3 import to finish', timeoutMs: 60_000, intervalMs: 200, context: () => stack.output().slice(-2000) }, async () => {
      const res = await tenant.ds.get(`/api/file/${id}`);
      return res.body?.status === 'done' || res.body?.status === 'failed' ? res.body : undefined;
    });
    expect(file).toMatchObject({ status: 'done', rows_total: 2, rows_imported: 2, size: csv.length });
    expect(JSON.parse((await tenant.ds.get('/api/chunk/tracking_id/gear%7C1')).body.chunk_html)).toEqual({ name: 'sail', colour: 'blue, deep' });
    const download = await fetch(file.s3_url as string);
    expect(await download.text()).toBe(csv);

    const prefix = datasetBlobPrefix(tenant.datasetId);
    expect(await blobs.stat(`${prefix}/files/${id}`)).toBe(csv.length);
    expect((await tenant.org.del(`/api/dataset/${tenant.datasetId}`)).status).toBe(204);
    await eventually({ what: 'the purge to remove the dataset\'s objects', timeoutMs: 60_000, intervalMs: 250 }, async () => (await blobs.stat(`${prefix}/files/${id}`)) === undefined);
  });
});
