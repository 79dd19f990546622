/**
 * A document sent as `multipart/form-data` (`POST /api/file/upload`): its one file part is
 * streamed into the blob store as it arrives, never held whole in memory, and its other parts are
 * the fields of `POST /api/file` as text (`metadata` as JSON, `tag_set` as JSON or comma
 * separated, the chunk sizes as integers), in any order.
 */
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { Busboy, type BusboyFileStream } from '@fastify/busboy';
import type { BlobStore } from '../../core/blob/blob-store.js';
import { badRequest } from '../../core/domain/errors.js';

/** Most form fields besides the file: the document fields number fewer than 16. */
const MAX_FIELDS = 32;
/** Longest field value (a description or metadata of up to 64 KiB, with room for JSON escapes). */
const MAX_FIELD_BYTES = 256 * 1024;
/** Fields given as JSON text. */
const JSON_FIELDS = new Set(['metadata']);
/** Fields given as integers. */
const INTEGER_FIELDS = new Set(['target_chunk_chars', 'chunk_overlap_chars']);

/** What the form carried: the fields (typed as the JSON body would be), the file part's own name, and the bytes stored. */
export interface ReceivedDocument {
  readonly fields: Record<string, unknown>;
  readonly partFileName: string | null;
  readonly size: number;
}

/** A form field's text as the JSON body would carry it. */
function typed(name: string, value: string): unknown {
  if (JSON_FIELDS.has(name) || (name === 'tag_set' && value.trimStart().startsWith('['))) {
    try {
      return JSON.parse(value) as unknown;
    } catch {
      throw badRequest(`form field ${name} must be JSON`);
    }
  }
  if (INTEGER_FIELDS.has(name)) {
    const n = Number(value);
    if (value.trim() === '' || !Number.isInteger(n)) throw badRequest(`form field ${name} must be an integer, got "${value}"`);
    return n;
  }
  return value;
}

/**
 * Reads the form, streaming its file part (field name `file`) to `key` in `blobs` within
 * `maxBytes` (413 past it, nothing stored). 400 when the request is not a form, has no file part,
 * more than one, or a malformed field.
 */
export async function receiveMultipartDocument(req: IncomingMessage, blobs: BlobStore, key: string, maxBytes: number): Promise<ReceivedDocument> {
  const type = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data\s*;/i.test(type)) throw badRequest('the body must be multipart/form-data with a "file" part (base64 JSON goes to POST /api/file)');
  let busboy: InstanceType<typeof Busboy>;
  try {
    busboy = new Busboy({ headers: { ...req.headers, 'content-type': type }, limits: { files: 1, fields: MAX_FIELDS, fieldSize: MAX_FIELD_BYTES } });
  } catch (err) {
    throw badRequest(`malformed multipart/form-data: ${(err as Error).message}`);
  }
  const fields: Record<string, unknown> = {};
  let partFileName: string | null = null;
  let stored: Promise<number> | null = null;
  let problem: Error | null = null;
  const done = new Promise<void>((resolve, reject) => {
    busboy.on('field', (name, value, _nameTruncated, valueTruncated) => {
      if (valueTruncated) problem ??= badRequest(`form field ${name} is over ${MAX_FIELD_BYTES} bytes`);
      else if (problem === null) {
        try {
          fields[name] = typed(name, value);
        } catch (err) {
          problem = err as Error;
        }
      }
    });
    busboy.on('file', (name, stream: BusboyFileStream, fileName) => {
      if (name !== 'file' || stored !== null) {
        problem ??= badRequest(stored ? 'the form has more than one file part' : `the file part must be named "file", got "${name}"`);
        stream.resume();
        return;
      }
      partFileName = fileName || null;
      // The store destroys the stream it is given when the limit is passed; a pass-through keeps
      // that from tearing down the request before the 413 is answered.
      const through = new PassThrough();
      stream.pipe(through);
      stored = blobs.write(key, through, maxBytes);
      // Keeps reading the form when the store stopped early (over the limit): busboy must see the end.
      stored.catch(() => stream.resume());
    });
    busboy.on('filesLimit', () => (problem ??= badRequest('the form has more than one file part')));
    busboy.on('fieldsLimit', () => (problem ??= badRequest(`the form has more than ${MAX_FIELDS} fields`)));
    busboy.on('finish', resolve);
    busboy.on('error', (err: Error) => reject(badRequest(`malformed multipart/form-data: ${err.message}`)));
    req.on('aborted', () => reject(badRequest('the upload was cut off before its end')));
  });
  req.pipe(busboy);
  try {
    await done;
  } catch (err) {
    if (stored) await (stored as Promise<number>).then(() => blobs.delete(key), () => undefined);
    throw err;
  }
  if (stored === null) throw problem ?? badRequest('the form has no "file" part');
  const size = await (stored as Promise<number>);
  if (problem !== null) {
    await blobs.delete(key);
    throw problem;
  }
  return { fields, partFileName, size };
}
