/**
 * Shape validation at the edge: zod schemas turn JSON into canonical inputs, and failures become
 * one 400 whose message names each offending field, as `Json Deserialization Error: ...`.
 */
import { z } from 'zod';
import { QuarryError } from '../../core/domain/errors.js';
import { isUuid } from '../../core/domain/ids.js';
import { LIMITS, measureJson, utf8Length } from '../../core/domain/limits.js';
import { parseTimestamp } from '../../core/domain/time.js';

/** Formats zod issues as `field.path: message; ...`. */
export function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .slice(0, 5)
    .map((issue) => {
      const where = issue.path.length === 0 ? 'body' : issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : String(p))).join('.').replace(/\.\[/g, '[');
      return `${where}: ${issue.message}`;
    })
    .join('; ');
}

/** Validates a value against a schema or throws 400 naming every bad field. */
export function parse<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value === undefined ? {} : value);
  if (!result.success) {
    throw new QuarryError('invalid_json', `Json Deserialization Error: ${describeIssues(result.error.issues)}`);
  }
  return result.data;
}

/** A UUID string (lower-cased). */
export const uuid = z
  .string()
  .refine(isUuid, { message: 'must be a UUID' })
  .transform((s) => s.toLowerCase());

/** A finite number. */
export const finite = z.number().refine(Number.isFinite, { message: 'must be a finite number' });

/** A wire timestamp, converted to epoch milliseconds. */
export const timestamp = z.string().transform((s, ctx) => {
  const ms = parseTimestamp(s);
  if (ms === undefined) {
    ctx.addIssue({ code: 'custom', message: `Invalid timestamp format "${s}" (use ISO 8601, e.g. 2024-01-31 12:00:00)` });
    return z.NEVER;
  }
  return ms;
});

/** A geographic point with range checks. */
export const geoPoint = z.object({
  lat: finite.refine((v) => v >= -90 && v <= 90, { message: 'lat must be within -90..90' }),
  lon: finite.refine((v) => v >= -180 && v <= 180, { message: 'lon must be within -180..180' }),
});

/** An array of at most `max` items (`what` names them in the message); zod checks the length before the items. */
export function boundedArray<T extends z.ZodType>(item: T, max: number, what: string) {
  return z.array(item).max(max, { error: (iss) => `at most ${max} ${what} allowed, got ${Array.isArray(iss.input) ? iss.input.length : 'more'}` });
}

/** A string of at most `max` UTF-16 units. */
export function boundedString(max: number) {
  return z.string().max(max, { error: (iss) => `must be at most ${max} characters long, got ${typeof iss.input === 'string' ? iss.input.length : 'more'}` });
}

/** An identifier the store indexes (see LIMITS.keyBytes): at most `max` characters and LIMITS.keyBytes UTF-8 bytes. */
export function boundedKey(max: number) {
  return boundedString(max).check((ctx) => {
    if (utf8Length(ctx.value, LIMITS.keyBytes) > LIMITS.keyBytes) {
      ctx.issues.push({ code: 'custom', input: ctx.value, message: `must be at most ${LIMITS.keyBytes} bytes (UTF-8), got ${utf8Length(ctx.value)}` });
    }
  });
}

/** A string of at most `maxBytes` UTF-8 bytes (chunk texts, whose cap is configured in bytes). */
export function boundedText(maxBytes: number) {
  return z.string().check((ctx) => {
    if (utf8Length(ctx.value, maxBytes) > maxBytes) {
      ctx.issues.push({ code: 'custom', input: ctx.value, message: `must be at most ${maxBytes} bytes (UTF-8), got ${utf8Length(ctx.value)}` });
    }
  });
}

/** A tag set: an array of strings, or (V1 style) one comma-separated string; at most LIMITS.tagsPerChunk tags. */
export const tagSet = z.preprocess(
  (v) => (typeof v === 'string' ? v.split(',').map((t) => t.trim()).filter((t) => t.length > 0) : v),
  boundedArray(boundedString(LIMITS.tagLength), LIMITS.tagsPerChunk, 'tags'),
);

/** Any JSON value. */
export const json = z.unknown();

/** Any JSON value of at most LIMITS.metadataBytes as JSON and LIMITS.metadataDepth levels of nesting. */
export const boundedJson = z.unknown().check((ctx) => {
  const m = measureJson(ctx.value, LIMITS.metadataBytes, LIMITS.metadataDepth);
  if (m.depth > LIMITS.metadataDepth) {
    ctx.issues.push({ code: 'custom', input: ctx.value, message: `must nest at most ${LIMITS.metadataDepth} levels deep` });
  } else if (m.over) {
    ctx.issues.push({ code: 'custom', input: ctx.value, message: `must be at most ${LIMITS.metadataBytes} bytes as JSON` });
  }
});

/** A JSON object. */
export const jsonObject = z.record(z.string(), z.unknown());

/** A tracking id (at most LIMITS.trackingIdLength long); the empty string means none, as in the reference implementation. */
export const trackingId = boundedKey(LIMITS.trackingIdLength).transform((s) => (s === '' ? null : s));

/** A tracking id in a list or reference (the empty string kept as given). */
export const trackingIdRef = boundedKey(LIMITS.trackingIdLength);

/** A 1-based page number (0 is read as 1). */
export const page = z
  .number()
  .int()
  .min(0)
  .transform((n) => Math.max(1, n));

/** Checks that a path segment is a UUID, or throws 400 naming the parameter. */
export function pathUuid(value: string | undefined, name: string): string {
  if (value === undefined || !isUuid(value)) throw new QuarryError('bad_request', `Path parameter ${name} must be a UUID, got "${value ?? ''}"`);
  return value.toLowerCase();
}

/** A UUID query parameter, lowercased; 400 naming it otherwise. */
export function queryUuid(value: unknown, name: string): string {
  if (typeof value !== 'string' || !isUuid(value)) throw new QuarryError('bad_request', `query parameter ${name} must be a UUID, got "${String(value)}"`);
  return value.toLowerCase();
}

/** An integer query parameter from `min` (default 0) to `max`, or `fallback` when absent; 400 naming it otherwise. */
export function queryInt(value: unknown, name: string, fallback: number, max: number, min = 0): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new QuarryError('bad_request', `query parameter ${name} must be an integer from ${min} to ${max}`);
  return n;
}

/** Parses a 1-based page path segment. */
export function pathPage(value: string | undefined): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 1_000_000_000) {
    throw new QuarryError('bad_request', `Path parameter page must be a non-negative integer, got "${value ?? ''}"`);
  }
  return Math.max(1, n);
}

/** Requires the body to be a JSON object or array before field validation. */
export function requireBody(body: unknown, what: string): unknown {
  if (body === undefined) throw new QuarryError('invalid_json', `Json Deserialization Error: the body must be ${what}`);
  return body;
}
