/**
 * How large a request body each route may send. A body is buffered whole before it is parsed, so
 * the limit is what one request can make the HTTP process hold: it is sized to what the route can
 * use, never one process-wide 128 MiB.
 */
import type { Config } from '../core/config.js';
import { LIMITS } from '../core/domain/limits.js';
import { MAX_SPLIT_HTML_BYTES } from './schemas/chunk-split.js';

/** Room for a bulk body's brackets, keys and whatever else surrounds the items. */
const SLACK_BYTES = 64 * 1024;
/** A group carries a name, a description, tags and metadata; far less than a chunk. */
const GROUP_BODY_BYTES = 16 * 1024;
/**
 * A page sent to be split (POST /api/chunk/split): its `chunk_html` may be just under 256 KiB of
 * UTF-8, and JSON escapes can make that several times longer on the wire.
 */
const SPLIT_BODY_BYTES = 4 * MAX_SPLIT_HTML_BYTES;
/** Organizations, keys, users and dataset settings: names, roles, scopes, configuration. */
const TENANCY_BODY_BYTES = 64 * 1024;

/**
 * A RAG body carries a conversation, or a topic message's `rag_context` of up to a chunk's text
 * (1 MiB of UTF-8), which JSON escapes can make several times longer on the wire.
 */
const RAG_BODY_BYTES = 4 * LIMITS.chunkTextBytes;
/** Route keys of the RAG routes whose bodies carry conversations or context. */
const RAG_ROUTES = ['POST /api/chunk/generate', 'POST /api/message', 'PUT /api/message', 'PATCH /api/message', 'DELETE /api/message'];

/** Route keys (`METHOD /pattern` as registered) of the tenancy routes. */
const TENANCY_ROUTES = [
  'POST /api/organization',
  'PUT /api/organization',
  'POST /api/organization/api_key',
  'PUT /api/user',
  'POST /api/auth/create_api_only_user',
  'POST /api/dataset',
  'PUT /api/dataset',
];

/** The streamed document upload (multipart/form-data): its route reads the body itself, into the blob store. */
export const MULTIPART_DOCUMENT_ROUTE = 'POST /api/file/upload';

/** Routes whose body is not JSON and is read by the route itself, streamed. */
export const STREAMED_BODY_ROUTES: ReadonlySet<string> = new Set([MULTIPART_DOCUMENT_ROUTE]);

/** Body limit of a route, in bytes, given by its registered `METHOD /pattern`. */
export type BodyLimitOf = (route: string) => number;

/** Builds the per-route limits from the configuration; every limit is capped by `bodyLimitBytes`. */
export function bodyLimits(config: Config): BodyLimitOf {
  const cap = (bytes: number) => Math.min(bytes, config.bodyLimitBytes);
  const limits = new Map<string, number>([
    ['POST /api/chunk', cap(config.batchChunkLimit * config.chunkBodyBytes + SLACK_BYTES)],
    ['PUT /api/chunk', cap(config.chunkBodyBytes + SLACK_BYTES)],
    ['PUT /api/chunk/tracking_id/update', cap(config.chunkBodyBytes + SLACK_BYTES)],
    ['POST /api/chunk_group', cap(config.batchGroupLimit * GROUP_BODY_BYTES + SLACK_BYTES)],
    ['POST /api/chunk/split', cap(SPLIT_BODY_BYTES + SLACK_BYTES)],
    ...TENANCY_ROUTES.map((route): [string, number] => [route, cap(TENANCY_BODY_BYTES)]),
    ...RAG_ROUTES.map((route): [string, number] => [route, cap(RAG_BODY_BYTES + SLACK_BYTES)]),
    // A document as base64 is 4/3 of its bytes.
    ['POST /api/file', cap(Math.ceil((config.documentMaxBytes * 4) / 3) + SLACK_BYTES)],
  ]);
  const fallback = cap(config.defaultBodyLimitBytes);
  return (route) => limits.get(route) ?? fallback;
}
