/**
 * The embedded blob store's presigned URLs end to end: a real stack (the facade serves
 * `/api/blob/...`), URLs presigned by a store built on the stack's own config and data dir (so
 * with the key file the facade made), and plain `fetch` without an API key, as a browser or curl
 * would upload. Checked: a stored upload reads back equal, JSON-looking bodies are stored as
 * bytes, every refusal (reuse, upload in progress, expiry, tampering, over the limit) is a 4xx
 * with a message that names it, and a refused or abandoned upload leaves nothing.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BLOB_SECRET_FILE } from '../../core/blob/blob-secret.js';
import { signBlobGrant } from '../../core/blob/blob-token.js';
import { openLocalBlobStore, type LocalBlobStore } from '../../core/blob/local-blob-store.js';
import { loadConfig } from '../../core/config.js';
import { eventually } from '../helpers/eventually.js';
import { startStack, type Stack } from '../helpers/stack.js';

let stack: Stack;
let blobs: LocalBlobStore;
let n = 0;
/** A fresh file key per test. */
const freshKey = (): string => `datasets/7c9e6679-7425-40de-944b-e07fc1f90ae7/files/upload-${++n}`;

beforeAll(async () => {
  stack = await startStack();
  // The facade made the key file at start; this store reads it, as a second process would.
  expect(fs.existsSync(path.join(stack.dataDir, BLOB_SECRET_FILE))).toBe(true);
  blobs = await openLocalBlobStore(loadConfig(stack.env));
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

/** PUT `body` to `url` with no credentials. */
const put = (url: string, body: BodyInit, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(url, { method: 'PUT', body, headers, duplex: 'half' } as RequestInit);

/** Uploads in progress left in the store's folder. */
const drafts = (): string[] => fs.readdirSync(path.join(blobs.root, '.uploads'));

/** A body that sends `chunks` one by one, then waits for `hold` (if given) before ending. */
function slowBody(chunks: Buffer[], hold?: Promise<void>): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream({
    async pull(controller) {
      if (i < chunks.length) {
        controller.enqueue(chunks[i++]!);
        await new Promise((r) => setTimeout(r, 20));
      } else {
        await hold;
        controller.close();
      }
    },
  });
}

describe('presigned blob URLs of the embedded store', () => {
  it('stores an upload without an API key and serves it back through a presigned GET', async () => {
    const key = freshKey();
    const bytes = Buffer.from('id,text\n1,quack\n2,hönk\n');
    const url = await blobs.presignPut(key, { maxBytes: 1000, ttlSeconds: 60 });
    expect(url.startsWith(`${stack.baseUrl}/api/blob/${key}?`)).toBe(true);
    const res = await put(url, bytes, { 'content-type': 'text/csv' });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.text()).toBe('');
    expect(res.headers.get('etag')).toBe(`"${createHash('md5').update(bytes).digest('hex')}"`);
    expect(await blobs.stat(key)).toBe(bytes.length);

    const get = await blobs.presignGet(key, { ttlSeconds: 60, fileName: 'ducks ä.csv', contentType: 'text/csv' });
    const got = await fetch(get);
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
    expect(got.headers.get('content-type')).toBe('text/csv');
    expect(got.headers.get('content-disposition')).toBe(`attachment; filename="ducks _.csv"; filename*=UTF-8''ducks%20%C3%A4.csv`);

    // The PUT URL does not read, and the GET URL does not write.
    expect((await fetch(url)).status).toBe(403);
    expect((await put(get, 'x')).status).toBe(403);
  });

  it('stores JSON-looking bodies as bytes, never parsing them', async () => {
    for (const text of ['{"chunk_html": "not parsed', '['.repeat(500) + ']'.repeat(500)]) {
      const key = freshKey();
      const res = await put(await blobs.presignPut(key, { maxBytes: 10_000, ttlSeconds: 60 }), text, { 'content-type': 'application/json' });
      expect(res.status, await res.clone().text()).toBe(200);
      expect(fs.readFileSync(path.join(blobs.root, key), 'utf8')).toBe(text);
    }
  });

  it('refuses a second upload to a used URL, and one while an upload to it runs', async () => {
    const key = freshKey();
    const url = await blobs.presignPut(key, { maxBytes: 1000, ttlSeconds: 60 });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const first = put(url, slowBody([Buffer.from('first ')], held));
    await eventually({ what: 'the upload to begin' }, () => drafts().length > 0);
    const during = await put(url, 'second');
    expect(during.status).toBe(403);
    expect((await during.json()).message).toMatch(/already used.*in progress/);
    release();
    expect((await first).status).toBe(200);
    const after = await put(url, 'third');
    expect(after.status).toBe(403);
    expect((await after.json()).message).toMatch(/already used/);
    expect(fs.readFileSync(path.join(blobs.root, key), 'utf8')).toBe('first ');
  });

  it('refuses an expired URL, a tampered one and one without its signature', async () => {
    const key = freshKey();
    const secret = fs.readFileSync(path.join(stack.dataDir, BLOB_SECRET_FILE), 'utf8').trim();
    const expires = Math.floor(Date.now() / 1000) - 1;
    const sig = signBlobGrant(secret, { method: 'PUT', key, expires, maxBytes: 100 });
    const expired = await put(`${stack.baseUrl}/api/blob/${key}?expires=${expires}&max=100&sig=${sig}`, 'x');
    expect(expired.status).toBe(403);
    expect((await expired.json()).message).toMatch(/expired/);

    const url = new URL(await blobs.presignPut(key, { maxBytes: 100, ttlSeconds: 60 }));
    const variants: ((u: URL) => void)[] = [
      (u) => u.searchParams.set('max', '1000000'),
      (u) => u.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 3600)),
      (u) => u.searchParams.delete('sig'),
      (u) => u.searchParams.set('sig', 'A' + u.searchParams.get('sig')!.slice(1)),
      (u) => (u.pathname = u.pathname.replace('upload-', 'other-')),
    ];
    for (const change of variants) {
      const tampered = new URL(url);
      change(tampered);
      if (tampered.href === url.href) continue;
      const res = await put(tampered.href, 'x');
      expect(res.status, tampered.href).toBe(403);
      expect((await res.json()).message).toMatch(/signature/);
    }
    expect(await blobs.stat(key)).toBeUndefined();
    // The untouched URL still works: refusals used nothing up.
    expect((await put(url.href, 'ok')).status).toBe(200);
  });

  it('refuses a body over the limit with 413, declared or streamed, and stores nothing', async () => {
    const key = freshKey();
    const url = await blobs.presignPut(key, { maxBytes: 1000, ttlSeconds: 60 });
    const declared = await put(url, Buffer.alloc(1001));
    expect(declared.status).toBe(413);
    expect((await declared.json()).message).toMatch(/1000 bytes/);
    // No Content-Length: counted as it arrives.
    const streamed = await put(url, slowBody([Buffer.alloc(600), Buffer.alloc(600)]));
    expect(streamed.status).toBe(413);
    expect(await blobs.stat(key)).toBeUndefined();
    await eventually({ what: 'no upload left in progress' }, () => drafts().length === 0);
    // Exactly the limit is fine.
    expect((await put(url, Buffer.alloc(1000))).status).toBe(200);
    expect(await blobs.stat(key)).toBe(1000);
  });

  it('leaves nothing when the client goes away mid-upload, and the URL can be used again', async () => {
    const key = freshKey();
    const url = await blobs.presignPut(key, { maxBytes: 1000, ttlSeconds: 60 });
    const ctl = new AbortController();
    const never = new Promise<void>(() => undefined);
    const gone = fetch(url, { method: 'PUT', body: slowBody([Buffer.from('partial')], never), duplex: 'half', signal: ctl.signal } as RequestInit);
    await eventually({ what: 'the upload to begin' }, () => drafts().length > 0);
    ctl.abort();
    await expect(gone).rejects.toThrow();
    await eventually({ what: 'no upload left in progress' }, () => drafts().length === 0);
    expect(await blobs.stat(key)).toBeUndefined();
    expect((await put(url, 'whole')).status).toBe(200);
  });

  it('answers 404 for a GET of nothing stored and for a key that is no key', async () => {
    const key = freshKey();
    const res = await fetch(await blobs.presignGet(key, { ttlSeconds: 60, fileName: 'a.csv' }));
    expect(res.status).toBe(404);
    expect((await res.json()).message).toMatch(/no stored file/);
    expect((await fetch(`${stack.baseUrl}/api/blob/..%2F..%2Fetc/passwd?expires=1&max=1&sig=x`, { method: 'PUT', body: 'x' })).status).toBe(404);
  });
});
