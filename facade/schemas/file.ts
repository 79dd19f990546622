/** File request bodies: a CSV/JSONL upload URL (`POST /api/file/csv_or_jsonl`) and a document (`POST /api/file`). */
import { z } from 'zod';
import { QuarryError, badRequest } from '../../core/domain/errors.js';
import { MAPPING_TARGETS, type ColumnMapping, type DocumentSplitOptions, type FileKind } from '../../core/domain/files.js';
import { LIMITS } from '../../core/domain/limits.js';
import { boundedArray, boundedJson, boundedString, finite, parse, requireBody, tagSet, timestamp, trackingId } from './common.js';

/** Longest file name (most file systems allow 255 bytes; a path-like name is kept whole). */
const FILE_NAME_MAX_LENGTH = 1024;
/** Longest group description a file carries. */
const DESCRIPTION_MAX_LENGTH = 64 * 1024;
/** Most mappings of one file: a column can be mapped to several targets, and there are 11 targets. */
const MAX_MAPPINGS = 256;

const fileName = boundedString(FILE_NAME_MAX_LENGTH).refine((s) => s.trim().length > 0, { message: 'must not be empty' });
const mapping = z.object({
  csv_jsonl_field: boundedString(LIMITS.tagLength).min(1),
  chunk_req_payload_field: z.enum(MAPPING_TARGETS),
});

/** Fields both file routes take. */
const common = {
  file_name: fileName,
  description: boundedString(DESCRIPTION_MAX_LENGTH).nullable().optional(),
  link: boundedString(LIMITS.urlLength).nullable().optional(),
  metadata: boundedJson.optional(),
  tag_set: tagSet.nullable().optional(),
  time_stamp: timestamp.nullable().optional(),
  group_tracking_id: trackingId.nullable().optional(),
};

const csvOrJsonl = z.object({
  ...common,
  upsert_by_tracking_id: z.boolean().nullable().optional(),
  mappings: boundedArray(mapping, MAX_MAPPINGS, 'mappings').nullable().optional(),
  fulltext_boost_factor: finite.nullable().optional(),
  semantic_boost_factor: finite.nullable().optional(),
});

/** The fields of a file record a request sets. */
export interface FileFields {
  readonly fileName: string;
  readonly description: string;
  readonly link: string | null;
  readonly metadata: unknown;
  readonly tagSet: readonly string[];
  readonly timeStamp: number | null;
  /** Null: the file's id is used, so every row still has a tracking id to resume by. */
  readonly groupTrackingId: string | null;
}

/** A validated `POST /api/file/csv_or_jsonl`. */
export interface CsvOrJsonlRequest extends FileFields {
  readonly kind: Extract<FileKind, 'csv' | 'jsonl'>;
  readonly upsertByTrackingId: boolean;
  readonly mappings: readonly ColumnMapping[];
  readonly fulltextBoostFactor: number | null;
  readonly semanticBoostFactor: number | null;
}

/** CSV or JSONL by the name's extension (case-insensitive); null for anything else. */
export function tableKindOf(name: string): 'csv' | 'jsonl' | null {
  const ext = /\.([^./\\]+)$/.exec(name.trim())?.[1]?.toLowerCase();
  if (ext === 'csv') return 'csv';
  if (ext === 'jsonl' || ext === 'ndjson') return 'jsonl';
  return null;
}

function fields(b: z.output<z.ZodObject<typeof common>>): FileFields {
  return {
    fileName: b.file_name.trim(),
    description: b.description ?? '',
    link: b.link ?? null,
    metadata: b.metadata ?? null,
    tagSet: b.tag_set ?? [],
    timeStamp: b.time_stamp ?? null,
    groupTrackingId: b.group_tracking_id ?? null,
  };
}

/** Validates `POST /api/file/csv_or_jsonl`; the extension of `file_name` chooses CSV or JSONL. */
export function parseCsvOrJsonl(body: unknown): CsvOrJsonlRequest {
  requireBody(body, 'a JSON object with "file_name" (ending in .csv or .jsonl)');
  const b = parse(csvOrJsonl, body);
  const kind = tableKindOf(b.file_name);
  if (kind === null) {
    throw badRequest(`file_name "${b.file_name}" must end in .csv, .jsonl or .ndjson: the extension selects CSV or JSONL processing`);
  }
  if (b.metadata !== undefined && b.metadata !== null && (typeof b.metadata !== 'object' || Array.isArray(b.metadata))) {
    throw badRequest('metadata must be a JSON object: it is passed to every chunk of the file');
  }
  return {
    ...fields(b),
    kind,
    upsertByTrackingId: b.upsert_by_tracking_id ?? true,
    mappings: (b.mappings ?? []).map((m) => ({ csvJsonlField: m.csv_jsonl_field, chunkReqPayloadField: m.chunk_req_payload_field })),
    fulltextBoostFactor: b.fulltext_boost_factor ?? null,
    semanticBoostFactor: b.semantic_boost_factor ?? null,
  };
}

const splitFields = {
  target_chunk_chars: z.number().int().min(50).max(1_000_000).nullable().optional(),
  chunk_overlap_chars: z.number().int().min(0).max(500_000).nullable().optional(),
};

/** Fields of a document upload besides its bytes (the base64 body's, or a multipart form's). */
const documentFields = z.object({ ...common, ...splitFields });

/** A validated document upload, its bytes not yet read. */
export interface DocumentRequest extends FileFields {
  readonly split: DocumentSplitOptions;
}

/** Base64 (standard or URL-safe alphabet, padding optional), checked before decoding: Node's decoder skips bad characters silently. */
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** Validates the fields of a document upload; `defaults` are the configured split sizes. */
export function parseDocumentFields(body: unknown, defaults: DocumentSplitOptions): DocumentRequest {
  const b = parse(documentFields, body);
  const targetChars = b.target_chunk_chars ?? defaults.targetChars;
  const overlapChars = b.chunk_overlap_chars ?? Math.min(defaults.overlapChars, Math.floor(targetChars / 2));
  if (overlapChars >= targetChars) throw badRequest(`chunk_overlap_chars (${overlapChars}) must be less than target_chunk_chars (${targetChars})`);
  return { ...fields(b), split: { targetChars, overlapChars } };
}

/** Validates `POST /api/file`: the fields and the base64 bytes, decoded (at most `maxBytes`). */
export function parseBase64Document(body: unknown, defaults: DocumentSplitOptions, maxBytes: number): DocumentRequest & { readonly bytes: Buffer } {
  requireBody(body, 'a JSON object with "base64_file" and "file_name"');
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('the body must be a JSON object with "base64_file" and "file_name"');
  const raw = (body as Record<string, unknown>).base64_file;
  if (typeof raw !== 'string') throw badRequest('base64_file is required: the document\'s bytes, base64 encoded');
  const { base64_file: _bytes, ...rest } = body as Record<string, unknown>;
  const fieldsOf = parseDocumentFields(rest, defaults);
  const compact = raw.replace(/\s+/g, '');
  if (!BASE64.test(compact)) throw badRequest('base64_file is not valid base64');
  if (Math.floor((compact.length * 3) / 4) > maxBytes + 2) {
    throw new QuarryError('payload_too_large', `the document is over the limit of ${maxBytes} bytes (QUARRY_DOCUMENT_MAX_BYTES)`);
  }
  const bytes = Buffer.from(compact, compact.includes('-') || compact.includes('_') ? 'base64url' : 'base64');
  if (bytes.length > maxBytes) throw new QuarryError('payload_too_large', `the document is over the limit of ${maxBytes} bytes (QUARRY_DOCUMENT_MAX_BYTES)`);
  if (bytes.length === 0) throw badRequest('base64_file is empty');
  return { ...fieldsOf, bytes };
}
