/**
 * `PUT /api/blob/<key>` and `GET /api/blob/<key>`: the embedded blob store's presigned URLs
 * (core/blob/local-blob-store.ts). They take no API key: the URL's signature is the credential, so
 * the gate lets them through keyless and the JSON body reader leaves their bodies alone
 * ({@link BLOB_ROUTES}). An upload streams to disk as it arrives and answers as S3 does: 200, an
 * ETag, an empty body. With an S3 store both answer 404: nothing is stored here.
 */
import { PassThrough } from 'node:stream';
import { QuarryError, notFound } from '../../core/domain/errors.js';
import { contentDisposition } from '../../core/blob/content-disposition.js';
import { isBlobKey } from '../../core/blob/blob-key.js';
import { tooLarge } from '../../core/blob/byte-limit.js';
import { LocalBlobStore } from '../../core/blob/local-blob-store.js';
import type { Services } from '../context.js';
import type { QuarryContext, QuarryRouter } from './router.js';

const PREFIX = '/api/blob/';
const PATTERN = `${PREFIX}*key`;

/** Route keys (`METHOD /pattern`, as the gate names them) of the presigned blob URLs. */
export const BLOB_ROUTES: ReadonlySet<string> = new Set([`PUT ${PATTERN}`, `GET ${PATTERN}`]);

/**
 * An upload that sends nothing for this long (ms) is dropped, and its partial file removed. The
 * server's whole-request timeout is off (facade/main.ts) so that a large file on a slow link can
 * take as long as it keeps sending.
 */
export const UPLOAD_IDLE_MS = 60_000;

/** The key of the request path, unescaped: a key never needs escaping, so `%` is refused too. */
function keyOf(ctx: QuarryContext): string {
  const key = ctx.path.slice(PREFIX.length);
  if (!isBlobKey(key)) throw notFound(`no stored file at ${key}`);
  return key;
}

/** Checks a presigned PUT and streams its body into the store; answers as S3 does. */
async function receive(ctx: QuarryContext, store: LocalBlobStore): Promise<void> {
  const key = keyOf(ctx);
  const maxBytes = store.checkGrant('PUT', key, ctx.query).maxBytes!;
  if (Number(ctx.get('content-length')) > maxBytes) throw tooLarge(maxBytes);
  // The store reads a stream of its own: on a refusal it destroys what it reads, and the request
  // must stay open for the answer. Node's pipe forwards neither errors nor an aborted client.
  const req = ctx.req;
  const body = new PassThrough();
  const onClose = (): void => {
    if (!req.complete) body.destroy(new QuarryError('cancelled', 'The client went away before the upload ended; nothing was stored'));
  };
  const onError = (err: Error): void => {
    body.destroy(new QuarryError('cancelled', `The upload failed: ${err.message}; nothing was stored`));
  };
  req.on('close', onClose);
  req.on('error', onError);
  req.setTimeout(UPLOAD_IDLE_MS, () => req.destroy());
  req.pipe(body);
  try {
    const stored = await store.receive(key, body, maxBytes);
    ctx.set('ETag', `"${stored.md5}"`);
    ctx.status = 200;
    ctx.body = '';
  } finally {
    req.unpipe(body);
    req.off('close', onClose);
    req.off('error', onError);
    req.setTimeout(0);
  }
}

/** Registers the blob routes. */
export function blobRoutes(router: QuarryRouter, services: Services): void {
  const local = (): LocalBlobStore => {
    if (!(services.blobs instanceof LocalBlobStore)) throw notFound('presigned blob URLs are served by the S3 store (S3_ENDPOINT), not here');
    return services.blobs;
  };

  router.put(PATTERN, async (ctx) => {
    try {
      await receive(ctx, local());
    } catch (err) {
      // A refused body is not read: close rather than let Node drain the rest of a large upload
      // on a kept-alive socket (the client still reads this answer).
      ctx.set('Connection', 'close');
      throw err;
    }
  });

  router.get(PATTERN, async (ctx) => {
    const store = local();
    const key = keyOf(ctx);
    const grant = store.checkGrant('GET', key, ctx.query);
    const blob = await store.open(key);
    ctx.set('Content-Disposition', contentDisposition(grant.fileName!));
    // Exactly as signed (checked header-safe when presigned); Koa's `type` would rewrite it.
    ctx.set('Content-Type', grant.contentType ?? 'application/octet-stream');
    if (ctx.method === 'HEAD') {
      // Koa never reads (or closes) a HEAD answer's stream: close the file here.
      blob.stream.destroy();
      ctx.status = 200;
      ctx.length = blob.length;
      return;
    }
    ctx.body = blob.stream;
    ctx.length = blob.length;
  });
}
