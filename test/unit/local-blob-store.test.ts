/**
 * The embedded blob store on a real temp dir: bytes in and out (whole and from an offset), limits
 * that leave nothing behind, keys that cannot leave the folder, presigned uploads stored once, and
 * one signing key however many processes create it at once.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BLOB_SECRET_FILE, dataDirBlobSecret } from '../../core/blob/blob-secret.js';
import { signBlobGrant } from '../../core/blob/blob-token.js';
import { LocalBlobStore, openLocalBlobStore } from '../../core/blob/local-blob-store.js';
import { loadConfig } from '../../core/config.js';
import { QuarryError } from '../../core/domain/errors.js';

let dir: string;
let store: LocalBlobStore;
const KEY = 'datasets/0b7e2c3a-1111-4222-8333-944445555666/files/6f1d8a2b-7777-4888-9999-aaaabbbbcccc';

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-blob-'));
  store = await openLocalBlobStore(loadConfig({ QUARRY_DATA_DIR: dir }));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The error a promise rejects with. */
async function failure(p: Promise<unknown>): Promise<QuarryError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(QuarryError);
  return err as QuarryError;
}

/** Files left in the folder of uploads in progress. */
const drafts = (): string[] => fs.readdirSync(path.join(store.root, '.uploads'));

describe('local blob store', () => {
  it('writes, stats, reads whole and from an offset, and deletes', async () => {
    const bytes = Buffer.from('id,text\n1,hello\n2,wörld\n');
    expect(await store.stat(KEY)).toBeUndefined();
    expect(await store.write(KEY, Readable.from([bytes.subarray(0, 5), bytes.subarray(5)]), bytes.length)).toBe(bytes.length);
    expect(await store.stat(KEY)).toBe(bytes.length);
    expect(await text(await store.read(KEY))).toBe(bytes.toString());
    expect(await text(await store.read(KEY, 8))).toBe(bytes.subarray(8).toString());
    expect(await text(await store.read(KEY, bytes.length))).toBe('');
    await store.delete(KEY);
    expect(await store.stat(KEY)).toBeUndefined();
    expect((await failure(store.read(KEY))).httpStatus).toBe(404);
    await store.delete(KEY); // absent: no error
    expect(drafts()).toEqual([]);
  });

  it('deletes every object below a folder, and only those', async () => {
    const gone = ['datasets/d1/files/a', 'datasets/d1/files/b'];
    const kept = 'datasets/d10/files/a';
    for (const key of [...gone, kept]) await store.write(key, Readable.from([Buffer.from(key)]), 100);
    await store.deleteAll('datasets/d1');
    for (const key of gone) expect(await store.stat(key)).toBeUndefined();
    expect(await store.stat(kept)).toBe(kept.length);
    await store.deleteAll('datasets/d1'); // absent: no error
    expect((await failure(store.deleteAll('../datasets'))).httpStatus).toBe(400);
  });

  it('refuses a write past its limit with 413 and leaves nothing, even over an existing object', async () => {
    const key = 'datasets/a/files/over';
    const err = await failure(store.write(key, Readable.from([Buffer.alloc(60), Buffer.alloc(60)]), 100));
    expect(err.httpStatus).toBe(413);
    expect(err.message).toMatch(/100 bytes/);
    expect(await store.stat(key)).toBeUndefined();
    await store.write(key, Readable.from([Buffer.from('old')]), 100);
    expect((await failure(store.write(key, Readable.from([Buffer.alloc(101)]), 100))).httpStatus).toBe(413);
    expect(await text(await store.read(key))).toBe('old');
    expect(drafts()).toEqual([]);
  });

  it('leaves nothing when the source fails mid-way', async () => {
    const key = 'datasets/a/files/broken';
    const source = new PassThrough();
    const writing = store.write(key, source, 1000);
    source.write(Buffer.alloc(10));
    source.destroy(new Error('connection reset'));
    await expect(writing).rejects.toThrow();
    expect(await store.stat(key)).toBeUndefined();
    expect(drafts()).toEqual([]);
  });

  it('refuses keys that could leave the folder or need escaping', async () => {
    for (const key of ['../secret', 'datasets/../../etc/passwd', '/etc/passwd', 'a//b', 'a/', 'a/.hidden', '.uploads/x', 'a\\b', 'a%2Fb', 'a b', 'a/..', '', 'x'.repeat(600)]) {
      expect((await failure(store.stat(key))).httpStatus, key).toBe(400);
      expect((await failure(store.write(key, Readable.from([Buffer.from('x')]), 10))).httpStatus, key).toBe(400);
      expect((await failure(store.read(key))).httpStatus, key).toBe(400);
      await expect(store.presignPut(key, { maxBytes: 10, ttlSeconds: 10 }), key).rejects.toThrow(QuarryError);
    }
    expect(fs.existsSync(path.join(dir, 'secret'))).toBe(false);
  });

  it('stores a presigned upload once, refuses a second while the first runs, and tells listeners', async () => {
    const key = 'datasets/a/files/once';
    const stored: [string, number][] = [];
    store.onStored((k, size) => stored.push([k, size]));
    const first = new PassThrough();
    const receiving = store.receive(key, first, 1000);
    first.write('hello ');
    // Give the upload its exclusive file before the second one tries.
    await new Promise((r) => setTimeout(r, 50));
    const second = await failure(store.receive(key, Readable.from([Buffer.from('other')]), 1000));
    expect(second.httpStatus).toBe(403);
    expect(second.message).toMatch(/already used.*in progress/);
    expect(await store.stat(key)).toBeUndefined();
    first.end('world');
    const result = await receiving;
    expect(result.size).toBe(11);
    expect(result.md5).toBe('5eb63bbbe01eeed093cb22bb8f5acdc3');
    expect(stored).toContainEqual([key, 11]);
    const again = await failure(store.receive(key, Readable.from([Buffer.from('again')]), 1000));
    expect(again.message).toMatch(/already used.*stored/);
    expect(await text(await store.read(key))).toBe('hello world');
  });

  it('checks presigned URLs: signed fields, method and expiry', async () => {
    const url = new URL(await store.presignPut(KEY, { maxBytes: 500, ttlSeconds: 60 }));
    expect(url.pathname).toBe(`/api/blob/${KEY}`);
    const query = Object.fromEntries(url.searchParams);
    expect(store.checkGrant('PUT', KEY, query).maxBytes).toBe(500);
    expect(() => store.checkGrant('GET', KEY, query)).toThrow(/signature/);
    expect(() => store.checkGrant('PUT', KEY, { ...query, max: '501' })).toThrow(/signature/);
    expect(() => store.checkGrant('PUT', 'datasets/a/files/other', query)).toThrow(/signature/);
    expect(() => store.checkGrant('PUT', KEY, { ...query, sig: undefined })).toThrow(/signature/);
    expect(() => store.checkGrant('PUT', KEY, { ...query, expires: [query.expires!, query.expires!] })).toThrow(/signature/);
    // A URL presigned long ago: signed right, expiry past.
    const known = new LocalBlobStore(store.root, 'k'.repeat(64), 'http://x');
    const expires = Math.floor(Date.now() / 1000) - 5;
    const sig = signBlobGrant('k'.repeat(64), { method: 'PUT', key: KEY, expires, maxBytes: 1 });
    expect(() => known.checkGrant('PUT', KEY, { expires: String(expires), max: '1', sig })).toThrow(/expired/);
    expect(() => known.checkGrant('PUT', KEY, { expires: String(expires + 3600), max: '1', sig })).toThrow(/signature/);
  });

  it('makes one signing key however many processes create it at once', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-secret-'));
    try {
      const script = `import('${path.resolve('core/blob/blob-secret.ts')}').then(m => m.dataDirBlobSecret(process.argv[1])).then(s => process.stdout.write(s))`;
      const run = (): Promise<string> =>
        new Promise((resolve, reject) => {
          const child = spawn(process.execPath, ['--import', 'tsx', '-e', script, dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });
          let out = '';
          child.stdout.on('data', (d: Buffer) => (out += d.toString()));
          child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}`))));
        });
      const secrets = await Promise.all([run(), run(), run(), run(), dataDirBlobSecret(dataDir), dataDirBlobSecret(dataDir)]);
      expect(new Set(secrets).size).toBe(1);
      expect(secrets[0]).toMatch(/^[0-9a-f]{64}$/);
      const file = path.join(dataDir, BLOB_SECRET_FILE);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.readdirSync(dataDir)).toEqual([BLOB_SECRET_FILE]);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 30_000);
});
