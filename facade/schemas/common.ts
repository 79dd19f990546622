/**
 * Shape validation at the edge: zod schemas turn JSON into canonical inputs, and failures become
 * one 400 whose message names each offending field, as `Json Deserialization Error: ...`.
 */
import { z } from 'zod';
import { QuarryError } from '../../core/domain/errors.js';
import { isUuid } from '../../core/domain/ids.js';
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

/** A tag set: an array of strings, or (V1 style) one comma-separated string. */
export const tagSet = z.union([
  z.array(z.string()),
  z.string().transform((s) => s.split(',').map((t) => t.trim()).filter((t) => t.length > 0)),
]);

/** Any JSON value. */
export const json = z.unknown();

/** A JSON object. */
export const jsonObject = z.record(z.string(), z.unknown());

/** A tracking id; the empty string means none, as in the reference implementation. */
export const trackingId = z
  .string()
  .max(1024)
  .transform((s) => (s === '' ? null : s));

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
