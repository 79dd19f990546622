/**
 * A CSV/JSONL row turned into one chunk input of the write path of `POST /api/chunk`, as the
 * reference's file worker builds it: `chunk_html` is the row as JSON and `metadata` the row over
 * the file's metadata (top-level null values dropped from both); the request's column mappings
 * fill chunk fields. Array targets (tag_set, image_urls, group_tracking_ids) accumulate over all
 * their mappings, `boost_phrase` values are joined with spaces, and every other target takes the
 * last mapping whose column the row has. A `time_stamp` column holds an ISO 8601 timestamp, or
 * Unix time as a number (or a string of one): seconds, or milliseconds from 1e11 on (see
 * SECONDS_BELOW). A column the row lacks, or holds null, is not applied.
 *
 * Every check the chunk body schema makes (facade/schemas/chunk.ts, core/domain/limits.ts) is
 * made here, so a row either makes the input that schema would make of the same chunk or a row
 * error that names the column: one bad row never fails its batch. The input is built once, in the
 * write path's shape (epoch ms, the metadata's JSON text beside it): no wire body parsed again by
 * zod, no time stamp formatted to be parsed back, no metadata serialised a second time by the
 * store. This runs once per row, a million times for a large file.
 */
import type { ChunkInput, FulltextBoost, GeoPoint, SemanticBoost } from '../domain/chunk.js';
import type { RowImportOptions } from '../domain/files.js';
import { LIMITS, measureJson, utf8Length } from '../domain/limits.js';
import { parseTimestamp } from '../domain/time.js';
import { metadataJsonOf } from './row-metadata-json.js';

/** A row's chunk input, ready for the store's write, or why the row cannot be one. */
export type RowChunk = { input: ChunkInput } | { error: string };

/** Longest excerpt of an offending value quoted in a row error. */
const MAX_QUOTED = 100;
/**
 * A number below this magnitude given as a time stamp is Unix seconds, at or above it Unix
 * milliseconds (1e11 s is the year 5138; 1e11 ms is 1973-03-03): the reference's date parser reads
 * 10-digit numbers as seconds and 13-digit ones as milliseconds.
 */
const SECONDS_BELOW = 1e11;
/** The time stamps the wire format writes plainly (years 0000-9999): outside them the schema refuses the text. */
const FIRST_MS = new Date('0000-01-01T00:00:00Z').getTime();
const AFTER_MS = Date.UTC(10_000, 0, 1);

/** Sets an own property, `__proto__` included (plain assignment of that key would set the prototype). */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** The row without its null (or undefined) values; the row itself when it has none. */
function withoutNulls(value: Record<string, unknown>): Record<string, unknown> {
  let nulls = false;
  for (const key in value) {
    if (value[key] == null) {
      nulls = true;
      break;
    }
  }
  if (!nulls) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const v = value[key];
    if (v != null) setOwn(out, key, v);
  }
  return out;
}

/**
 * `{ ...fileMetadata, ...row }`, built by assignment: V8 runs the second spread of an object
 * literal through its runtime, ~6 us for a product row against ~0.27 us here (a micro-benchmark
 * on this machine), and an import merges every row.
 */
function merged(fileMetadata: object, row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const file = fileMetadata as Record<string, unknown>;
  for (const key of Object.keys(file)) setOwn(out, key, file[key]);
  for (const key of Object.keys(row)) setOwn(out, key, row[key]);
  return out;
}

/**
 * The nesting depth measureJson gives `value` (an object or array is one level more than its
 * deepest member; a scalar 0), or `max + 1` as soon as it is past `max`. Recursion stops there.
 */
function depthOf(value: unknown, max: number): number {
  if (typeof value !== 'object' || value === null) return 0;
  if (max <= 0) return 1;
  let deepest = 0;
  const members = Array.isArray(value) ? (value as unknown[]) : Object.values(value);
  for (let i = 0; i < members.length; i++) {
    const member = members[i];
    if (typeof member !== 'object' || member === null) continue;
    const d = depthOf(member, max - 1);
    if (d > deepest) deepest = d;
    if (deepest >= max) break;
  }
  return 1 + deepest;
}

/** The file metadata last measured, and its measure: one file's rows share one metadata object. */
let measuredFile: { metadata: object; bytes: number; depth: number } | null = null;

/**
 * Why the chunk's metadata breaks the schema's caps (as measureJson, which the schema runs,
 * counts them), or null. A row whose JSON is small and whose nesting is within the cap is
 * accepted without measuring its strings: measureJson counts at most 3 bytes per byte of the
 * JSON text (6 per escaped character, which JSON writes in at least 2), the merge with the file's
 * metadata adds at most that metadata's measure, and the merged object is as deep as the deeper
 * of the two (the merge is shallow). Measuring every string of a JSONL row was ~2 µs of it.
 */
function metadataProblem(metadata: Record<string, unknown>, rowJsonBytes: number, fileMetadata: object | null, row: Record<string, unknown>): string | null {
  let fileBytes = 0;
  let fileDepth = 0;
  if (fileMetadata !== null) {
    if (measuredFile?.metadata !== fileMetadata) {
      const m = measureJson(fileMetadata, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
      measuredFile = { metadata: fileMetadata, bytes: m.bytes, depth: m.depth };
    }
    fileBytes = measuredFile.bytes;
    fileDepth = measuredFile.depth;
  }
  if (fileBytes + 3 * rowJsonBytes <= LIMITS.metadataBytes && Math.max(fileDepth, depthOf(row, LIMITS.metadataDepth)) <= LIMITS.metadataDepth) return null;
  const m = measureJson(metadata, LIMITS.metadataBytes, LIMITS.metadataDepth);
  if (!m.over) return null;
  return m.depth > LIMITS.metadataDepth
    ? `the row's metadata nests more than ${LIMITS.metadataDepth} levels deep`
    : `the row's metadata is over ${LIMITS.metadataBytes} bytes as JSON`;
}

/** A value quoted for a row error, cut to MAX_QUOTED characters. */
function quoted(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}…` : text;
}

/** A number, or a string that is one entirely (decimal only: not `0x10`, `Infinity` or blank); else undefined. */
function toNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  // Number() also reads '' as 0 and radix prefixes (0x, 0b, 0o) as integers: neither is a decimal number.
  if (text === '' || (text.length > 1 && text[0] === '0' && /[xXbBoO]/.test(text[1]!))) return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
}

/** A scalar as text (strings as they are, numbers and booleans printed); undefined for objects and arrays. */
function scalarText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/**
 * A time stamp as epoch ms: a wire timestamp string (ISO 8601, core/domain/time.ts), or a number
 * (or a string holding only one) read as Unix time: seconds below SECONDS_BELOW, else milliseconds.
 */
function toEpochMs(value: unknown): number | undefined {
  if (typeof value === 'string') {
    const parsed = parseTimestamp(value);
    if (parsed !== undefined) return parsed;
  }
  const n = toNumber(value);
  if (n === undefined) return undefined;
  const ms = Math.abs(n) < SECONDS_BELOW ? Math.round(n * 1000) : Math.round(n);
  // -0 (a tiny negative time) is the instant 0, as the wire's text of it reads back.
  return ms === 0 ? 0 : ms;
}

/** The elements an array target takes from one column: an array's elements, or a scalar itself. */
function listItems(value: unknown, into: string[]): boolean {
  if (Array.isArray(value)) {
    for (const item of value) if (item != null) into.push(typeof item === 'string' ? item : JSON.stringify(item));
    return true;
  }
  const text = scalarText(value);
  if (text === undefined) return false;
  into.push(text);
  return true;
}

/** Why a list is over its caps, or null. */
function listProblem(items: readonly string[], max: number, maxLength: number, what: string): string | null {
  if (items.length > max) return `the row has ${items.length} ${what}, at most ${max} allowed`;
  for (const item of items) if (item.length > maxLength) return `a value of ${what} is longer than ${maxLength} characters: ${quoted(item)}`;
  return null;
}

/** A column's value that is not what its target takes. */
const notA = (field: string, target: string, what: string, value: unknown): { error: string } => ({
  error: `column "${field}" (${target}) is not ${what}: ${quoted(value)}`,
});

/** The file a row belongs to: what each of its rows' chunks takes from it. */
export interface RowFile {
  readonly options: RowImportOptions;
  /** The file's metadata, under each row's (only when it is a JSON object). */
  readonly metadata: unknown;
  /**
   * The file's group, which every chunk joins by id, not by tracking id: a batch written after the
   * group was deleted (DELETE /api/file with delete_chunks) fails whole instead of making it again.
   */
  readonly groupId: string;
  /**
   * The chunk text cap in force (QUARRY_MAX_CHUNK_TEXT_BYTES), in UTF-8 bytes.
   * @defaultValue LIMITS.chunkTextBytes
   */
  readonly maxTextBytes?: number;
}

/** Why an identifier the store indexes is over its caps (the schema's boundedKey), or null. */
function keyProblem(text: string, what: string): string | null {
  if (text.length > LIMITS.trackingIdLength) return `${what} is longer than ${LIMITS.trackingIdLength} characters`;
  if (utf8Length(text, LIMITS.keyBytes) > LIMITS.keyBytes) return `${what} is over ${LIMITS.keyBytes} bytes as UTF-8`;
  return null;
}

/** A row turned into the chunk input the write path stores (`rowIndex` is 0-based), or why it cannot be one. */
export function rowToChunk(value: Record<string, unknown>, rowIndex: number, file: RowFile): RowChunk {
  const { options } = file;
  const maxTextBytes = file.maxTextBytes ?? LIMITS.chunkTextBytes;
  const row = withoutNulls(value);
  const tags: string[] = options.tagSet.slice();
  const groups: string[] = [];
  let images: string[] | null = null;
  let phrase = '';
  // The single-valued targets: the column of the last mapping the row has.
  let linkField: string | undefined;
  let trackingField: string | undefined;
  let timeField: string | undefined;
  let numField: string | undefined;
  let weightField: string | undefined;
  let latField: string | undefined;
  let lonField: string | undefined;
  for (const { csvJsonlField: field, chunkReqPayloadField: target } of options.mappings) {
    if (!Object.hasOwn(row, field)) continue;
    const v = row[field];
    switch (target) {
      case 'tag_set': {
        if (Array.isArray(v)) listItems(v, tags);
        else {
          const text = scalarText(v);
          if (text === undefined) return notA(field, target, 'a string or an array', v);
          for (const tag of text.split(',')) {
            const t = tag.trim();
            if (t !== '') tags.push(t);
          }
        }
        break;
      }
      case 'image_urls':
        if (!listItems(v, (images ??= []))) return notA(field, target, 'a string or an array', v);
        break;
      case 'group_tracking_ids':
        if (!listItems(v, groups)) return notA(field, target, 'a string or an array', v);
        break;
      case 'boost_phrase': {
        const text = scalarText(v);
        if (text === undefined) return notA(field, target, 'a string', v);
        if (text !== '') phrase = phrase === '' ? text : `${phrase} ${text}`;
        break;
      }
      case 'link':
        linkField = field;
        break;
      case 'tracking_id':
        trackingField = field;
        break;
      case 'time_stamp':
        timeField = field;
        break;
      case 'num_value':
        numField = field;
        break;
      case 'weight':
        weightField = field;
        break;
      case 'lat':
        latField = field;
        break;
      case 'lon':
        lonField = field;
        break;
    }
  }

  const chunkHtml = JSON.stringify(row);
  const htmlBytes = utf8Length(chunkHtml, maxTextBytes);
  if (htmlBytes > maxTextBytes) {
    return { error: `the row is ${utf8Length(chunkHtml)} bytes as JSON, over the chunk text limit of ${maxTextBytes} bytes` };
  }
  const fileMetadata = file.metadata;
  const fileObject = fileMetadata !== null && typeof fileMetadata === 'object' && !Array.isArray(fileMetadata) ? fileMetadata : null;
  const metadata = fileObject === null ? row : merged(fileObject, row);
  const problem = metadataProblem(metadata, htmlBytes, fileObject, row);
  if (problem !== null) return { error: problem };

  let trackingId = `${options.groupTrackingId}|${rowIndex}`;
  if (trackingField !== undefined) {
    const text = scalarText(row[trackingField]);
    if (text === undefined) return notA(trackingField, 'tracking_id', 'a string', row[trackingField]);
    const tooLong = keyProblem(text, `column "${trackingField}" (tracking_id)`);
    if (tooLong !== null) return { error: tooLong };
    if (text !== '') trackingId = text;
  }

  // The file's own group goes by id (RowFile.groupId): the mapped ones, without it or repeats.
  const groupTrackingIds = groups.length === 0 ? groups : [...new Set(groups.filter((g) => g !== '' && g !== options.groupTrackingId))];
  const groupCount = groupTrackingIds.length + 1;
  if (groupCount > LIMITS.groupsPerChunk) return { error: `the row has ${groupCount} group_tracking_ids, at most ${LIMITS.groupsPerChunk} allowed` };
  for (const g of groupTrackingIds) {
    const tooLong = keyProblem(g, 'a value of group_tracking_ids');
    if (tooLong !== null) return { error: `${tooLong}: ${quoted(g)}` };
  }

  const tagProblem = listProblem(tags, LIMITS.tagsPerChunk, LIMITS.tagLength, 'tags');
  if (tagProblem !== null) return { error: tagProblem };
  if (images !== null) {
    const imageProblem = listProblem(images, LIMITS.imageUrlsPerChunk, LIMITS.urlLength, 'image_urls');
    if (imageProblem !== null) return { error: imageProblem };
  }

  let link = options.link;
  if (linkField !== undefined) {
    link = scalarText(row[linkField]) ?? null;
    if (link === null) return notA(linkField, 'link', 'a string', row[linkField]);
  }
  if (link !== null && link.length > LIMITS.urlLength) return { error: `the link is longer than ${LIMITS.urlLength} characters` };

  let timeStamp = options.timeStamp;
  if (timeField !== undefined) {
    timeStamp = toEpochMs(row[timeField]) ?? null;
    if (timeStamp === null) return notA(timeField, 'time_stamp', 'a timestamp', row[timeField]);
  }
  // The years the wire format writes: the chunk's time stamp must read back as it was stored.
  if (timeStamp !== null && !(timeStamp >= FIRST_MS && timeStamp < AFTER_MS)) {
    return { error: `the time stamp ${timeField === undefined ? '' : `of column "${timeField}" `}is outside the years 0000-9999` };
  }

  let numValue: number | null = null;
  if (numField !== undefined) {
    const n = toNumber(row[numField]);
    if (n === undefined) return notA(numField, 'num_value', 'a number', row[numField]);
    numValue = n;
  }
  let weight = 0;
  if (weightField !== undefined) {
    const n = toNumber(row[weightField]);
    if (n === undefined) return notA(weightField, 'weight', 'a number', row[weightField]);
    weight = n;
  }
  let location: GeoPoint | null = null;
  if (latField !== undefined || lonField !== undefined) {
    if (latField === undefined) return { error: `the row has a lon (column "${lonField}") but no lat` };
    if (lonField === undefined) return { error: `the row has a lat (column "${latField}") but no lon` };
    const lat = toNumber(row[latField]);
    if (lat === undefined) return notA(latField, 'lat', 'a number', row[latField]);
    const lon = toNumber(row[lonField]);
    if (lon === undefined) return notA(lonField, 'lon', 'a number', row[lonField]);
    if (lat < -90 || lat > 90) return { error: `column "${latField}" (lat) is outside -90..90: ${lat}` };
    if (lon < -180 || lon > 180) return { error: `column "${lonField}" (lon) is outside -180..180: ${lon}` };
    location = { lat, lon };
  }

  let fulltextBoost: FulltextBoost | null = null;
  let semanticBoost: SemanticBoost | null = null;
  if (phrase !== '') {
    if (phrase.length > LIMITS.queryLength) return { error: `the boost phrase is longer than ${LIMITS.queryLength} characters` };
    if (options.fulltextBoostFactor !== null) fulltextBoost = { phrase, boost_factor: options.fulltextBoostFactor };
    if (options.semanticBoostFactor !== null) semanticBoost = { phrase, distance_factor: options.semanticBoostFactor };
  }
  // Every field, in one shape for every row: the defaults are what the schema's input gives an absent field.
  const input: ChunkInput = {
    trackingId,
    chunkHtml,
    link,
    metadata,
    metadataJson: metadataJsonOf(metadata, row, chunkHtml, fileObject),
    tagSet: tags,
    timeStamp,
    weight,
    imageUrls: images !== null && images.length > 0 ? images : null,
    location,
    numValue,
    semanticContent: null,
    fulltextContent: null,
    convertHtmlToText: true,
    fulltextBoost,
    semanticBoost,
    groupIds: [file.groupId],
    groupTrackingIds,
  };
  return { input };
}
