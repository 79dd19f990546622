/**
 * The credential of the embedded blob store's presigned URLs: an HMAC-SHA256 over what the URL
 * grants (method, key, expiry, and the size limit of an upload or the file name and type of a
 * download), keyed by the store's secret. The URL carries the grant's fields in its query and the
 * signature beside them; the route rebuilds the grant from the request and checks it, so changing
 * any field (or using a PUT URL for a GET) breaks the signature.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** What a presigned URL allows. */
export interface BlobGrant {
  readonly method: 'PUT' | 'GET';
  readonly key: string;
  /** Epoch seconds after which the URL is refused. */
  readonly expires: number;
  /** Most bytes an upload may send (PUT only). */
  readonly maxBytes?: number;
  /** File name served in Content-Disposition (GET only). */
  readonly fileName?: string;
  /** Content-Type served (GET only). */
  readonly contentType?: string;
}

/** Why {@link verifyBlobGrant} refused, or `ok`. */
export type BlobGrantVerdict = 'ok' | 'invalid' | 'expired';

/** The signed bytes: a JSON array, so that no field's text can be shifted into another's. */
const payload = (g: BlobGrant): string => JSON.stringify([g.method, g.key, g.expires, g.maxBytes ?? null, g.fileName ?? null, g.contentType ?? null]);

/** The signature of a grant (base64url). */
export function signBlobGrant(secret: string, grant: BlobGrant): string {
  return createHmac('sha256', secret).update(payload(grant)).digest('base64url');
}

/**
 * Checks a presented signature against the grant rebuilt from the request, in constant time, and
 * then the expiry (a forged expiry is `invalid`, never `expired`).
 */
export function verifyBlobGrant(secret: string, grant: BlobGrant, signature: string, nowSeconds: number = Math.floor(Date.now() / 1000)): BlobGrantVerdict {
  const expected = Buffer.from(signBlobGrant(secret, grant));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
  return nowSeconds > grant.expires ? 'expired' : 'ok';
}
