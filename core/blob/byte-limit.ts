/**
 * The size limit of an upload, applied while it streams: a pass-through that counts bytes and
 * fails with 413 at the first chunk past the limit, before that chunk goes on. Both blob stores
 * use it, so that an upload over its limit stores nothing whatever its declared length said.
 */
import type { Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { QuarryError } from '../domain/errors.js';

/** 413 for a body past `maxBytes`. */
export const tooLarge = (maxBytes: number): QuarryError =>
  new QuarryError('payload_too_large', `Payload Too Large: the upload is larger than its limit of ${maxBytes} bytes`);

/** Counts the bytes through it (and hashes them when given a hash); errors past `maxBytes`. */
export class ByteLimit extends Transform {
  /** Bytes passed so far. */
  bytes = 0;
  /** Whether the limit was passed. */
  over = false;

  constructor(
    private readonly maxBytes: number,
    private readonly hash?: Hash,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) {
      this.over = true;
      done(tooLarge(this.maxBytes));
      return;
    }
    this.hash?.update(chunk);
    done(null, chunk);
  }
}
