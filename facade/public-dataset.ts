/**
 * PUBLIC_DATASET: a dataset its owner publishes for anyone to search. The reference publishes it
 * by handing out a read key restricted to the dataset and scoped to its search component's routes;
 * here the same reads need no key at all, and nothing else does.
 */

/**
 * Routes a request without a key may use on a public dataset (named by `TR-Dataset`): the read
 * routes of the reference's "Search Component Routes" that quarry serves. Writes, scroll, tags,
 * usage and every organization route still need a key.
 */
export const PUBLIC_READ_ROUTES: ReadonlySet<string> = new Set([
  'POST /api/chunk/search',
  'POST /api/chunk/autocomplete',
  'POST /api/chunk/count',
  'POST /api/chunk/recommend',
  'POST /api/chunk_group/search',
  'POST /api/chunk_group/group_oriented_search',
  'POST /api/chunk_group/recommend',
  'GET /api/chunk/:chunk_id',
  'GET /api/chunk/tracking_id/:tracking_id',
  'GET /api/chunk_group/:group_id',
  'GET /api/chunk_group/tracking_id/:tracking_id',
]);

/**
 * Whether a server_configuration makes its dataset public: `PUBLIC_DATASET: {enabled: true}` as
 * the reference stores it, or the shorthand `PUBLIC_DATASET: true`.
 */
export function isPublicDataset(config: Record<string, unknown>): boolean {
  const value = config.PUBLIC_DATASET;
  if (value === true) return true;
  return typeof value === 'object' && value !== null && (value as { enabled?: unknown }).enabled === true;
}

/** The problem with a PUBLIC_DATASET value, or undefined when it is a boolean or `{enabled: boolean, ...}`. */
export function publicDatasetProblem(value: unknown): string | undefined {
  if (value === undefined || value === null || typeof value === 'boolean') return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) return 'must be a boolean or an object {"enabled": boolean}';
  const { enabled, api_key: apiKey, extra_params: extra } = value as Record<string, unknown>;
  if (enabled !== undefined && typeof enabled !== 'boolean') return 'enabled must be a boolean';
  if (apiKey !== undefined && apiKey !== null && typeof apiKey !== 'string') return 'api_key must be a string';
  if (extra !== undefined && extra !== null && (typeof extra !== 'object' || Array.isArray(extra))) return 'extra_params must be an object';
  return undefined;
}
