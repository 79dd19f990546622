/**
 * Reads the request body as JSON for every method that may carry one, once the caller is known
 * (see gate.ts) and only for a registered route, up to that route's limit. Like the reference
 * implementation, a missing Content-Type is treated as JSON. The presigned blob uploads are not
 * JSON: their route streams the body to disk itself ({@link BLOB_ROUTES}), and so does the
 * multipart document upload ({@link STREAMED_BODY_ROUTES}).
 *
 * The body is read by hand rather than with raw-body: the shape check runs on each chunk as it
 * arrives, and a body that breaks it is refused there, its rest never held or joined.
 */
import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import { QuarryError } from '../../core/domain/errors.js';
import { STREAMED_BODY_ROUTES, type BodyLimitOf } from '../body-limits.js';
import { BLOB_ROUTES } from '../routes/blob.js';
import type { RequestState } from '../context.js';
import { acquireScanner, releaseScanner, type JsonShape } from '../json-shape.js';

/** What {@link readBody} got: the whole body, or the shape verdict that stopped it. */
type BodyRead = { readonly shape: 'ok'; readonly bytes: Buffer; readonly received: number } | { readonly shape: Exclude<JsonShape, 'ok'>; readonly key: string | null; readonly received: number };

/** Why {@link readBody} stopped without a body. */
class BodyReadError extends Error {
  constructor(
    readonly kind: 'too_large' | 'aborted' | 'failed',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Reads `req` to its end, at most `limitBytes`, checking its shape chunk by chunk. Stops at the
 * first chunk that breaks the limit or the shape: the listeners go, and Node discards the rest of
 * the upload on the open socket (nothing is buffered) while the client, still writing, can read
 * the error answer instead of failing on a reset connection.
 */
function readBody(req: IncomingMessage, limitBytes: number): Promise<BodyRead> {
  const declared = Number(req.headers['content-length']);
  if (declared > limitBytes) return Promise.reject(new BodyReadError('too_large', 'declared length over the limit'));
  return new Promise<BodyRead>((resolve, reject) => {
    const scanner = acquireScanner(MAX_DEPTH, MAX_CONTAINERS, MAX_ARRAY_ELEMENTS);
    const chunks: Buffer[] = [];
    let received = 0;
    const finish = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('aborted', onAborted);
      req.off('close', onClose);
      req.off('error', onError);
      releaseScanner(scanner);
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > limitBytes) {
        finish();
        reject(new BodyReadError('too_large', 'body over the limit'));
        return;
      }
      const shape = scanner.push(chunk);
      if (shape !== 'ok') {
        const key = scanner.tooLongKey;
        finish();
        resolve({ shape, key, received });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      finish();
      // One chunk (most bodies) is used as it is; more are joined once.
      resolve({ shape: 'ok', bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received), received });
    };
    const onAborted = (): void => {
      finish();
      reject(new BodyReadError('aborted', 'Request body was aborted by the client'));
    };
    const onClose = (): void => {
      if (!req.complete) onAborted();
    };
    const onError = (err: Error): void => {
      finish();
      reject(new BodyReadError('failed', `Could not read the request body: ${err.message}`));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('aborted', onAborted);
    req.on('close', onClose);
    req.on('error', onError);
  });
}

/** Middleware that parses the JSON body into `ctx.state.body`. */
export function jsonBody(limitOf: BodyLimitOf): Middleware<RequestState> {
  return async (ctx, next) => {
    if (ctx.method === 'GET' || ctx.method === 'HEAD' || ctx.method === 'OPTIONS') return next();
    // No registered route: the router answers 404/405 and nothing would read the body.
    const route = ctx.state.route;
    if (route === undefined || BLOB_ROUTES.has(route) || STREAMED_BODY_ROUTES.has(route)) return next();
    const limitBytes = limitOf(route);
    const type = ctx.get('content-type');
    // Bytes, not text: the shape check needs no decoding, a refused body is never decoded, and an
    // accepted one is decoded once, natively, into a flat string (decoding chunk by chunk built
    // a rope that the first scan had to copy: ~1 ms of the event loop per MB).
    let read: BodyRead;
    try {
      read = await readBody(ctx.req, limitBytes);
    } catch (err) {
      if (!(err instanceof BodyReadError)) throw err;
      if (err.kind === 'too_large') throw new QuarryError('payload_too_large', `Request body is larger than the limit of ${limitBytes} bytes for ${route}`);
      throw new QuarryError('bad_request', err.message);
    }
    ctx.state.bodyLength = read.received;
    if (read.shape !== 'ok') {
      const what =
        read.shape === 'too_deep'
          ? `body nests arrays/objects more than ${MAX_DEPTH} levels deep, the most accepted`
          : read.shape === 'too_many'
            ? `body has more than ${MAX_CONTAINERS} arrays/objects, the most accepted in one request`
            : `${read.key === null ? 'body has an array' : `${read.key}: array`} of more than ${MAX_ARRAY_ELEMENTS} elements, the most accepted in any array of a body`;
      throw new QuarryError('invalid_json', `Json Deserialization Error: ${what}`);
    }
    const text = read.bytes.toString('utf8');
    if (text.trim() === '') return next();
    try {
      // Parsed whatever the Content-Type says: curl's default form type is a common slip and
      // the body is JSON all the same.
      ctx.state.body = JSON.parse(text);
    } catch (err) {
      if (/^multipart\//i.test(type)) {
        throw new QuarryError('unsupported_media_type', `Content-Type must be application/json, got "${type}"`);
      }
      throw new QuarryError('invalid_json', `Json Deserialization Error: body is not valid JSON: ${(err as Error).message}`);
    }
    return next();
  };
}

/**
 * Deepest nesting of arrays/objects accepted in a body, as serde_json's recursion limit in the
 * reference implementation. Deeper values parse, but storing them (JSON.stringify) overflows the
 * stack and would turn a caller's mistake into a 500.
 */
export const MAX_DEPTH = 128;

/**
 * Most arrays/objects in one body. A 15 MiB `[[],[],...]` is 5 million of them: a second of
 * JSON.parse and 200+ MB for one request. Real bodies (120 chunks with metadata, filters of 1000
 * conditions) have a few thousand.
 */
export const MAX_CONTAINERS = 250_000;

/**
 * Most elements in any one array of a body. The largest arrays the API takes hold 1,000 (ids,
 * filter values, polygon points; see core/domain/limits.ts), but their caps apply after
 * JSON.parse, and parsing a body of 100,000 group ids takes an event loop ~20 ms that every other
 * tenant's request waits through; refused here, it costs a scan that stops at the cap.
 */
export const MAX_ARRAY_ELEMENTS = 10_000;

