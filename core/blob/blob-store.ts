/**
 * Where file bytes live: CSV/JSONL uploads and documents. Two implementations behind one
 * interface: the embedded store under `<dataDir>/blobs`, whose presigned URLs point at the
 * service itself (facade/routes/blob.ts), and any S3-compatible store when `S3_ENDPOINT` is set.
 */
import type { Readable } from 'node:stream';
import type { Config } from '../config.js';
import { openLocalBlobStore } from './local-blob-store.js';

/** Bytes stored under keys (see blob-key.ts for what a key may be). */
export interface BlobStore {
  /** A URL the client PUTs the bytes to: valid ttlSeconds, at most maxBytes, usable once (embedded store). */
  presignPut(key: string, opts: { maxBytes: number; ttlSeconds: number }): Promise<string>;
  /** A URL to GET the bytes, valid ttlSeconds, served with Content-Disposition naming fileName. */
  presignGet(key: string, opts: { ttlSeconds: number; fileName: string; contentType?: string }): Promise<string>;
  /** Size of the stored object, or undefined when absent (an upload in progress is absent). */
  stat(key: string): Promise<number | undefined>;
  /** The stored bytes from byte `start` (default 0) to the end, as a stream (resumable imports). 404 QuarryError when absent. */
  read(key: string, start?: number): Promise<Readable>;
  /** Stores a stream under key (document uploads through the API); 413 QuarryError past maxBytes, nothing stored then. Returns bytes stored. */
  write(key: string, body: Readable, maxBytes: number): Promise<number>;
  /** Removes the object (no error when absent). */
  delete(key: string): Promise<void>;
  /** Removes every object whose key is below the folder `prefix` (a valid key: `datasets/<id>`), as a purged dataset's files. */
  deleteAll(prefix: string): Promise<void>;
  /** Calls listener(key, size) after an upload through a presigned URL completes in THIS process (embedded store only; S3 never calls it). */
  onStored(listener: (key: string, size: number) => void): void;
}

/** Opens the store the config names: S3 when `s3Endpoint` is set, else the embedded one. */
export async function openBlobStore(config: Config): Promise<BlobStore> {
  if (config.s3Endpoint !== null) {
    // Imported only when used: the AWS SDK takes a while to load and most installs never need it.
    const { openS3BlobStore } = await import('./s3-blob-store.js');
    return openS3BlobStore(config);
  }
  return openLocalBlobStore(config);
}
