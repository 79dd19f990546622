/** Bodies of organization, user, API-key, dataset and auth routes. */
import { z } from 'zod';
import { DATASET_CONFIG_DEFAULTS } from '../../core/domain/dataset-config.js';
import { parseDistanceMetric } from '../../core/domain/distance-metric.js';
import { badRequest } from '../../core/domain/errors.js';
import { LIMITS, measureJson, utf8Length } from '../../core/domain/limits.js';
import { parseTimestamp } from '../../core/domain/time.js';
import { publicDatasetProblem } from '../public-dataset.js';
import { MAX_SCOPES, parseScope } from '../scopes.js';
import { finite, jsonObject, parse, requireBody, trackingId, uuid } from './common.js';

const role = z.union([z.literal(0), z.literal(1), z.literal(2)], { message: 'role must be 0 (read), 1 (admin) or 2 (owner)' });
/** Scopes of a key or membership: bounded in number and length, each a well-formed route. */
const scopes = z.array(z.string()).superRefine((list, ctx) => {
  if (list.length > MAX_SCOPES) {
    ctx.addIssue({ code: 'custom', message: `at most ${MAX_SCOPES} scopes are allowed; got ${list.length}` });
    return;
  }
  for (let i = 0; i < list.length; i++) {
    const parsed = parseScope(list[i]!);
    if (typeof parsed === 'string') {
      ctx.addIssue({ code: 'custom', path: [i], message: parsed });
      return;
    }
  }
});

/** Longest string value allowed under a server_configuration key (see LIMITS). */
function configStringCap(key: string): number {
  if (key.endsWith('_PROMPT')) return LIMITS.configPromptLength;
  if (key.endsWith('_BASE_URL')) return LIMITS.urlLength;
  return LIMITS.configStringLength;
}

/** Why a server_configuration is too large as a whole (as stored), or undefined. */
function configSizeProblem(config: Record<string, unknown>): string | undefined {
  const { bytes, over } = measureJson(config, LIMITS.configBytes, Number.MAX_SAFE_INTEGER);
  return over ? `must be at most ${LIMITS.configBytes} bytes as JSON, got at least ${bytes}` : undefined;
}

/**
 * Refuses (400) a dataset's server_configuration that would be too large once an update has been
 * merged into the stored one: each body is bounded, but updates add keys.
 */
export function checkMergedConfiguration(merged: Record<string, unknown>): void {
  const problem = configSizeProblem(merged);
  if (problem) throw badRequest(`server_configuration: ${problem}, merged with the stored configuration`);
}

/** Validates the known keys of a server_configuration; unknown keys pass through, every string bounded. */
const serverConfiguration = jsonObject.superRefine((config, ctx) => {
  // Every string is bounded, known key or not: each is stored, returned and read by every search and job.
  for (const [key, value] of Object.entries(config)) {
    if (key.length > LIMITS.configStringLength) {
      ctx.addIssue({ code: 'custom', message: `keys must be at most ${LIMITS.configStringLength} characters long, got one of ${key.length}` });
      return;
    }
    const cap = configStringCap(key);
    if (typeof value === 'string' && value.length > cap) {
      ctx.addIssue({ code: 'custom', path: [key], message: `must be at most ${cap} characters long, got ${value.length}` });
    } else if (typeof value === 'string' && cap === LIMITS.configStringLength && utf8Length(value, LIMITS.keyBytes) > LIMITS.keyBytes) {
      // Model names are stored beside every chunk's vector and indexed there (see LIMITS.keyBytes).
      ctx.addIssue({ code: 'custom', path: [key], message: `must be at most ${LIMITS.keyBytes} bytes (UTF-8), got ${utf8Length(value)}` });
    }
  }
  const size = configSizeProblem(config);
  if (size) ctx.addIssue({ code: 'custom', message: size });
  for (const [key, fallback] of Object.entries(DATASET_CONFIG_DEFAULTS)) {
    const value = config[key];
    if (value === undefined || value === null) continue;
    // The reference stores {enabled, api_key, extra_params}; a plain boolean is the shorthand.
    if (key === 'PUBLIC_DATASET') {
      const problem = publicDatasetProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', path: [key], message: problem });
      continue;
    }
    if (typeof value !== typeof fallback || (typeof value === 'number' && !Number.isFinite(value))) {
      ctx.addIssue({ code: 'custom', path: [key], message: `must be a ${typeof fallback}` });
    }
  }
  const metric = config.DISTANCE_METRIC;
  if (typeof metric === 'string' && parseDistanceMetric(metric) === null) {
    ctx.addIssue({ code: 'custom', path: ['DISTANCE_METRIC'], message: 'must be cosine, dot, euclidean or manhattan' });
  }
  // Model servers are called by the core and the job workers: a bad address is refused here, not
  // discovered later as failing searches or dead-lettered jobs.
  for (const key of ['EMBEDDING_BASE_URL', 'RERANKER_BASE_URL', 'SPLADE_BASE_URL', 'SPLADE_QUERY_BASE_URL']) {
    const url = config[key];
    // Too long is reported above.
    if (typeof url !== 'string' || url.trim() === '' || url.length > LIMITS.urlLength) continue;
    let ok = false;
    try {
      ok = ['http:', 'https:'].includes(new URL(url.trim()).protocol);
    } catch {
      ok = false;
    }
    if (!ok) ctx.addIssue({ code: 'custom', path: [key], message: 'must be an http(s) URL (or empty)' });
  }
  const dimension = config.EMBEDDING_SIZE;
  if (typeof dimension === 'number' && (!Number.isInteger(dimension) || dimension < 1 || dimension > 8192)) {
    ctx.addIssue({ code: 'custom', path: ['EMBEDDING_SIZE'], message: 'must be an integer from 1 to 8192' });
  }
});

/** POST /api/organization. */
export const parseCreateOrganization = (body: unknown) =>
  parse(z.object({ name: z.string().trim().min(1, 'name must not be empty').max(256) }), requireBody(body, '{"name": "..."}'));

/** POST /api/organization/usage/{id}: the reference's date range and v1 flag, accepted and checked. */
export const parseOrganizationUsage = (body: unknown) =>
  parse(
    z.object({
      date_range: z
        .object({ gt: z.string().optional(), gte: z.string().optional(), lt: z.string().optional(), lte: z.string().optional() })
        .nullable()
        .optional(),
      v1_usage: z.boolean().nullable().optional(),
    }),
    body ?? {},
  );

/** PUT /api/organization. */
export const parseUpdateOrganization = (body: unknown) =>
  parse(
    z.object({
      organization_id: uuid.optional(),
      name: z.string().trim().min(1).max(256).optional(),
      partner_configuration: jsonObject.optional(),
      deleted: z.boolean().optional(),
    }),
    requireBody(body, 'a JSON object'),
  );

/** `expires_at` of a key: a timestamp (UTC) that is in the future. */
const expiresAt = z.string().transform((s, ctx) => {
  const ms = parseTimestamp(s);
  if (ms === undefined) {
    ctx.addIssue({ code: 'custom', message: `Invalid timestamp format "${s}"` });
    return z.NEVER;
  }
  return ms;
});

/** default_params of a key: the search parameters it forces. Shape-checked here, applied by search. */
const defaultParams = z
  .object({
    filters: jsonObject.nullable().optional(),
    highlight_options: jsonObject.nullable().optional(),
    no_result_message: z.string().nullable().optional(),
    page_size: z.number().int().min(0).nullable().optional(),
    remove_stop_words: z.boolean().nullable().optional(),
    score_threshold: finite.nullable().optional(),
    search_type: z.enum(['fulltext', 'semantic', 'hybrid', 'bm25']).nullable().optional(),
    slim_chunks: z.boolean().nullable().optional(),
    typo_options: jsonObject.nullable().optional(),
    use_quote_negated_terms: z.boolean().nullable().optional(),
  })
  .transform((p) => Object.fromEntries(Object.entries(p).filter(([, v]) => v !== null && v !== undefined)));

/** POST /api/organization/api_key. */
export const parseCreateApiKey = (body: unknown) =>
  parse(
    z.object({
      name: z.string().trim().min(1, 'name must not be empty').max(256),
      role,
      dataset_ids: z.array(uuid).nullable().optional(),
      scopes: scopes.nullable().optional(),
      expires_at: expiresAt.nullable().optional(),
      default_params: defaultParams.nullable().optional(),
    }),
    requireBody(body, '{"name": "...", "role": 0|1|2}'),
  );

/** PUT /api/user. */
export const parseUpdateUser = (body: unknown) =>
  parse(
    z.object({ user_id: uuid.nullable().optional(), role: role.nullable().optional(), scopes: scopes.nullable().optional() }),
    requireBody(body, 'a JSON object'),
  );

/** POST /api/auth/create_api_only_user. */
export const parseCreateApiOnlyUser = (body: unknown) =>
  parse(
    // 254: the longest address SMTP carries (RFC 5321); emails are indexed (unique), and a longer
    // random one would pass a PostgreSQL btree entry's 2,704 bytes (see LIMITS.keyBytes).
    z.object({ user_email: z.email('user_email must be an email address').max(254, 'user_email must be at most 254 characters long'), user_name: z.string().trim().min(1).max(256) }),
    requireBody(body, '{"user_email": "...", "user_name": "..."}'),
  );

/** POST /api/dataset. */
export const parseCreateDataset = (body: unknown) =>
  parse(
    z.object({
      dataset_name: z.string().trim().min(1, 'dataset_name must not be empty').max(256),
      tracking_id: trackingId.nullable().optional(),
      server_configuration: serverConfiguration.nullable().optional(),
    }),
    requireBody(body, '{"dataset_name": "..."}'),
  );

/** PUT /api/dataset. */
export const parseUpdateDataset = (body: unknown) =>
  parse(
    z.object({
      dataset_id: uuid.nullable().optional(),
      tracking_id: z.string().min(1).nullable().optional(),
      dataset_name: z.string().trim().min(1).max(256).nullable().optional(),
      server_configuration: serverConfiguration.nullable().optional(),
      new_tracking_id: trackingId.nullable().optional(),
    }),
    requireBody(body, 'a JSON object with dataset_id or tracking_id'),
  );

/** POST /api/dataset/get_all_tags. */
export const parseGetAllTags = (body: unknown) =>
  parse(
    z.object({ page: z.number().int().min(0).optional(), page_size: z.number().int().min(1).max(1000).optional() }),
    body ?? {},
  );

/** POST /api/dataset/events. */
export const parseDatasetEvents = (body: unknown) =>
  parse(
    z.object({
      page: z.number().int().min(0).nullable().optional(),
      page_size: z.number().int().min(1).max(1000).nullable().optional(),
      event_types: z.array(z.string().min(1)).max(100).nullable().optional(),
    }),
    body ?? {},
  );
