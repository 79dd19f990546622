/**
 * The embedded blob store: one file per key under `<dataDir>/blobs`, and presigned URLs that point
 * at the service itself (`PUT|GET ${publicUrl}/api/blob/<key>?expires=…&sig=…`, served by
 * facade/routes/blob.ts), signed with blob-token.ts.
 *
 * An upload streams into a temporary file under `blobs/.uploads` (keys never start with a dot, so
 * it is no key's path), named after the key and opened exclusively (`wx`): a second upload to the
 * same key while one runs is refused, in any process on this data dir. It is counted as it
 * arrives, fsynced, then linked (presigned uploads: the link fails when the key exists, so a URL
 * stores at most once) or renamed (API writes) to its key's path. Nothing is held in memory, and
 * an upload that fails (client gone, over its limit) is removed: only whole files are ever at a
 * key's path.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Config } from '../config.js';
import { forbidden, notFound, QuarryError, badRequest } from '../domain/errors.js';
import { checkBlobKey } from './blob-key.js';
import { ByteLimit } from './byte-limit.js';
import { dataDirBlobSecret } from './blob-secret.js';
import type { BlobStore } from './blob-store.js';
import { signBlobGrant, verifyBlobGrant, type BlobGrant } from './blob-token.js';
import { isHeaderSafeMediaType } from './content-disposition.js';

/** Folder of uploads in progress, under the store's root. */
const UPLOADS_DIR = '.uploads';
/**
 * An upload file untouched this long (ms) belongs to a process that died mid-upload: a live upload
 * writes as bytes arrive, and the route drops a client idle for far less (facade/routes/blob.ts).
 */
export const STALE_UPLOAD_MS = 10 * 60_000;

/** The query of a presigned request, as Koa parses it. */
export type BlobQuery = Readonly<Record<string, string | string[] | undefined>>;

/** A stored object opened for reading. */
export interface OpenedBlob {
  readonly stream: Readable;
  /** Bytes the stream will give. */
  readonly length: number;
}

/** What an upload stored. */
export interface StoredBlob {
  readonly size: number;
  /** Hex MD5 of the bytes: S3's ETag of a single PUT. */
  readonly md5: string;
}

const isErrno = (err: unknown, ...codes: string[]): boolean => codes.includes((err as NodeJS.ErrnoException | null)?.code ?? '');

const alreadyUsed = (why: string): QuarryError => forbidden(`this upload URL was already used (${why}); ask for a new one`);
const badSignature = (): QuarryError => forbidden('the URL signature is missing or does not match; use the presigned URL exactly as it was given');

/** One query parameter as a string, or undefined when absent or repeated. */
const param = (query: BlobQuery, name: string): string | undefined => {
  const v = query[name];
  return typeof v === 'string' ? v : undefined;
};

/** A non-negative safe integer written in plain digits, or undefined. */
const digits = (text: string | undefined): number | undefined => {
  if (text === undefined || text.length === 0 || text.length > 16) return undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return undefined;
  }
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
};

/** The embedded store (see the file comment). */
export class LocalBlobStore implements BlobStore {
  private readonly listeners: ((key: string, size: number) => void)[] = [];
  private readonly uploads: string;

  constructor(
    /** Folder holding the objects. */
    readonly root: string,
    private readonly secret: string,
    /** Base URL of the service (no trailing slash). */
    private readonly publicUrl: string,
  ) {
    this.uploads = path.join(root, UPLOADS_DIR);
  }

  /** A signed PUT URL for `key`. */
  async presignPut(key: string, opts: { maxBytes: number; ttlSeconds: number }): Promise<string> {
    checkBlobKey(key);
    const grant: BlobGrant = { method: 'PUT', key, expires: this.expiry(opts.ttlSeconds), maxBytes: opts.maxBytes };
    const query = new URLSearchParams({ expires: String(grant.expires), max: String(opts.maxBytes), sig: signBlobGrant(this.secret, grant) });
    return `${this.publicUrl}/api/blob/${key}?${query}`;
  }

  /** A signed GET URL for `key`. */
  async presignGet(key: string, opts: { ttlSeconds: number; fileName: string; contentType?: string }): Promise<string> {
    checkBlobKey(key);
    if (opts.contentType !== undefined && !isHeaderSafeMediaType(opts.contentType)) throw badRequest(`Invalid content type "${opts.contentType}"`);
    const grant: BlobGrant = { method: 'GET', key, expires: this.expiry(opts.ttlSeconds), fileName: opts.fileName, contentType: opts.contentType };
    const query = new URLSearchParams({ expires: String(grant.expires), name: opts.fileName });
    if (opts.contentType !== undefined) query.set('type', opts.contentType);
    query.set('sig', signBlobGrant(this.secret, grant));
    return `${this.publicUrl}/api/blob/${key}?${query}`;
  }

  /**
   * The grant a presigned request carries, checked: 403 when the signature is missing or does not
   * match (tampered, or a URL of the other method), or when it expired.
   */
  checkGrant(method: 'PUT' | 'GET', key: string, query: BlobQuery): BlobGrant {
    const expires = digits(param(query, 'expires'));
    const sig = param(query, 'sig');
    if (expires === undefined || sig === undefined) throw badSignature();
    let grant: BlobGrant;
    if (method === 'PUT') {
      const maxBytes = digits(param(query, 'max'));
      if (maxBytes === undefined) throw badSignature();
      grant = { method, key, expires, maxBytes };
    } else {
      const fileName = param(query, 'name');
      if (fileName === undefined) throw badSignature();
      grant = { method, key, expires, fileName, contentType: param(query, 'type') };
    }
    const verdict = verifyBlobGrant(this.secret, grant, sig);
    if (verdict === 'invalid') throw badSignature();
    if (verdict === 'expired') throw forbidden(`this presigned URL expired at ${new Date(expires * 1000).toISOString()}`);
    return grant;
  }

  /**
   * Stores a presigned upload: at most once per key (403 when the key is stored or an upload to it
   * runs), 413 past `maxBytes`. Then tells the {@link onStored} listeners.
   */
  async receive(key: string, body: Readable, maxBytes: number): Promise<StoredBlob> {
    const stored = await this.put(key, body, maxBytes, true);
    for (const listener of this.listeners) {
      try {
        listener(key, stored.size);
      } catch (err) {
        // The upload is stored whatever a listener does; its failure must not turn that into an error.
        process.emitWarning(`blob store: an onStored listener failed for ${key}: ${(err as Error).message}`);
      }
    }
    return stored;
  }

  async stat(key: string): Promise<number | undefined> {
    try {
      const st = await fs.stat(this.pathOf(key));
      return st.isFile() ? st.size : undefined;
    } catch (err) {
      if (isErrno(err, 'ENOENT', 'ENOTDIR')) return undefined;
      throw err;
    }
  }

  async read(key: string, start = 0): Promise<Readable> {
    return (await this.open(key, start)).stream;
  }

  /** The bytes of `key` from `start`, with their length; 404 when absent. */
  async open(key: string, start = 0): Promise<OpenedBlob> {
    if (!Number.isSafeInteger(start) || start < 0) throw badRequest(`Invalid read offset ${start}`);
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(this.pathOf(key), 'r');
    } catch (err) {
      if (isErrno(err, 'ENOENT', 'ENOTDIR', 'EISDIR')) throw notFound(`no stored file at ${key}`);
      throw err;
    }
    try {
      const { size } = await handle.stat();
      return { stream: handle.createReadStream({ start, autoClose: true }), length: Math.max(0, size - start) };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  async write(key: string, body: Readable, maxBytes: number): Promise<number> {
    return (await this.put(key, body, maxBytes, false)).size;
  }

  async deleteAll(prefix: string): Promise<void> {
    await fs.rm(this.pathOf(prefix), { recursive: true, force: true });
  }

  async delete(key: string): Promise<void> {
    await fs.rm(this.pathOf(key), { force: true });
  }

  onStored(listener: (key: string, size: number) => void): void {
    this.listeners.push(listener);
  }

  /** Epoch seconds `ttlSeconds` from now. */
  private expiry(ttlSeconds: number): number {
    return Math.floor(Date.now() / 1000) + Math.max(1, Math.floor(ttlSeconds));
  }

  /** The file of a key; the key rule (blob-key.ts) keeps it inside {@link root}. */
  private pathOf(key: string): string {
    const file = path.join(this.root, ...checkBlobKey(key).split('/'));
    // Belt and braces: the key rule already forbids every way out of the folder.
    if (!file.startsWith(this.root + path.sep)) throw badRequest(`Invalid blob key ${key}`);
    return file;
  }

  /** Streams `body` to the key's file through an exclusive upload file (see the file comment). */
  private async put(key: string, body: Readable, maxBytes: number, once: boolean): Promise<StoredBlob> {
    // Until the pipeline listens, an error of the source (a client gone) would be uncaught; the
    // pipeline then finds the source errored and fails with it.
    const early = (): void => undefined;
    body.on('error', early);
    try {
      return await this.putListened(key, body, maxBytes, once);
    } finally {
      body.off('error', early);
    }
  }

  /** {@link put} once the source's early errors are caught. */
  private async putListened(key: string, body: Readable, maxBytes: number, once: boolean): Promise<StoredBlob> {
    const file = this.pathOf(key);
    if (once && (await this.stat(key)) !== undefined) throw alreadyUsed('the file is stored');
    const draft = path.join(this.uploads, createHash('sha256').update(key).digest('hex'));
    let handle: fs.FileHandle | undefined = await this.openDraft(draft, once);
    try {
      const md5 = createHash('md5');
      const limit = new ByteLimit(maxBytes, md5);
      try {
        await pipeline(body, limit, appendTo(handle));
      } catch (err) {
        if (isErrno(err, 'ERR_STREAM_PREMATURE_CLOSE', 'ECONNRESET')) {
          throw new QuarryError('cancelled', 'The upload ended before all its bytes arrived; nothing was stored', { cause: err });
        }
        throw err;
      }
      await handle.sync();
      await handle.close();
      handle = undefined;
      await fs.mkdir(path.dirname(file), { recursive: true });
      if (once) {
        try {
          await fs.link(draft, file);
        } catch (err) {
          if (isErrno(err, 'EEXIST')) throw alreadyUsed('the file is stored');
          throw err;
        }
        await fs.rm(draft, { force: true });
      } else {
        await fs.rename(draft, file);
      }
      await syncDir(path.dirname(file));
      return { size: limit.bytes, md5: md5.digest('hex') };
    } catch (err) {
      await handle?.close().catch(() => undefined);
      await fs.rm(draft, { force: true });
      throw err;
    }
  }

  /** Opens a key's upload file exclusively; an abandoned one (see {@link STALE_UPLOAD_MS}) is replaced. */
  private async openDraft(draft: string, once: boolean): Promise<fs.FileHandle> {
    try {
      return await fs.open(draft, 'wx', 0o600);
    } catch (err) {
      if (!isErrno(err, 'EEXIST')) throw err;
    }
    const st = await fs.stat(draft).catch(() => undefined);
    if (st === undefined || Date.now() - st.mtimeMs >= STALE_UPLOAD_MS) {
      await fs.rm(draft, { force: true });
      try {
        return await fs.open(draft, 'wx', 0o600);
      } catch (err) {
        if (!isErrno(err, 'EEXIST')) throw err;
      }
    }
    throw once ? alreadyUsed('an upload to it is in progress') : new QuarryError('too_many_requests', 'Another upload to this file is in progress; retry shortly');
  }
}

/**
 * A pipeline's last stage writing every chunk to `handle`. Not `handle.createWriteStream()`: its
 * stream keeps a reference on the handle that, without autoClose, makes `close()` wait forever.
 */
function appendTo(handle: fs.FileHandle): (source: AsyncIterable<Buffer>) => Promise<void> {
  return async (source) => {
    for await (const chunk of source) {
      for (let offset = 0; offset < chunk.length; ) {
        offset += (await handle.write(chunk, offset, chunk.length - offset)).bytesWritten;
      }
    }
  };
}

/** fsyncs a folder, so that a rename or link into it survives a crash. */
async function syncDir(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Opens the embedded store of `config.dataDir`, its key from the config or the data dir. */
export async function openLocalBlobStore(config: Config): Promise<LocalBlobStore> {
  const root = path.resolve(config.dataDir, 'blobs');
  await fs.mkdir(path.join(root, UPLOADS_DIR), { recursive: true });
  const secret = config.blobSecret ?? (await dataDirBlobSecret(config.dataDir));
  return new LocalBlobStore(root, secret, config.publicUrl);
}
