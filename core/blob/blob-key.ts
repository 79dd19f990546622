/**
 * What a blob key may be. Keys become file paths in the embedded store and object keys in S3, and
 * a presigned URL carries one in its path, so the rule is narrow: `/`-separated segments of ASCII
 * letters, digits, `_`, `-` and `.`, each starting with a letter or digit (no `.`, `..` or hidden
 * names), no empty segment (no leading `/`, so never absolute). `datasets/<uuid>/files/<uuid>`
 * passes; nothing that could leave the store's folder or need escaping does.
 */
import { badRequest } from '../domain/errors.js';

/** Longest key accepted, in characters. */
export const MAX_BLOB_KEY_CHARS = 512;
/** Most segments of a key. */
const MAX_SEGMENTS = 16;

const isAlnum = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/** Whether one segment follows the rule (a linear scan, no regex over untrusted text). */
function segmentOk(segment: string): boolean {
  if (segment.length === 0 || !isAlnum(segment.charCodeAt(0))) return false;
  for (let i = 1; i < segment.length; i++) {
    const c = segment.charCodeAt(i);
    if (!isAlnum(c) && c !== 45 /* - */ && c !== 46 /* . */ && c !== 95 /* _ */) return false;
  }
  return true;
}

/** Whether `key` is a valid blob key. */
export function isBlobKey(key: string): boolean {
  if (key.length === 0 || key.length > MAX_BLOB_KEY_CHARS) return false;
  const segments = key.split('/');
  return segments.length <= MAX_SEGMENTS && segments.every(segmentOk);
}

/** Returns `key` when valid, else throws a 400 saying why. */
export function checkBlobKey(key: string): string {
  if (!isBlobKey(key)) {
    throw badRequest(
      `Invalid blob key: it must be at most ${MAX_BLOB_KEY_CHARS} characters of /-separated segments of letters, digits, '-', '_' and '.', each starting with a letter or digit`,
    );
  }
  return key;
}
