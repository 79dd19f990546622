/**
 * The blob store on any S3-compatible server (AWS S3, MinIO, Ceph, R2, ...), used when
 * `S3_ENDPOINT` is set: presigned SigV4 URLs straight to the server, so uploads and downloads never
 * pass through the service.
 *
 * What S3 cannot do that the embedded store does: a presigned PUT enforces neither a size limit nor
 * single use (a URL may be PUT to again until it expires, replacing the object). The import
 * checks the size with `stat` before it reads, and reads only once per file. SigV4 URLs live at
 * most 7 days, so longer TTLs are capped.
 *
 * The client asks for checksums only where the operation requires them: the SDK's default adds
 * CRC32 checksums (and aws-chunked bodies) that many self-hosted servers refuse, and a checksum
 * hoisted into a presigned PUT URL would bind it to an empty body.
 */
import {
  ListObjectsV2Command,
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { pipeline, Readable } from 'node:stream';
import type { Config } from '../config.js';
import { badRequest, notFound } from '../domain/errors.js';
import { checkBlobKey } from './blob-key.js';
import type { BlobStore } from './blob-store.js';
import { contentDisposition, isHeaderSafeMediaType } from './content-disposition.js';
import { ByteLimit, tooLarge } from './byte-limit.js';

/** Longest a SigV4 presigned URL may live, in seconds. */
export const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;
/** Part size of uploads of unknown length (S3's minimum): at most this much is buffered per upload. */
const PART_BYTES = 5 * 1024 * 1024;

/** HTTP status of an S3 error, when it has one. */
const statusOf = (err: unknown): number | undefined => (err instanceof S3ServiceException ? err.$metadata.httpStatusCode : undefined);

const ttl = (seconds: number): number => Math.min(MAX_PRESIGN_SECONDS, Math.max(1, Math.floor(seconds)));

/** The S3 store (see the file comment). */
export class S3BlobStore implements BlobStore {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
  ) {}

  presignPut(key: string, opts: { maxBytes: number; ttlSeconds: number }): Promise<string> {
    const command = new PutObjectCommand({ Bucket: this.bucket, Key: checkBlobKey(key) });
    return getSignedUrl(this.client, command, { expiresIn: ttl(opts.ttlSeconds) });
  }

  presignGet(key: string, opts: { ttlSeconds: number; fileName: string; contentType?: string }): Promise<string> {
    if (opts.contentType !== undefined && !isHeaderSafeMediaType(opts.contentType)) throw badRequest(`Invalid content type "${opts.contentType}"`);
    const command = new GetObjectCommand({
      Bucket: this.bucket,
      Key: checkBlobKey(key),
      ResponseContentDisposition: contentDisposition(opts.fileName),
      ...(opts.contentType !== undefined ? { ResponseContentType: opts.contentType } : {}),
    });
    return getSignedUrl(this.client, command, { expiresIn: ttl(opts.ttlSeconds) });
  }

  async stat(key: string): Promise<number | undefined> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: checkBlobKey(key) }));
      return head.ContentLength ?? 0;
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
  }

  async read(key: string, start = 0): Promise<Readable> {
    if (!Number.isSafeInteger(start) || start < 0) throw badRequest(`Invalid read offset ${start}`);
    try {
      const got = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: checkBlobKey(key), ...(start > 0 ? { Range: `bytes=${start}-` } : {}) }),
      );
      // In Node the SDK's body is the response's IncomingMessage (a Readable).
      return got.Body as Readable;
    } catch (err) {
      const status = statusOf(err);
      if (status === 404) throw notFound(`no stored file at ${key}`);
      // 416: the object is there but `start` is at or past its end; an import resuming at the very
      // end reads nothing, as the embedded store gives it.
      if (status === 416 && (await this.stat(key)) !== undefined) return Readable.from([]);
      throw err;
    }
  }

  async write(key: string, body: Readable, maxBytes: number): Promise<number> {
    const limit = new ByteLimit(maxBytes);
    // An error of the source or the limit reaches the Upload through `limit`, and the Upload then
    // aborts: a single PUT is never sent, a multipart upload is aborted (nothing is stored).
    pipeline(body, limit, () => undefined);
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: checkBlobKey(key), Body: limit },
      queueSize: 1,
      partSize: PART_BYTES,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (err) {
      if (limit.over) throw tooLarge(maxBytes);
      throw err;
    } finally {
      // Stops reading the source when the Upload failed without reading it to its end.
      limit.destroy();
    }
    return limit.bytes;
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: checkBlobKey(key) }));
  }

  async deleteAll(prefix: string): Promise<void> {
    const folder = `${checkBlobKey(prefix)}/`;
    // A page of keys at a time (S3 lists at most 1,000), each deleted: the next listing starts
    // over, so a purge cut short and run again finishes what is left.
    for (;;) {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: folder, MaxKeys: 1000 }));
      const keys = (page.Contents ?? []).map((o) => o.Key).filter((k): k is string => typeof k === 'string');
      if (keys.length === 0) return;
      for (const key of keys) await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    }
  }

  /** Never called: uploads go to the S3 server, which tells this process nothing. */
  onStored(_listener: (key: string, size: number) => void): void {}
}

/** A client for the config's S3 server. */
export function s3Client(config: Config): S3Client {
  return new S3Client({
    endpoint: config.s3Endpoint ?? undefined,
    region: config.s3Region,
    forcePathStyle: config.s3ForcePathStyle,
    credentials: { accessKeyId: config.s3AccessKey, secretAccessKey: config.s3SecretKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/** Opens the S3 store of the config, creating its bucket when missing. */
export async function openS3BlobStore(config: Config): Promise<S3BlobStore> {
  const client = s3Client(config);
  try {
    await client.send(new HeadBucketCommand({ Bucket: config.s3Bucket }));
  } catch (err) {
    if (statusOf(err) !== 404) throw err;
    try {
      await client.send(new CreateBucketCommand({ Bucket: config.s3Bucket }));
    } catch (createErr) {
      // Another process created it in between.
      if (statusOf(createErr) !== 409) throw createErr;
    }
  }
  return new S3BlobStore(client, config.s3Bucket);
}
