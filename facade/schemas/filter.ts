/**
 * ChunkFilter bodies into the filter AST. Shape only: a condition is a field condition with
 * exactly one predicate or an ids/tracking_ids condition; which predicate fits which field is
 * the core's check.
 */
import { z } from 'zod';
import type { Condition, Filter, Range, Value } from '../../core/domain/filter.js';
import { LIMITS } from '../../core/domain/limits.js';
import { parseTimestamp } from '../../core/domain/time.js';
import { boundedArray, boundedKey, boundedString, finite, geoPoint } from './common.js';

const value = z.union([boundedString(LIMITS.filterValueLength), finite, z.boolean()]);
const values = boundedArray(value, LIMITS.filterValues, 'values per condition').nullable().optional();
const ring = boundedArray(geoPoint, LIMITS.geoPolygonPoints, 'points per polygon ring');

const toValue = (v: string | number | boolean): Value =>
  typeof v === 'string' ? { text: v } : typeof v === 'number' ? { number: v } : { flag: v };

const range = z.object({
  gt: finite.nullable().optional(),
  gte: finite.nullable().optional(),
  lt: finite.nullable().optional(),
  lte: finite.nullable().optional(),
});

/** A date_range: timestamps (or epoch numbers, read as seconds like the reference stores them). */
const dateBound = z
  .unknown()
  .transform((v, ctx): number | null => {
    if (v === null || v === undefined) return null;
    if (typeof v === 'number' && Number.isFinite(v)) return v * 1000;
    const ms = typeof v === 'string' ? parseTimestamp(v) : undefined;
    if (ms === undefined) {
      ctx.addIssue({ code: 'custom', message: `Invalid timestamp format ${JSON.stringify(v)} (use ISO 8601, e.g. 2024-01-31 12:00:00)` });
      return z.NEVER;
    }
    return ms;
  })
  .optional();
const dateRange = z.object({ gt: dateBound, gte: dateBound, lt: dateBound, lte: dateBound });

const toRange = (r: { gt?: number | null; gte?: number | null; lt?: number | null; lte?: number | null }): Range => {
  const b = (x: number | null | undefined) => (x === null || x === undefined ? null : { value: x });
  return { gt: b(r.gt), gte: b(r.gte), lt: b(r.lt), lte: b(r.lte) };
};

const fieldCondition = z
  .object({
    field: boundedString(LIMITS.filterValueLength).min(1, 'field must not be empty'),
    match: values,
    match_any: values,
    match_all: values,
    range: range.nullable().optional(),
    date_range: dateRange.nullable().optional(),
    boolean: z.boolean().nullable().optional(),
    geo_radius: z.object({ center: geoPoint, radius: finite.refine((r) => r >= 0, 'radius must be >= 0') }).nullable().optional(),
    geo_bounding_box: z.object({ top_left: geoPoint, bottom_right: geoPoint }).nullable().optional(),
    geo_polygon: z
      .object({
        exterior: ring.min(3, 'exterior needs at least 3 points'),
        interior: boundedArray(ring.min(3), LIMITS.geoPolygonInteriors, 'interior rings').nullable().optional(),
      })
      .nullable()
      .optional(),
  })
  .superRefine((c, ctx) => {
    const set = [
      (c.match?.length ?? 0) > 0 && 'match',
      (c.match_any?.length ?? 0) > 0 && 'match_any',
      (c.match_all?.length ?? 0) > 0 && 'match_all',
      c.range && 'range',
      c.date_range && 'date_range',
      c.boolean !== undefined && c.boolean !== null && 'boolean',
      c.geo_radius && 'geo_radius',
      c.geo_bounding_box && 'geo_bounding_box',
      c.geo_polygon && 'geo_polygon',
    ].filter(Boolean) as string[];
    // match_any wins over match_all when both are given (as the spec says); anything else is ambiguous.
    const effective = set.includes('match_any') ? set.filter((p) => p !== 'match_all') : set;
    if (effective.length === 0) {
      ctx.addIssue({ code: 'custom', message: `no filter condition provided for field "${c.field}" (use match, match_any, match_all, range, date_range, boolean or a geo condition)` });
    } else if (effective.length > 1) {
      ctx.addIssue({ code: 'custom', message: `field "${c.field}" has more than one condition (${effective.join(', ')}); use one per condition` });
    }
  })
  .transform(
    (c): Condition => ({
      field: {
        field: c.field,
        match: c.match?.map(toValue),
        match_any: c.match_any?.map(toValue),
        match_all: (c.match_any?.length ?? 0) > 0 ? undefined : c.match_all?.map(toValue),
        range: c.range ? toRange(c.range) : null,
        date_range: c.date_range ? toRange(c.date_range) : null,
        boolean: c.boolean === undefined || c.boolean === null ? null : { flag: c.boolean },
        geo_radius: c.geo_radius ?? null,
        geo_bounding_box: c.geo_bounding_box ?? null,
        geo_polygon: c.geo_polygon
          ? { exterior: { points: c.geo_polygon.exterior }, interiors: (c.geo_polygon.interior ?? []).map((points) => ({ points })) }
          : null,
      },
    }),
  );

const hasIdCondition = z
  .object({
    ids: boundedArray(boundedKey(LIMITS.trackingIdLength), LIMITS.filterIds, 'ids per condition').nullable().optional(),
    tracking_ids: boundedArray(boundedKey(LIMITS.trackingIdLength), LIMITS.filterIds, 'tracking ids per condition').nullable().optional(),
  })
  .superRefine((c, ctx) => {
    const n = (c.ids?.length ?? 0) + (c.tracking_ids?.length ?? 0);
    if (n > LIMITS.filterIds) ctx.addIssue({ code: 'custom', message: `at most ${LIMITS.filterIds} ids and tracking ids per condition allowed, got ${n}` });
  })
  .transform((c): Condition => ({ has_id: { ids: c.ids ?? [], tracking_ids: c.tracking_ids ?? [] } }));

/** One condition: a field condition when `field` is present, else an ids/tracking_ids condition. */
const condition = z.unknown().transform((raw, ctx): Condition => {
  const schema = raw !== null && typeof raw === 'object' && 'field' in raw ? fieldCondition : hasIdCondition;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    ctx.addIssue({ code: 'custom', message: 'a condition must be an object with "field" or "ids"/"tracking_ids"' });
    return z.NEVER;
  }
  if (!('field' in raw) && !('ids' in raw) && !('tracking_ids' in raw)) {
    ctx.addIssue({ code: 'custom', message: 'a condition needs "field" (a field condition) or "ids"/"tracking_ids"' });
    return z.NEVER;
  }
  const r = schema.safeParse(raw);
  if (!r.success) {
    for (const issue of r.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
    return z.NEVER;
  }
  return r.data;
});

// The length is checked before any condition is parsed.
const clause = boundedArray(condition, LIMITS.filterConditions, 'conditions per clause').nullable().optional();

/** A ChunkFilter; null when it has no condition. */
export const chunkFilter = z
  .object({ must: clause, must_not: clause, should: clause })
  .nullable()
  .optional()
  .transform((f): Filter | null => {
    if (!f) return null;
    const out: Filter = { must: f.must ?? [], must_not: f.must_not ?? [], should: f.should ?? [] };
    return out.must!.length + out.must_not!.length + out.should!.length === 0 ? null : out;
  });
