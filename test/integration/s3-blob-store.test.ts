/**
 * The S3 blob store against a real S3-compatible server (s3rver on loopback, SigV4 checked):
 * presigned PUT and GET through plain HTTP, stat, reads whole and from an offset, the write limit
 * (413, nothing stored), delete, and the bucket made at open.
 */
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBlobStore, type BlobStore } from '../../core/blob/blob-store.js';
import { S3BlobStore } from '../../core/blob/s3-blob-store.js';
import { loadConfig } from '../../core/config.js';
import { QuarryError } from '../../core/domain/errors.js';
import { startS3Server, type S3Server } from '../helpers/s3-server.js';

let s3: S3Server;
let store: BlobStore;
const KEY = 'datasets/6a0c7f43-8c1d-4f55-9b1e-2f7d0c9e4a11/files/0d3b6a52-41f9-4c1a-8d2e-7e5b9f3c2a10';
const CSV = 'id,text\n1,quack\n2,hönk\n';

beforeAll(async () => {
  s3 = await startS3Server();
  // The bucket does not exist yet: opening the store creates it.
  store = await openBlobStore(loadConfig({ QUARRY_DATA_DIR: '/nonexistent-never-used', ...s3.env }));
}, 60_000);
afterAll(async () => {
  await s3?.stop();
});

describe('S3 blob store', () => {
  it('is the S3 store when S3_ENDPOINT is set', () => {
    expect(store).toBeInstanceOf(S3BlobStore);
  });

  it('takes a presigned PUT, then stats, reads (whole and from an offset) and serves a presigned GET', async () => {
    expect(await store.stat(KEY)).toBeUndefined();
    const put = await store.presignPut(KEY, { maxBytes: 1000, ttlSeconds: 600 });
    expect(put).toContain('X-Amz-Signature=');
    const res = await fetch(put, { method: 'PUT', body: CSV });
    const answer = await res.clone().text();
    expect(res.status, answer).toBe(200);
    expect(res.headers.get('etag')).toMatch(/^"[0-9a-f]{32}"$/);
    const size = Buffer.byteLength(CSV);
    expect(await store.stat(KEY)).toBe(size);
    expect(await text(await store.read(KEY))).toBe(CSV);
    expect(await text(await store.read(KEY, 8))).toBe(CSV.slice(8));
    expect(await text(await store.read(KEY, size))).toBe('');

    const get = await store.presignGet(KEY, { ttlSeconds: 60, fileName: 'ducks ä.csv', contentType: 'text/csv' });
    const got = await fetch(get);
    expect(got.status).toBe(200);
    expect(await got.text()).toBe(CSV);
    expect(got.headers.get('content-type')).toBe('text/csv');
    expect(got.headers.get('content-disposition')).toBe(`attachment; filename="ducks _.csv"; filename*=UTF-8''ducks%20%C3%A4.csv`);
  });

  it('refuses a tampered presigned URL', async () => {
    const url = new URL(await store.presignGet(KEY, { ttlSeconds: 60, fileName: 'a.csv' }));
    url.searchParams.set('response-content-disposition', 'attachment; filename="evil.exe"');
    expect((await fetch(url)).status).toBe(403);
  });

  it('writes a stream, refuses one over its limit with 413 and stores nothing, and deletes', async () => {
    const key = `${KEY}-doc`;
    expect(await store.write(key, Readable.from([Buffer.from('hello '), Buffer.from('world')]), 11)).toBe(11);
    expect(await text(await store.read(key))).toBe('hello world');
    await store.delete(key);
    expect(await store.stat(key)).toBeUndefined();

    const over = await store.write(key, Readable.from([Buffer.alloc(8), Buffer.alloc(8)]), 10).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(over).toBeInstanceOf(QuarryError);
    expect((over as QuarryError).httpStatus).toBe(413);
    expect(await store.stat(key)).toBeUndefined();

    const missing = await store.read(key).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((missing as QuarryError).httpStatus).toBe(404);
    await store.delete(key); // absent: no error
  });

  it('deletes every object below a folder, and only those', async () => {
    const gone = Array.from({ length: 3 }, (_, i) => `datasets/p1/files/f${i}`);
    const kept = 'datasets/p10/files/f0';
    for (const key of [...gone, kept]) await store.write(key, Readable.from([Buffer.from(key)]), 100);
    await store.deleteAll('datasets/p1');
    for (const key of gone) expect(await store.stat(key)).toBeUndefined();
    expect(await store.stat(kept)).toBe(kept.length);
  });
});
