/**
 * A table-driven sweep of bad input over every route of facade/routes: malformed JSON, wrong
 * top-level types, wrong field types, missing fields, non-UUID path parameters, unknown ids,
 * oversized bodies, missing or wrong credentials and headers, insufficient roles, other tenants.
 * Each case asserts a 4xx (exact where the table says), a non-empty `{message}` naming the field
 * or header where one is at fault, and that not one row of the store changed. No route may answer
 * 500 anywhere in the sweep.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../helpers/api.js';
import { createKey, createTenant, type Tenant } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';
import { expectRejected, snapshotStore } from '../helpers/store-snapshot.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BODY_LIMIT = 65_536;
const MISSING = '00000000-0000-4000-8000-000000000000';
/**
 * An identifier within 1,024 characters but 3,000 UTF-8 bytes: past what one PostgreSQL index entry
 * holds (2,704 bytes), where a chunk with it as tracking_id answered 500.
 */
const WIDE_KEY = Array.from({ length: 1000 }, (_, i) => String.fromCharCode(0x4e00 + ((i * 7919) % 20000))).join('');
const WIDE = /2048 bytes/;

/** How a route finds its tenant. */
type Scope =
  | 'public' // no credentials needed
  | 'operator' // ADMIN_API_KEY only
  | 'auth' // any valid key
  | 'ds' // TR-Dataset header
  | 'dsPath' // dataset id in the path
  | 'org' // TR-Organization header
  | 'orgPath' // organization id in the path
  | 'dsBody'; // dataset id in the body (TR-Organization optional)

/** Ids the table refers to, filled in beforeAll. */
interface Ids {
  org: string;
  ds: string;
  dsTracking: string;
  chunk: string;
  chunkTracking: string;
  group: string;
  groupTracking: string;
  key: string;
  /** A topic holding one question and its answer. */
  topic: string;
  /** A message of another topic, which no route of the sweep edits. */
  message: string;
  /** A CSV file awaiting its upload. */
  file: string;
  /** A user event (a view). */
  event: string;
  /** An experiment of area `search`. */
  experiment: string;
}

/** A valid experiment_config. */
const EXPERIMENT_CONFIG = { area: 'search', t1_name: 't1', t1_split: 0.5, control_name: 'ctl', control_split: 0.5 };

interface RouteCase {
  /** `METHOD /api/path/:param` exactly as registered in facade/routes. */
  route: string;
  scope: Scope;
  /** Minimum role (0 read, 1 admin, 2 owner). */
  role: 0 | 1 | 2;
  /** A valid concrete path. */
  path: (ids: Ids) => string;
  /** A valid body (routes that read one); the header/role cases send it. */
  body?: (ids: Ids) => unknown;
  /** The body may be absent or null (e.g. get_all_tags). */
  bodyOptional?: boolean;
  /** Bad bodies and what the message must name. */
  fields?: (ids: Ids) => [unknown, RegExp, number?][];
  /** Paths with a non-UUID (or non-integer) parameter and the parameter name. */
  badParams?: (ids: Ids) => [string, RegExp][];
  /** Requests naming things that do not exist: [path, body?, expected status]. */
  unknown?: (ids: Ids) => [string, unknown, number][];
  /** Headers that make the valid request refer to a dataset/org given by tracking id etc. */
  extraHeaders?: (ids: Ids) => Record<string, string>;
  /** Must never be sent with valid input (it would delete something the sweep relies on). */
  destructive?: boolean;
  /** Valid requests are made with ADMIN_API_KEY (e.g. creating organizations needs a user or the operator). */
  asOperator?: boolean;
}

const ROUTES: RouteCase[] = [
  { route: 'GET /api/health', scope: 'public', role: 0, path: () => '/api/health' },
  { route: 'GET /api/auth/me', scope: 'auth', role: 0, path: () => '/api/auth/me' },
  {
    route: 'POST /api/auth/create_api_only_user',
    scope: 'operator',
    role: 2,
    path: () => '/api/auth/create_api_only_user',
    body: () => ({ user_email: 'sweep@example.com', user_name: 'Sweep' }),
    fields: () => [
      [{}, /user_email/],
      [{ user_email: 5, user_name: 'x' }, /user_email/],
      [{ user_email: 'nope', user_name: 'x' }, /user_email/],
      [{ user_email: `${'k'.repeat(250)}@example.com`, user_name: 'x' }, /user_email must be at most 254/],
      [{ user_email: 'a@example.com' }, /user_name/],
      [{ user_email: 'a@example.com', user_name: ['x'] }, /user_name/],
    ],
  },
  {
    route: 'PUT /api/user',
    scope: 'org',
    role: 0,
    path: () => '/api/user',
    body: () => ({ user_id: MISSING, role: 0 }),
    fields: () => [
      [{ role: '1', user_id: MISSING }, /role/],
      [{ role: 7, user_id: MISSING }, /role/],
      [{ user_id: 'nope' }, /user_id/],
      [{ user_id: MISSING, scopes: 'GET /api/chunk' }, /scopes/],
      [{ user_id: MISSING, scopes: ['chunks please'] }, /scope/],
      [{}, /user_id/],
    ],
    unknown: () => [['/api/user', { user_id: MISSING, role: 0 }, 400]],
  },
  {
    route: 'POST /api/organization',
    scope: 'auth',
    role: 1,
    asOperator: true,
    path: () => '/api/organization',
    body: () => ({ name: 'sweep org' }),
    fields: () => [
      [{}, /name/],
      [{ name: 5 }, /name/],
      [{ name: '   ' }, /name/],
      [{ name: 'x'.repeat(300) }, /name/],
    ],
  },
  {
    route: 'PUT /api/organization',
    scope: 'org',
    role: 2,
    path: () => '/api/organization',
    body: () => ({ name: 'sweep rename' }),
    fields: () => [
      [{ name: 5 }, /name/],
      [{ name: '' }, /name/],
      [{ partner_configuration: [] }, /partner_configuration/],
      [{ partner_configuration: 'x' }, /partner_configuration/],
      [{ deleted: 'yes' }, /deleted/],
      [{ organization_id: 'x' }, /organization_id/],
    ],
    unknown: () => [['/api/organization', { organization_id: MISSING, name: 'x' }, 404]],
  },
  {
    route: 'DELETE /api/organization/:organization_id',
    scope: 'orgPath',
    role: 2,
    destructive: true,
    path: (i) => `/api/organization/${i.org}`,
    badParams: () => [['/api/organization/not-a-uuid', /organization_id/]],
    unknown: () => [[`/api/organization/${MISSING}`, undefined, 404]],
  },
  {
    route: 'POST /api/organization/api_key',
    scope: 'org',
    role: 1,
    path: () => '/api/organization/api_key',
    body: () => ({ name: 'sweep key', role: 0 }),
    fields: (i) => [
      [{ role: 0 }, /name/],
      [{ name: 'k' }, /role/],
      [{ name: 'k', role: '0' }, /role/],
      [{ name: 'k', role: 3 }, /role/],
      [{ name: 'k', role: -1 }, /role/],
      [{ name: 7, role: 0 }, /name/],
      [{ name: 'k', role: 0, dataset_ids: i.ds }, /dataset_ids/],
      [{ name: 'k', role: 0, dataset_ids: ['x'] }, /dataset_ids/],
      [{ name: 'k', role: 0, scopes: 'POST /api/chunk' }, /scopes/],
      [{ name: 'k', role: 0, scopes: ['POST chunk'] }, /scope/],
      [{ name: 'k', role: 0, expires_at: 5 }, /expires_at/],
      [{ name: 'k', role: 0, expires_at: 'soon' }, /expires_at/],
      [{ name: 'k', role: 0, default_params: 'x' }, /default_params/],
      [{ name: 'k', role: 0, default_params: { page_size: 'ten' } }, /page_size/],
      [{ name: 'k', role: 0, default_params: { search_type: 'vibes' } }, /search_type/],
    ],
    unknown: () => [['/api/organization/api_key', { name: 'k', role: 0, dataset_ids: [MISSING] }, 400]],
  },
  { route: 'GET /api/organization/api_key', scope: 'org', role: 1, path: () => '/api/organization/api_key' },
  {
    route: 'DELETE /api/organization/api_key/:api_key_id',
    scope: 'org',
    role: 1,
    destructive: true,
    path: (i) => `/api/organization/api_key/${i.key}`,
    badParams: () => [['/api/organization/api_key/123', /api_key_id/]],
    unknown: () => [[`/api/organization/api_key/${MISSING}`, undefined, 404]],
  },
  {
    route: 'GET /api/organization/usage/:organization_id',
    scope: 'orgPath',
    role: 1,
    path: (i) => `/api/organization/usage/${i.org}`,
    badParams: () => [['/api/organization/usage/zzz', /organization_id/]],
    unknown: () => [[`/api/organization/usage/${MISSING}`, undefined, 404]],
  },
  {
    route: 'POST /api/organization/usage/:organization_id',
    scope: 'orgPath',
    role: 1,
    path: (i) => `/api/organization/usage/${i.org}`,
    body: () => ({ v1_usage: true }),
    bodyOptional: true,
    fields: () => [
      [{ v1_usage: 'yes' }, /v1_usage/],
      [{ date_range: 'last week' }, /date_range/],
      [{ date_range: { gt: 5 } }, /date_range/],
    ],
    badParams: () => [['/api/organization/usage/zzz', /organization_id/]],
    unknown: () => [[`/api/organization/usage/${MISSING}`, {}, 404]],
  },
  {
    route: 'GET /api/organization/users/:organization_id',
    scope: 'orgPath',
    role: 1,
    path: (i) => `/api/organization/users/${i.org}`,
    badParams: () => [['/api/organization/users/zzz', /organization_id/]],
    unknown: () => [[`/api/organization/users/${MISSING}`, undefined, 404]],
  },
  {
    route: 'GET /api/organization/:organization_id',
    scope: 'orgPath',
    role: 0,
    path: (i) => `/api/organization/${i.org}`,
    badParams: () => [['/api/organization/zzz', /organization_id/]],
    unknown: () => [[`/api/organization/${MISSING}`, undefined, 404]],
  },
  {
    route: 'POST /api/dataset',
    scope: 'org',
    role: 2,
    path: () => '/api/dataset',
    body: () => ({ dataset_name: 'sweep ds' }),
    fields: () => [
      [{}, /dataset_name/],
      [{ dataset_name: 1 }, /dataset_name/],
      [{ dataset_name: '' }, /dataset_name/],
      [{ dataset_name: 'x', tracking_id: 5 }, /tracking_id/],
      [{ dataset_name: 'x', tracking_id: WIDE_KEY }, WIDE],
      [{ dataset_name: 'x', server_configuration: 'x' }, /server_configuration/],
      [{ dataset_name: 'x', server_configuration: { EMBEDDING_SIZE: 0 } }, /EMBEDDING_SIZE/],
      [{ dataset_name: 'x', server_configuration: { EMBEDDING_MODEL_NAME: WIDE_KEY } }, WIDE],
      [{ dataset_name: 'x', server_configuration: { SEMANTIC_ENABLED: 'yes' } }, /SEMANTIC_ENABLED/],
      [{ dataset_name: 'x', server_configuration: { SPLADE_BASE_URL: 'ftp://x' } }, /SPLADE_BASE_URL/],
      [{ dataset_name: 'x', server_configuration: { SPLADE_QUERY_BASE_URL: 'not a url' } }, /SPLADE_QUERY_BASE_URL/],
      [{ dataset_name: 'x', server_configuration: { RERANKER_BASE_URL: 'localhost:8080' } }, /RERANKER_BASE_URL/],
      [{ dataset_name: 'x', tracking_id: 'sweep-ds-tracking' }, /sweep-ds-tracking/],
    ],
  },
  {
    route: 'PUT /api/dataset',
    scope: 'dsBody',
    role: 2,
    path: () => '/api/dataset',
    body: (i) => ({ dataset_id: i.ds, dataset_name: 'sweep ds renamed' }),
    fields: (i) => [
      [{}, /dataset_id|tracking_id/],
      [{ dataset_id: 'x' }, /dataset_id/],
      [{ dataset_id: i.ds, dataset_name: 5 }, /dataset_name/],
      [{ dataset_id: i.ds, server_configuration: [] }, /server_configuration/],
      [{ dataset_id: i.ds, new_tracking_id: 5 }, /new_tracking_id/],
      [{ tracking_id: 5 }, /tracking_id/],
    ],
    unknown: () => [
      ['/api/dataset', { dataset_id: MISSING, dataset_name: 'x' }, 404],
      ['/api/dataset', { tracking_id: 'no-such-ds', dataset_name: 'x' }, 404],
    ],
  },
  {
    route: 'GET /api/dataset/organization/:organization_id',
    scope: 'orgPath',
    role: 0,
    path: (i) => `/api/dataset/organization/${i.org}`,
    badParams: (i) => [
      ['/api/dataset/organization/nope', /organization_id/],
      [`/api/dataset/organization/${i.org}?limit=abc`, /limit/],
      [`/api/dataset/organization/${i.org}?offset=-1`, /offset/],
    ],
    unknown: () => [[`/api/dataset/organization/${MISSING}`, undefined, 404]],
  },
  {
    route: 'GET /api/dataset/tracking_id/:tracking_id',
    scope: 'org',
    role: 0,
    path: (i) => `/api/dataset/tracking_id/${i.dsTracking}`,
    unknown: () => [['/api/dataset/tracking_id/no-such-ds', undefined, 404]],
  },
  {
    route: 'DELETE /api/dataset/tracking_id/:tracking_id',
    scope: 'org',
    role: 2,
    destructive: true,
    path: (i) => `/api/dataset/tracking_id/${i.dsTracking}`,
    unknown: () => [['/api/dataset/tracking_id/no-such-ds', undefined, 404]],
  },
  {
    route: 'GET /api/dataset/usage/:dataset_id',
    scope: 'dsPath',
    role: 0,
    path: (i) => `/api/dataset/usage/${i.ds}`,
    badParams: () => [['/api/dataset/usage/42', /dataset_id/]],
    unknown: () => [[`/api/dataset/usage/${MISSING}`, undefined, 404]],
  },
  {
    route: 'PUT /api/dataset/clear/:dataset_id',
    scope: 'dsPath',
    role: 2,
    destructive: true,
    path: (i) => `/api/dataset/clear/${i.ds}`,
    badParams: () => [['/api/dataset/clear/abc', /dataset_id/]],
    unknown: () => [[`/api/dataset/clear/${MISSING}`, undefined, 404]],
  },
  {
    route: 'POST /api/dataset/get_all_tags',
    scope: 'ds',
    role: 0,
    bodyOptional: true,
    path: () => '/api/dataset/get_all_tags',
    body: () => ({ page: 1 }),
    fields: () => [
      [{ page: '1' }, /page/],
      [{ page: -1 }, /page/],
      [{ page_size: 0 }, /page_size/],
      [{ page_size: 1e6 }, /page_size/],
      [{ page: 1.5 }, /page/],
    ],
  },
  {
    route: 'POST /api/dataset/events',
    scope: 'ds',
    role: 0,
    bodyOptional: true,
    path: () => '/api/dataset/events',
    body: () => ({ page: 1, page_size: 5, event_types: ['chunks_embedded'] }),
    fields: () => [
      [{ page: 'one' }, /page/],
      [{ page_size: 0 }, /page_size/],
      [{ event_types: 'chunks_embedded' }, /event_types/],
      [{ event_types: [''] }, /event_types/],
      [{ event_types: ['chunks_embeded'] }, /event_types: unknown event type "chunks_embeded"; quarry records chunks_embedded, /],
    ],
  },
  {
    route: 'GET /api/dataset/groups/:dataset_id/:page',
    scope: 'dsPath',
    role: 0,
    path: (i) => `/api/dataset/groups/${i.ds}/1`,
    badParams: (i) => [
      ['/api/dataset/groups/xyz/1', /dataset_id/],
      [`/api/dataset/groups/${i.ds}/first`, /page/],
      [`/api/dataset/groups/${i.ds}/-2`, /page/],
    ],
    unknown: () => [[`/api/dataset/groups/${MISSING}/1`, undefined, 404]],
  },
  {
    route: 'GET /api/dataset/scroll_files',
    scope: 'ds',
    role: 0,
    path: () => '/api/dataset/scroll_files?page_size=5',
    badParams: () => [
      ['/api/dataset/scroll_files?cursor=abc', /cursor/],
      ['/api/dataset/scroll_files?page_size=-1', /page_size/],
      ['/api/dataset/scroll_files?page_size=0', /page_size must be an integer from 1 to 1000/],
      ['/api/dataset/scroll_files?page_size=1001', /page_size/],
      ['/api/dataset/scroll_files?page_size=two', /page_size/],
    ],
  },
  {
    route: 'GET /api/dataset/files/:dataset_id/:page',
    scope: 'dsPath',
    role: 0,
    path: (i) => `/api/dataset/files/${i.ds}/1`,
    badParams: (i) => [
      ['/api/dataset/files/xyz/1', /dataset_id/],
      [`/api/dataset/files/${i.ds}/first`, /page/],
    ],
    unknown: () => [[`/api/dataset/files/${MISSING}/1`, undefined, 404]],
  },
  {
    route: 'POST /api/file/csv_or_jsonl',
    scope: 'ds',
    role: 1,
    path: () => '/api/file/csv_or_jsonl',
    body: () => ({ file_name: 'sweep.csv' }),
    fields: () => [
      [{}, /file_name/],
      [{ file_name: 5 }, /file_name/],
      [{ file_name: 'sweep.xlsx' }, /\.csv/],
      [{ file_name: 'a.csv', mappings: 'sku' }, /mappings/],
      [{ file_name: 'a.csv', mappings: [{ csv_jsonl_field: 'a', chunk_req_payload_field: 'price' }] }, /chunk_req_payload_field/],
      [{ file_name: 'a.csv', metadata: [1] }, /metadata/],
      [{ file_name: 'a.csv', upsert_by_tracking_id: 'yes' }, /upsert_by_tracking_id/],
      [{ file_name: 'a.csv', time_stamp: 'soon' }, /time_stamp|timestamp/],
      [{ file_name: 'a.csv', semantic_boost_factor: 'x' }, /semantic_boost_factor/],
    ],
  },
  {
    route: 'POST /api/file',
    scope: 'ds',
    role: 1,
    // Valid, it imports in the background: the sweep's store snapshots would see those writes.
    destructive: true,
    path: () => '/api/file',
    body: () => ({ base64_file: 'aGVsbG8=', file_name: 'sweep.txt' }),
    fields: () => [
      [{}, /base64_file/],
      [{ file_name: 'a.txt' }, /base64_file/],
      [{ base64_file: 7, file_name: 'a.txt' }, /base64_file/],
      [{ base64_file: '%%%', file_name: 'a.txt' }, /base64/],
      [{ base64_file: 'aGVsbG8=' }, /file_name/],
      [{ base64_file: 'aGVsbG8=', file_name: 'a.exe' }, /file_name/],
      [{ base64_file: 'aGVsbG8=', file_name: 'a.txt', target_chunk_chars: 'x' }, /target_chunk_chars/],
      [{ base64_file: 'aGVsbG8=', file_name: 'a.txt', target_chunk_chars: 100, chunk_overlap_chars: 200 }, /chunk_overlap_chars/],
    ],
  },
  {
    route: 'POST /api/file/upload',
    scope: 'ds',
    role: 1,
    // A multipart/form-data body, which this table's JSON requests cannot make: file-import.test.ts sends valid and bad forms.
    destructive: true,
    path: () => '/api/file/upload',
  },
  {
    route: 'GET /api/file/:file_id',
    scope: 'ds',
    role: 0,
    path: (i) => `/api/file/${i.file}`,
    badParams: () => [['/api/file/not-a-file', /file_id/]],
    unknown: () => [[`/api/file/${MISSING}`, undefined, 404]],
  },
  {
    route: 'DELETE /api/file/:file_id',
    scope: 'ds',
    role: 1,
    destructive: true,
    path: (i) => `/api/file/${i.file}`,
    badParams: (i) => [
      ['/api/file/not-a-file', /file_id/],
      [`/api/file/${i.file}?delete_chunks=2`, /delete_chunks/],
    ],
    unknown: () => [[`/api/file/${MISSING}`, undefined, 404]],
  },
  {
    route: 'GET /api/dataset/:dataset_id',
    scope: 'dsPath',
    role: 1,
    path: (i) => `/api/dataset/${i.ds}`,
    badParams: () => [['/api/dataset/not-a-dataset', /dataset_id/]],
    unknown: () => [[`/api/dataset/${MISSING}`, undefined, 404]],
  },
  {
    route: 'DELETE /api/dataset/:dataset_id',
    scope: 'dsPath',
    role: 2,
    destructive: true,
    path: (i) => `/api/dataset/${i.ds}`,
    badParams: () => [['/api/dataset/not-a-dataset', /dataset_id/]],
    unknown: () => [[`/api/dataset/${MISSING}`, undefined, 404]],
  },
  {
    route: 'POST /api/chunk',
    scope: 'ds',
    role: 1,
    path: () => '/api/chunk',
    body: () => ({ chunk_html: 'sweep chunk' }),
    fields: (i) => [
      [{ chunk_html: 5 }, /chunk_html/],
      [{ link: [] }, /link/],
      [{ tag_set: [1] }, /tag_set/],
      [{ tag_set: { a: 1 } }, /tag_set/],
      [{ num_value: '1' }, /num_value/],
      [{ weight: 'heavy' }, /weight/],
      [{ time_stamp: 12 }, /time_stamp/],
      [{ time_stamp: 'last tuesday' }, /time_stamp/],
      [{ location: 'here' }, /location/],
      [{ location: { lat: 100, lon: 0 } }, /lat/],
      [{ image_urls: 'x' }, /image_urls/],
      [{ image_urls: [null] }, /image_urls/],
      [{ group_ids: ['x'] }, /group_ids/],
      [{ group_ids: 'x' }, /group_ids/],
      [{ group_tracking_ids: [5] }, /group_tracking_ids/],
      [{ tracking_id: 5 }, /tracking_id/],
      [{ tracking_id: 'x'.repeat(1025) }, /tracking_id/],
      [{ tracking_id: WIDE_KEY }, WIDE],
      [{ tracking_id: i.chunkTracking }, new RegExp(i.chunkTracking)],
      [{ upsert_by_tracking_id: 'yes' }, /upsert_by_tracking_id/],
      [{ convert_html_to_text: 'no' }, /convert_html_to_text/],
      [{ fulltext_boost: { phrase: 'a' } }, /fulltext_boost/],
      [{ semantic_boost: { phrase: 1, distance_factor: 1 } }, /semantic_boost/],
      [[{ chunk_html: 'ok' }, { chunk_html: 5 }], /\[1\]\.chunk_html/],
      [[], /empty/],
      [[1], /\[0\]/],
      [Array.from({ length: 121 }, () => ({})), /120/, 413],
      [{ chunk_html: 'deep', metadata: JSON.parse('['.repeat(200) + ']'.repeat(200)) }, /deep/],
    ],
    unknown: () => [
      ['/api/chunk', { chunk_html: 'x', group_ids: [MISSING] }, 404],
      ['/api/chunk', [{ chunk_html: 'x' }, { chunk_html: 'y', group_ids: [MISSING] }], 404],
    ],
  },
  {
    route: 'PUT /api/chunk',
    scope: 'ds',
    role: 1,
    path: () => '/api/chunk',
    body: (i) => ({ chunk_id: i.chunk, link: 'sweep' }),
    fields: (i) => [
      [{}, /chunk_id|tracking_id/],
      [{ link: 'x' }, /chunk_id|tracking_id/],
      [{ chunk_id: 'x' }, /chunk_id/],
      [{ chunk_id: i.chunk, weight: 'x' }, /weight/],
      [{ chunk_id: i.chunk, metadata: JSON.parse('{"a":'.repeat(150) + '1' + '}'.repeat(150)) }, /deep/],
      [{ chunk_id: i.chunk, time_stamp: '2024-02-30' }, /time_stamp/],
      [{ chunk_id: i.chunk, location: { lat: 0 } }, /location/],
      [{ tracking_id: 17 }, /tracking_id/],
    ],
    unknown: (i) => [
      ['/api/chunk', { chunk_id: MISSING, link: 'x' }, 404],
      ['/api/chunk', { tracking_id: 'no-such-chunk', link: 'x' }, 404],
      ['/api/chunk', { chunk_id: i.chunk, group_ids: [MISSING] }, 404],
    ],
  },
  {
    route: 'PUT /api/chunk/tracking_id/update',
    scope: 'ds',
    role: 1,
    path: () => '/api/chunk/tracking_id/update',
    body: (i) => ({ tracking_id: i.chunkTracking, link: 'sweep' }),
    fields: (i) => [
      [{}, /tracking_id/],
      [{ tracking_id: 5 }, /tracking_id/],
      [{ tracking_id: i.chunkTracking, link: 5 }, /link/],
    ],
    unknown: () => [['/api/chunk/tracking_id/update', { tracking_id: 'no-such-chunk', link: 'x' }, 404]],
  },
  {
    route: 'POST /api/chunks',
    scope: 'ds',
    role: 0,
    path: () => '/api/chunks',
    body: (i) => ({ ids: [i.chunk] }),
    fields: () => [
      [{}, /ids/],
      [{ ids: 'x' }, /ids/],
      [{ ids: ['x'] }, /ids/],
      [{ ids: [5] }, /ids/],
    ],
    unknown: () => [['/api/chunks', { ids: [MISSING] }, 404]],
  },
  {
    route: 'POST /api/chunks/tracking',
    scope: 'ds',
    role: 0,
    path: () => '/api/chunks/tracking',
    body: (i) => ({ tracking_ids: [i.chunkTracking] }),
    fields: () => [
      [{}, /tracking_ids/],
      [{ tracking_ids: [1] }, /tracking_ids/],
      [{ tracking_ids: 'a' }, /tracking_ids/],
    ],
    unknown: () => [['/api/chunks/tracking', { tracking_ids: ['no-such-chunk'] }, 404]],
  },
  {
    route: 'POST /api/chunks/scroll',
    scope: 'ds',
    role: 0,
    bodyOptional: true,
    path: () => '/api/chunks/scroll',
    body: () => ({ page_size: 1 }),
    fields: (i) => [
      [{ page_size: -1 }, /page_size/],
      [{ page_size: 'ten' }, /page_size/],
      [{ offset_chunk_id: 'x' }, /offset_chunk_id/],
      [{ sort_by: { field: 'chunk_html' } }, /sort_by/],
      [{ sort_by: { field: 'num_value' }, offset_chunk_id: i.chunk }, /sort_by/],
      [{ filters: 'x' }, /filters/],
    ],
    unknown: () => [['/api/chunks/scroll', { offset_chunk_id: MISSING }, 404]],
  },
  {
    route: 'POST /api/chunk/search',
    scope: 'ds',
    role: 0,
    path: () => '/api/chunk/search',
    body: () => ({ search_type: 'bm25', query: 'sweep' }),
    fields: () => [
      [{}, /search_type|query/],
      [{ query: 'x' }, /search_type/],
      [{ search_type: 'bm25' }, /query/],
      [{ search_type: 'vibes', query: 'x' }, /search_type/],
      [{ search_type: 'bm25', query: 5 }, /query/],
      [{ search_type: 'bm25', query: 'x', user_id: WIDE_KEY }, WIDE],
      [{ search_type: 'bm25', query: 'x', page: -1 }, /page/],
      [{ search_type: 'bm25', query: 'x', page_size: 'ten' }, /page_size/],
      [{ search_type: 'bm25', query: 'x', filters: 'x' }, /filters/],
      [{ search_type: 'bm25', query: '   ' }, /[Qq]uery/],
      [{ search_type: 'bm25', query: 'x', use_quote_negated_terms: true, remove_stop_words: 'yes' }, /remove_stop_words/],
      [{ search_type: 'bm25', query: '"" -', use_quote_negated_terms: true }, /Query cannot be empty/],
      [{ search_type: 'bm25', query: 'x', sort_options: { sort_by: { rerank_type: 'magic' } } }, /sort_by/],
      [{ search_type: 'bm25', query: 'x', sort_options: { sort_by: { field: 'chunk_html' } } }, /sort_by.field/],
      [{ search_type: 'bm25', query: 'x', sort_options: { mmr: { use_mmr: true, mmr_lambda: 2 } } }, /mmr_lambda/],
      [{ search_type: 'bm25', query: 'x', sort_options: { location_bias: { location: { lat: 100, lon: 0 }, bias: 0.5 } } }, /lat/],
      [{ search_type: 'bm25', query: 'x', sort_options: { recency_bias: -1 } }, /recency_bias/],
      [{ search_type: 'bm25', query: 'x', tag_weights: { a: 'heavy' } }, /tag_weights/],
      [{ search_type: 'bm25', query: 'x', scoring_options: { fulltext_boost: { phrase: 'x', boost_factor: 0 } } }, /boost_factor/],
      [{ search_type: 'bm25', query: 'x', highlight_options: { highlight_threshold: 3 } }, /highlight_threshold/],
      [{ search_type: 'bm25', query: 'x', highlight_options: { highlight_strategy: 'magic' } }, /highlight_strategy/],
      [{ search_type: 'hybrid', query: 'x', sort_options: { sort_by: { rerank_type: 'cross_encoder' } } }, /RERANKER_BASE_URL/],
      [{ search_type: 'bm25', query: 'x', typo_options: { correct_typos: 'yes' } }, /correct_typos/],
      [{ search_type: 'bm25', query: 'x', typo_options: { correct_typos: true, two_typo_word_range: { min: -1 } } }, /two_typo_word_range/],
    ],
  },
  {
    route: 'POST /api/chunk/autocomplete',
    scope: 'ds',
    role: 0,
    path: () => '/api/chunk/autocomplete',
    body: () => ({ search_type: 'bm25', query: 'swe' }),
    fields: () => [
      [{}, /search_type|query/],
      [{ query: 'x' }, /search_type/],
      [{ search_type: 'bm25', query: '  ' }, /[Qq]uery/],
      [{ search_type: 'bm25', query: 'x', extend_results: 'yes' }, /extend_results/],
      [{ search_type: 'bm25', query: 'x', page_size: -2 }, /page_size/],
    ],
  },
  {
    route: 'POST /api/chunk/count',
    scope: 'ds',
    role: 0,
    path: () => '/api/chunk/count',
    body: () => ({ search_type: 'bm25', query: 'sweep' }),
    fields: () => [
      [{}, /search_type|query/],
      [{ search_type: 'hybrid', query: 'x' }, /hybrid/],
      [{ search_type: 'bm25', query: 'x', limit: -1 }, /limit/],
      [{ search_type: 'bm25', query: 'x', limit: 1e9 }, /limit/],
    ],
  },
  {
    route: 'POST /api/chunk/recommend',
    scope: 'ds',
    role: 0,
    path: () => '/api/chunk/recommend',
    body: () => ({ positive_tracking_ids: ['sweep-chunk'], recommend_type: 'bm25' }),
    fields: (i) => [
      [{}, /positive/],
      [{ negative_chunk_ids: [i.chunk] }, /positive/],
      [{ positive_chunk_ids: 'x' }, /positive_chunk_ids/],
      [{ positive_chunk_ids: ['x'] }, /positive_chunk_ids/],
      [{ positive_tracking_ids: [7] }, /positive_tracking_ids/],
      [{ positive_tracking_ids: ['sweep-chunk'], strategy: 'magic' }, /strategy/],
      [{ positive_tracking_ids: ['sweep-chunk'], recommend_type: 'hybrid' }, /recommend_type/],
      [{ positive_tracking_ids: ['sweep-chunk'], limit: -1 }, /limit/],
      [{ positive_tracking_ids: ['sweep-chunk'], limit: 1e9 }, /limit/],
      [{ positive_tracking_ids: ['sweep-chunk'], filters: 'x' }, /filters/],
      [{ positive_tracking_ids: ['sweep-chunk'], slim_chunks: 'yes' }, /slim_chunks/],
      // This stack embeds nothing: a semantic recommendation has no vectors to start from.
      [{ positive_tracking_ids: ['sweep-chunk'] }, /embeddings are pending/],
    ],
    unknown: () => [
      ['/api/chunk/recommend', { positive_chunk_ids: [MISSING] }, 404],
      ['/api/chunk/recommend', { positive_tracking_ids: ['sweep-chunk'], negative_tracking_ids: ['no-such-chunk'] }, 404],
    ],
  },
  {
    route: 'POST /api/chunk/generate',
    scope: 'ds',
    role: 0,
    path: () => '/api/chunk/generate',
    body: (i) => ({ prev_messages: [{ role: 'user', content: 'sweep seed?' }], chunk_ids: [i.chunk], stream_response: false }),
    fields: (i) => [
      [{ chunk_ids: [i.chunk] }, /prev_messages/],
      [{ prev_messages: [], chunk_ids: [i.chunk] }, /at least 1 prior message/],
      [{ prev_messages: [{ role: 'robot', content: 'x' }], chunk_ids: [i.chunk] }, /role/],
      [{ prev_messages: [{ role: 'user', content: 5 }], chunk_ids: [i.chunk] }, /content/],
      [{ prev_messages: [{ role: 'user', content: 'x' }], chunk_ids: ['x'] }, /chunk_ids/],
      [{ prev_messages: [{ role: 'user', content: 'x' }], chunk_ids: [i.chunk], temperature: 3 }, /temperature/],
      [{ prev_messages: [{ role: 'user', content: 'x' }], chunk_ids: [i.chunk], frequency_penalty: -3 }, /frequency_penalty/],
      [{ prev_messages: [{ role: 'user', content: 'x' }], chunk_ids: [i.chunk], presence_penalty: 2.5 }, /presence_penalty/],
      [{ prev_messages: [{ role: 'user', content: 'x' }], chunk_ids: [i.chunk], max_tokens: -1 }, /max_tokens/],
      [{ prev_messages: [{ role: 'user', content: 'x' }], chunk_ids: [i.chunk], stop_tokens: ['a', 'b', 'c', 'd', 'e'] }, /stop_tokens/],
      [{ prev_messages: [{ role: 'user', content: 'x' }], chunk_ids: [i.chunk], stream_response: 'no' }, /stream_response/],
      [{ prev_messages: [{ role: 'user', content: 'x' }], chunk_ids: [i.chunk], audio_input: 'AAAA' }, /audio/i],
    ],
  },
  {
    route: 'POST /api/chunk/suggestions',
    scope: 'ds',
    role: 0,
    bodyOptional: true,
    path: () => '/api/chunk/suggestions',
    body: () => ({ query: 'sweep' }),
    fields: () => [
      [{ query: 5 }, /query/],
      [{ suggestion_type: 'poem' }, /suggestion_type/],
      [{ suggestions_to_create: 0 }, /suggestions_to_create/],
      [{ suggestions_to_create: 11 }, /suggestions_to_create/],
    ],
  },
  {
    route: 'POST /api/topic',
    scope: 'ds',
    role: 1,
    path: () => '/api/topic',
    body: () => ({ owner_id: 'sweep-owner', name: 'sweep topic' }),
    fields: () => [
      [{}, /owner_id/],
      [{ owner_id: 5, name: 'x' }, /owner_id/],
      [{ owner_id: WIDE_KEY, name: 'x' }, WIDE],
      [{ owner_id: 'o' }, /first_user_message and name must not be empty/],
      [{ owner_id: 'o', name: '   ', first_user_message: '' }, /first_user_message and name must not be empty/],
      [{ owner_id: 'o', name: 'x'.repeat(1025) }, /name/],
    ],
  },
  {
    route: 'PUT /api/topic',
    scope: 'ds',
    role: 1,
    path: () => '/api/topic',
    body: (i) => ({ topic_id: i.topic, name: 'sweep topic renamed' }),
    fields: (i) => [
      [{ name: 'x' }, /topic_id/],
      [{ topic_id: 'x', name: 'x' }, /topic_id/],
      [{ topic_id: i.topic }, /name/],
      [{ topic_id: i.topic, name: ' ' }, /name/],
    ],
    unknown: () => [['/api/topic', { topic_id: MISSING, name: 'x' }, 404]],
  },
  {
    route: 'POST /api/topic/clone',
    scope: 'ds',
    role: 1,
    path: () => '/api/topic/clone',
    body: (i) => ({ topic_id: i.topic }),
    fields: () => [
      [{}, /topic_id/],
      [{ topic_id: 'x' }, /topic_id/],
    ],
    unknown: () => [['/api/topic/clone', { topic_id: MISSING }, 404]],
  },
  {
    route: 'DELETE /api/topic/:topic_id',
    scope: 'ds',
    role: 1,
    destructive: true,
    path: (i) => `/api/topic/${i.topic}`,
    badParams: () => [['/api/topic/abc', /topic_id/]],
    unknown: () => [[`/api/topic/${MISSING}`, undefined, 404]],
  },
  {
    route: 'GET /api/topic/owner/:owner_id',
    scope: 'ds',
    role: 1,
    path: () => '/api/topic/owner/sweep-owner',
  },
  {
    route: 'POST /api/message',
    scope: 'ds',
    role: 1,
    path: () => '/api/message',
    body: (i) => ({ topic_id: i.topic, new_message_content: 'sweep seed?', search_type: 'bm25', stream_response: false }),
    fields: (i) => [
      [{ new_message_content: 'x' }, /topic_id/],
      [{ topic_id: 'x', new_message_content: 'x' }, /topic_id/],
      [{ topic_id: i.topic }, /new_message_content/],
      [{ topic_id: i.topic, new_message_content: '  ' }, /new_message_content/],
      [{ topic_id: i.topic, new_message_content: 'x', search_type: 'magic' }, /search_type/],
      [{ topic_id: i.topic, new_message_content: 'x', page_size: -1 }, /page_size/],
      [{ topic_id: i.topic, new_message_content: 'x', filters: 'x' }, /filters/],
      [{ topic_id: i.topic, new_message_content: 'x', llm_options: { temperature: 9 } }, /temperature/],
      [{ topic_id: i.topic, new_message_content: 'x', number_of_messages_to_include: -1 }, /number_of_messages_to_include/],
      [{ topic_id: i.topic, new_message_content: 'x', audio_input: 'AAAA' }, /audio/i],
    ],
    unknown: () => [['/api/message', { topic_id: MISSING, new_message_content: 'x', stream_response: false }, 404]],
  },
  {
    route: 'PUT /api/message',
    scope: 'ds',
    role: 1,
    path: () => '/api/message',
    body: (i) => ({ topic_id: i.topic, message_sort_order: 1, new_message_content: 'sweep seed again?', search_type: 'bm25', stream_response: false }),
    fields: (i) => [
      [{ topic_id: i.topic, new_message_content: 'x' }, /message_sort_order/],
      [{ topic_id: i.topic, message_sort_order: 0, new_message_content: 'x' }, /message_sort_order/],
      [{ topic_id: i.topic, message_sort_order: 1 }, /new_message_content/],
    ],
    unknown: () => [['/api/message', { topic_id: MISSING, message_sort_order: 1, new_message_content: 'x', stream_response: false }, 404]],
  },
  {
    route: 'PATCH /api/message',
    scope: 'ds',
    role: 1,
    path: () => '/api/message',
    body: (i) => ({ topic_id: i.topic, search_type: 'bm25', stream_response: false }),
    fields: () => [
      [{}, /topic_id/],
      [{ topic_id: 'x' }, /topic_id/],
    ],
    unknown: () => [['/api/message', { topic_id: MISSING, stream_response: false }, 404]],
  },
  {
    route: 'DELETE /api/message',
    scope: 'ds',
    role: 1,
    path: () => '/api/message',
    body: (i) => ({ topic_id: i.topic, search_type: 'bm25', stream_response: false }),
    fields: () => [
      [{}, /topic_id/],
      [{ topic_id: 'x' }, /topic_id/],
    ],
    unknown: () => [['/api/message', { topic_id: MISSING, stream_response: false }, 404]],
  },
  {
    route: 'GET /api/messages/:topic_id',
    scope: 'ds',
    role: 0,
    path: (i) => `/api/messages/${i.topic}`,
    badParams: () => [['/api/messages/abc', /topic_id/]],
    unknown: () => [[`/api/messages/${MISSING}`, undefined, 404]],
  },
  {
    route: 'GET /api/message/:message_id',
    scope: 'ds',
    role: 0,
    path: (i) => `/api/message/${i.message}`,
    badParams: () => [['/api/message/abc', /message_id/]],
    unknown: () => [[`/api/message/${MISSING}`, undefined, 404]],
  },
  {
    route: 'GET /api/chunk/tracking_id/:tracking_id',
    scope: 'ds',
    role: 0,
    path: (i) => `/api/chunk/tracking_id/${i.chunkTracking}`,
    unknown: () => [['/api/chunk/tracking_id/no-such-chunk', undefined, 404]],
  },
  {
    route: 'DELETE /api/chunk/tracking_id/:tracking_id',
    scope: 'ds',
    role: 1,
    destructive: true,
    path: (i) => `/api/chunk/tracking_id/${i.chunkTracking}`,
    unknown: () => [['/api/chunk/tracking_id/no-such-chunk', undefined, 404]],
  },
  {
    route: 'GET /api/chunk/:chunk_id',
    scope: 'ds',
    role: 0,
    path: (i) => `/api/chunk/${i.chunk}`,
    badParams: () => [['/api/chunk/abc', /chunk_id/]],
    unknown: () => [[`/api/chunk/${MISSING}`, undefined, 404]],
  },
  {
    route: 'DELETE /api/chunk/:chunk_id',
    scope: 'ds',
    role: 1,
    destructive: true,
    path: (i) => `/api/chunk/${i.chunk}`,
    badParams: () => [['/api/chunk/abc', /chunk_id/]],
    unknown: () => [[`/api/chunk/${MISSING}`, undefined, 404]],
  },
  {
    route: 'DELETE /api/chunk',
    scope: 'ds',
    role: 1,
    destructive: true,
    path: () => '/api/chunk',
    body: () => ({ filter: { must: [{ tracking_ids: ['no-such-chunk'] }] } }),
    fields: () => [
      [{}, /filter/],
      [{ filter: null }, /filter/],
      [{ filter: {} }, /filter/],
      [{ filter: 'tag_set' }, /filter/],
      [{ filter: { must: 'x' } }, /must/],
      [{ filter: { must: [{ field: 'nope', match_any: ['x'] }] } }, /nope/],
      [{ filter: { must: [{ field: 'tag_set', range: { gt: 1 } }] } }, /range/],
    ],
  },
  {
    route: 'POST /api/chunk/split',
    scope: 'auth',
    role: 0,
    path: () => '/api/chunk/split',
    body: () => ({ chunk_html: '<h1>Sweep</h1><p>one two three four five six</p>' }),
    fields: () => [
      [{}, /chunk_html/],
      [{ chunk_html: 1 }, /chunk_html/],
      [{ chunk_html: 'x', heading_remove_strings: 'x' }, /heading_remove_strings/],
      [{ chunk_html: 'x', body_remove_strings: [1] }, /body_remove_strings/],
      [{ chunk_html: 'x', body_remove_strings: Array.from({ length: 101 }, () => 'x') }, /body_remove_strings/],
    ],
  },
  {
    route: 'POST /api/chunk_group',
    scope: 'ds',
    role: 1,
    path: () => '/api/chunk_group',
    body: () => ({ name: 'sweep group' }),
    fields: (i) => [
      [{ name: 5 }, /name/],
      [{ description: [] }, /description/],
      [{ tag_set: [1] }, /tag_set/],
      [{ tracking_id: {} }, /tracking_id/],
      [{ tracking_id: WIDE_KEY }, WIDE],
      [{ upsert_by_tracking_id: 1 }, /upsert_by_tracking_id/],
      [{ tracking_id: i.groupTracking }, new RegExp(i.groupTracking)],
      [[], /empty/],
      [[{ name: 'a' }, { description: 5 }], /\[1\]\.description/],
      [Array.from({ length: 1001 }, () => ({})), /1000/, 413],
    ],
  },
  {
    route: 'PUT /api/chunk_group',
    scope: 'ds',
    role: 1,
    path: () => '/api/chunk_group',
    body: (i) => ({ group_id: i.group, description: 'sweep' }),
    fields: (i) => [
      [{}, /group_id|tracking_id/],
      [{ group_id: 'x' }, /group_id/],
      [{ group_id: i.group, name: 5 }, /name/],
      [{ group_id: i.group, tag_set: 'a,b', metadata: 1, description: 2 }, /description/],
    ],
    unknown: () => [
      ['/api/chunk_group', { group_id: MISSING, name: 'x' }, 404],
      ['/api/chunk_group', { tracking_id: 'no-such-group', name: 'x' }, 404],
    ],
  },
  {
    route: 'POST /api/chunk_group/chunks',
    scope: 'ds',
    role: 0,
    path: () => '/api/chunk_group/chunks',
    body: (i) => ({ chunk_ids: [i.chunk] }),
    fields: () => [
      [{ chunk_ids: 'x' }, /chunk_ids/],
      [{ chunk_ids: ['x'] }, /chunk_ids/],
      [{ chunk_tracking_ids: [1] }, /chunk_tracking_ids/],
    ],
    unknown: () => [
      ['/api/chunk_group/chunks', { chunk_ids: [MISSING] }, 404],
      ['/api/chunk_group/chunks', {}, 404],
    ],
  },
  {
    route: 'POST /api/chunk_group/recommend',
    scope: 'ds',
    role: 0,
    path: () => '/api/chunk_group/recommend',
    body: () => ({ positive_group_tracking_ids: ['sweep-group'], recommend_type: 'bm25' }),
    fields: () => [
      [{}, /positive/],
      [{ positive_group_ids: ['g1'] }, /positive_group_ids/],
      [{ positive_group_tracking_ids: 'sweep-group' }, /positive_group_tracking_ids/],
      [{ positive_group_tracking_ids: ['sweep-group'], group_size: -1 }, /group_size/],
      [{ positive_group_tracking_ids: ['sweep-group'], group_size: 1e9 }, /group_size/],
      [{ positive_group_tracking_ids: ['sweep-group'], strategy: 'nearest' }, /strategy/],
      [{ positive_group_tracking_ids: ['sweep-group'], limit: 'ten' }, /limit/],
    ],
    unknown: (i) => [
      ['/api/chunk_group/recommend', { positive_group_ids: [MISSING] }, 404],
      ['/api/chunk_group/recommend', { positive_group_ids: [i.group], negative_group_tracking_ids: ['no-such-group'] }, 404],
    ],
  },
  {
    route: 'POST /api/chunk_group/search',
    scope: 'ds',
    role: 0,
    path: () => '/api/chunk_group/search',
    body: () => ({ query: 'sweep', search_type: 'bm25', group_tracking_id: 'sweep-group' }),
    fields: () => [
      [{}, /group_id|query|search_type/],
      [{ query: 'x', search_type: 'bm25' }, /group_id or group_tracking_id/],
      [{ query: 'x', search_type: 'bm25', group_id: 'g1' }, /group_id/],
      [{ query: 'x', group_tracking_id: 'sweep-group' }, /search_type/],
      [{ search_type: 'bm25', group_tracking_id: 'sweep-group' }, /query/],
      [{ query: 'x', search_type: 'bm25', group_tracking_id: 'sweep-group', page_size: 'ten' }, /page_size/],
      [{ query: 'x', search_type: 'bm25', group_tracking_id: 'sweep-group', page: 'x' }, /page/],
      [{ query: 'x', search_type: 'bm25', group_tracking_id: 'sweep-group', filters: 'x' }, /filters/],
      [{ query: '  ', search_type: 'bm25', group_tracking_id: 'sweep-group' }, /[Qq]uery/],
    ],
    unknown: () => [
      ['/api/chunk_group/search', { query: 'x', search_type: 'bm25', group_id: MISSING }, 404],
      ['/api/chunk_group/search', { query: 'x', search_type: 'bm25', group_tracking_id: 'no-such-group' }, 404],
    ],
  },
  {
    route: 'POST /api/chunk_group/group_oriented_search',
    scope: 'ds',
    role: 0,
    path: () => '/api/chunk_group/group_oriented_search',
    body: () => ({ query: 'sweep', search_type: 'bm25' }),
    fields: () => [
      [{}, /search_type|query/],
      [{ query: 'x' }, /search_type/],
      [{ query: 'x', search_type: 'bm25', group_size: -1 }, /group_size/],
      [{ query: 'x', search_type: 'bm25', group_size: 'three' }, /group_size/],
      [{ query: 'x', search_type: 'bm25', group_size: 1e9 }, /group_size/],
      [{ query: 'x', search_type: 'bm25', page_size: -1 }, /page_size/],
      [{ query: 'x', search_type: 'bm25', filters: { must: 'x' } }, /filters/],
      [{ query: 'x', search_type: 'bm25', sort_options: { sort_by: { field: 'chunk_html' } } }, /sort_by/],
    ],
  },
  {
    route: 'POST /api/chunk_group/group_oriented_autocomplete',
    scope: 'ds',
    role: 0,
    path: () => '/api/chunk_group/group_oriented_autocomplete',
    body: () => ({ query: 'swe', search_type: 'bm25' }),
    fields: () => [
      [{}, /search_type|query/],
      [{ query: 'x' }, /search_type/],
      [{ query: '  ', search_type: 'bm25' }, /Query cannot be empty/],
      [{ query: 'x', search_type: 'bm25', group_size: -1 }, /group_size/],
      [{ query: 'x', search_type: 'bm25', group_size: 1e9 }, /group_size/],
      [{ query: 'x', search_type: 'bm25', page_size: -1 }, /page_size/],
      [{ query: 'x', search_type: 'bm25', extend_results: 'yes' }, /extend_results/],
      [{ query: 'x', search_type: 'bm25', filters: { must: 'x' } }, /filters/],
    ],
  },
  {
    route: 'POST /api/chunk_group/chunk/:group_id',
    scope: 'ds',
    role: 1,
    path: (i) => `/api/chunk_group/chunk/${i.group}`,
    body: (i) => ({ chunk_id: i.chunk }),
    fields: () => [
      [{}, /chunk_id/],
      [{ chunk_id: 'x' }, /chunk_id/],
      [{ chunk_tracking_id: 5 }, /chunk_tracking_id/],
    ],
    badParams: () => [['/api/chunk_group/chunk/g1', /group_id/]],
    unknown: (i) => [
      [`/api/chunk_group/chunk/${MISSING}`, { chunk_id: i.chunk }, 404],
      [`/api/chunk_group/chunk/${i.group}`, { chunk_id: MISSING }, 404],
      [`/api/chunk_group/chunk/${i.group}`, { chunk_tracking_id: 'no-such-chunk' }, 404],
    ],
  },
  {
    route: 'DELETE /api/chunk_group/chunk/:group_id',
    scope: 'ds',
    role: 1,
    path: (i) => `/api/chunk_group/chunk/${i.group}`,
    body: (i) => ({ chunk_id: i.chunk }),
    destructive: true,
    fields: () => [
      [{}, /chunk_id/],
      [{ chunk_id: 'x' }, /chunk_id/],
    ],
    badParams: () => [['/api/chunk_group/chunk/g1', /group_id/]],
    unknown: (i) => [
      [`/api/chunk_group/chunk/${MISSING}`, { chunk_id: i.chunk }, 404],
      [`/api/chunk_group/chunk/${i.group}`, { chunk_id: MISSING }, 404],
    ],
  },
  {
    route: 'GET /api/chunk_group/tracking_id/:tracking_id/:page',
    scope: 'ds',
    role: 0,
    path: (i) => `/api/chunk_group/tracking_id/${i.groupTracking}/1`,
    badParams: (i) => [[`/api/chunk_group/tracking_id/${i.groupTracking}/one`, /page/]],
    unknown: () => [['/api/chunk_group/tracking_id/no-such-group/1', undefined, 404]],
  },
  {
    route: 'GET /api/chunk_group/tracking_id/:tracking_id',
    scope: 'ds',
    role: 0,
    path: (i) => `/api/chunk_group/tracking_id/${i.groupTracking}`,
    unknown: () => [['/api/chunk_group/tracking_id/no-such-group', undefined, 404]],
  },
  {
    route: 'POST /api/chunk_group/tracking_id/:tracking_id',
    scope: 'ds',
    role: 1,
    path: (i) => `/api/chunk_group/tracking_id/${i.groupTracking}`,
    body: (i) => ({ chunk_id: i.chunk }),
    fields: () => [
      [{}, /chunk_id/],
      [{ chunk_id: 'nope' }, /chunk_id/],
    ],
    unknown: (i) => [
      ['/api/chunk_group/tracking_id/no-such-group', { chunk_id: i.chunk }, 404],
      [`/api/chunk_group/tracking_id/${i.groupTracking}`, { chunk_id: MISSING }, 404],
    ],
  },
  {
    route: 'PUT /api/chunk_group/tracking_id/:tracking_id',
    scope: 'ds',
    role: 1,
    path: (i) => `/api/chunk_group/tracking_id/${i.groupTracking}`,
    body: () => ({ description: 'sweep' }),
    fields: () => [
      [{ name: 5 }, /name/],
      [{ metadata: JSON.parse('['.repeat(129) + ']'.repeat(129)) }, /deep/],
    ],
    unknown: () => [['/api/chunk_group/tracking_id/no-such-group', { name: 'x' }, 404]],
  },
  {
    route: 'DELETE /api/chunk_group/tracking_id/:tracking_id',
    scope: 'ds',
    role: 1,
    destructive: true,
    path: (i) => `/api/chunk_group/tracking_id/${i.groupTracking}`,
    badParams: (i) => [[`/api/chunk_group/tracking_id/${i.groupTracking}?delete_chunks=perhaps`, /delete_chunks/]],
    unknown: () => [['/api/chunk_group/tracking_id/no-such-group', undefined, 404]],
  },
  {
    route: 'GET /api/chunk_group/:group_id/:page',
    scope: 'ds',
    role: 0,
    path: (i) => `/api/chunk_group/${i.group}/1`,
    badParams: (i) => [
      ['/api/chunk_group/not-a-group/1', /group_id/],
      [`/api/chunk_group/${i.group}/1.5`, /page/],
    ],
    unknown: () => [[`/api/chunk_group/${MISSING}/1`, undefined, 404]],
  },
  {
    route: 'GET /api/chunk_group/:group_id',
    scope: 'ds',
    role: 0,
    path: (i) => `/api/chunk_group/${i.group}`,
    badParams: () => [['/api/chunk_group/not-a-group', /group_id/]],
    unknown: () => [[`/api/chunk_group/${MISSING}`, undefined, 404]],
  },
  {
    route: 'DELETE /api/chunk_group/:group_id',
    scope: 'ds',
    role: 1,
    destructive: true,
    path: (i) => `/api/chunk_group/${i.group}`,
    badParams: (i) => [
      ['/api/chunk_group/not-a-group', /group_id/],
      [`/api/chunk_group/${i.group}?delete_chunks=2`, /delete_chunks/],
    ],
    unknown: () => [[`/api/chunk_group/${MISSING}`, undefined, 404]],
  },
  {
    route: 'PUT /api/analytics/events',
    scope: 'ds',
    role: 1,
    // Valid, it stores an event: the sweep's store snapshots would see it.
    destructive: true,
    path: () => '/api/analytics/events',
    body: () => ({ event_type: 'view', event_name: 'sweep', items: ['a'] }),
    fields: (i) => [
      [{}, /event_type/],
      [{ event_type: 'hover', event_name: 'x' }, /event_type/],
      [{ event_type: 'view', items: [] }, /event_name/],
      [{ event_type: 'view', event_name: WIDE_KEY, items: ['a'] }, WIDE],
      [{ event_type: 'view', event_name: 'x' }, /items/],
      [{ event_type: 'view', event_name: 'x', items: [], request: { request_type: 'search' } }, /request\.request_id/],
      [{ event_type: 'click', event_name: 'x', clicked_items: { chunk_id: 'nope', position: 1 } }, /clicked_items\.chunk_id/],
      [{ event_type: 'click', event_name: 'x', clicked_items: { chunk_id: i.chunk, position: -1 } }, /position/],
      [{ event_type: 'purchase', event_name: 'x', items: [{ tracking_id: 't' }] }, /items\[0\]\.revenue/],
      [{ event_type: 'search', query: 'q' }, /tokens/],
      [{ event_type: 'rag', tokens: 1 }, /user_message/],
      [{ event_type: 'recommendation', recommendation_type: 'chunk' }, /recommendation_type/],
    ],
  },
  {
    route: 'POST /api/analytics/events/all',
    scope: 'ds',
    role: 1,
    bodyOptional: true,
    path: () => '/api/analytics/events/all',
    body: () => ({ page: 1 }),
    fields: () => [
      [{ page: -1 }, /page/],
      [{ page: 'x' }, /page/],
      [{ filter: { event_type: 'search' } }, /filter\.event_type/],
      [{ filter: { is_conversion: 'yes' } }, /filter\.is_conversion/],
      [{ filter: { date_range: { gt: 'nope' } } }, /filter\.date_range\.gt/],
      [{ filter: { date_range: { gt: '2025-02-01', lt: '2025-01-01' } } }, /date_range is empty/],
      [{ filter: { metadata_filter: 'color' } }, /metadata_filter/],
      [{ filter: { metadata_filter: 'color = red' } }, /metadata_filter/],
      [{ filter: { metadata_filter: 'a = {"b":1}' } }, /metadata_filter/],
    ],
  },
  {
    route: 'GET /api/analytics/events/:event_id',
    scope: 'ds',
    role: 1,
    path: (i) => `/api/analytics/events/${i.event}`,
    badParams: () => [['/api/analytics/events/abc', /event_id/]],
    unknown: () => [[`/api/analytics/events/${MISSING}`, undefined, 404]],
  },
  {
    route: 'PUT /api/analytics/ctr',
    scope: 'ds',
    role: 1,
    destructive: true,
    path: () => '/api/analytics/ctr',
    body: (i) => ({ request_id: MISSING, ctr_type: 'search', clicked_chunk_id: i.chunk, position: 1 }),
    fields: (i) => [
      [{ ctr_type: 'search', clicked_chunk_id: i.chunk, position: 1 }, /request_id/],
      [{ request_id: MISSING, ctr_type: 'chat', clicked_chunk_id: i.chunk, position: 1 }, /ctr_type/],
      [{ request_id: MISSING, ctr_type: 'search', clicked_chunk_id: i.chunk }, /position/],
      [{ request_id: MISSING, ctr_type: 'search', position: 1 }, /clicked_chunk_id or clicked_chunk_tracking_id/],
      [{ request_id: MISSING, ctr_type: 'search', clicked_chunk_id: 'x', position: 1 }, /clicked_chunk_id/],
      [{ request_id: MISSING, ctr_type: 'search', clicked_chunk_id: i.chunk, position: -1 }, /position/],
    ],
    unknown: () => [['/api/analytics/ctr', { request_id: MISSING, ctr_type: 'search', clicked_chunk_tracking_id: 'sweep-missing', position: 1 }, 404]],
  },
  {
    route: 'POST /api/analytics/search',
    scope: 'ds',
    role: 1,
    path: () => '/api/analytics/search',
    body: () => ({ type: 'search_metrics', filter: { search_method: 'bm25' } }),
    fields: () => [
      [{}, /type must be one of latency_graph, .*search_revenue/],
      [{ type: 'nope' }, /type must be one of/],
      [{ type: 'search_metrics', filter: { search_type: 'rag' } }, /filter\.search_type: search_type must be one of/],
      [{ type: 'latency_graph', filter: { date_range: { gte: '2025-02-01', lt: '2025-01-01' } } }, /date_range is empty/],
      [{ type: 'latency_graph', granularity: 'week' }, /granularity/],
      [{ type: 'head_queries', page: -1 }, /page must be 0 or more/],
      [{ type: 'search_queries', sort_by: 'query' }, /sort_by must be one of created_at, latency, top_score/],
      [{ type: 'search_metrics', filter: { top_score: { gt: 0.9, lt: 0.1 } } }, /range is empty/],
      [{ type: 'search_metrics', filter: { query_rating: { gte: 'high' } } }, /query_rating/],
      [{ type: 'query_details', request_id: 'x' }, /request_id: must be a UUID/],
    ],
    unknown: () => [['/api/analytics/search', { type: 'query_details', request_id: MISSING }, 404]],
  },
  ...(['search', 'rag'] as const).map(
    (kind): RouteCase => ({
      route: `PUT /api/analytics/${kind}`,
      scope: 'ds',
      role: 1,
      destructive: true,
      path: () => `/api/analytics/${kind}`,
      body: () => ({ query_id: '00000000-0000-4000-8000-000000000001', rating: 1 }),
      fields: () => [
        [{ rating: 1 }, /query_id/],
        [{ query_id: 'x', rating: 1 }, /query_id: must be a UUID/],
        [{ query_id: MISSING }, /rating/],
        [{ query_id: MISSING, rating: 1.5 }, /rating must be an integer/],
        [{ query_id: MISSING, rating: 2147483648 }, /rating must be at most 2147483647/],
        [{ query_id: MISSING, rating: 1, note: 'x'.repeat(4097) }, /note: must be at most 4096 bytes/],
        [{ query_id: MISSING, rating: 1, note: 5 }, /note/],
      ],
    }),
  ),
  {
    route: 'POST /api/analytics/rag',
    scope: 'ds',
    role: 1,
    path: () => '/api/analytics/rag',
    body: () => ({ type: 'rag_usage' }),
    fields: () => [
      [{ type: 'nope' }, /type: must be one of rag_queries/],
      [{}, /type: must be one of/],
      [[], /body must be a JSON object/],
      [{ type: 'rag_queries', filter: { rag_type: 'x' } }, /rag_type must be one of chosen_chunks, all_chunks/],
      [{ type: 'rag_queries', filter: { date_range: { gt: '2024-03-05', lt: '2024-03-01' } } }, /date_range is empty/],
      [{ type: 'rag_queries', page: -1 }, /page must be 0 or more/],
      [{ type: 'rag_queries', sort_by: 'latency' }, /sort_by must be one of/],
      [{ type: 'rag_usage_graph', granularity: 'week' }, /granularity/],
      [{ type: 'rag_query_details', request_id: 'abc' }, /request_id: must be a UUID/],
      [{ type: 'chat_revenue', direct: 'yes' }, /direct/],
    ],
    unknown: () => [
      ['/api/analytics/rag', { type: 'rag_query_details', request_id: MISSING }, 404],
      ['/api/analytics/rag', { type: 'topic_details', topic_id: MISSING }, 404],
      ['/api/analytics/rag', { type: 'events_for_topic', topic_id: MISSING }, 404],
    ],
  },
  {
    route: 'POST /api/analytics/recommendations',
    scope: 'ds',
    role: 1,
    path: () => '/api/analytics/recommendations',
    body: () => ({ type: 'event_funnel' }),
    fields: () => [
      [{ type: 'x' }, /type: must be one of low_confidence_recommendations/],
      [{ type: 42 }, /type: must be one of/],
      [{ type: 'recommendation_queries', filter: { recommendation_type: 'chunk' } }, /recommendation_type must be one of Chunk, Group/],
      [{ type: 'recommendation_queries', filter: { top_score: { gt: 0.9, lt: 0.1 } } }, /range is empty/],
      [{ type: 'recommendation_queries', page: -2 }, /page must be 0 or more/],
      [{ type: 'recommendation_queries', sort_by: 'latency' }, /sort_by must be one of created_at, top_score/],
      [{ type: 'low_confidence_recommendations', threshold: 'low' }, /threshold/],
      [{ type: 'query_details', request_id: 'x' }, /request_id: must be a UUID/],
    ],
    unknown: () => [['/api/analytics/recommendations', { type: 'query_details', request_id: MISSING }, 404]],
  },
  {
    route: 'POST /api/analytics/events/ctr',
    scope: 'ds',
    role: 1,
    path: () => '/api/analytics/events/ctr',
    body: () => ({ type: 'search_ctr_metrics' }),
    fields: () => [
      [{ type: 'clicks_per_day' }, /type must be one of search_ctr_metrics/],
      [{}, /type must be one of/],
      [{ type: 7 }, /type must be one of/],
      [['search_ctr_metrics'], /expected object/],
      [{ type: 'searches_with_clicks', page: -1 }, /page must be 0 or more/],
      [{ type: 'searches_without_clicks', page: 'two' }, /page: .*expected number/],
      [{ type: 'search_ctr_metrics', filter: { date_range: { gt: '2024-02-01', lt: '2024-01-01' } } }, /date_range is empty/],
      [{ type: 'search_ctr_metrics', filter: { date_range: { gte: 'last week' } } }, /Invalid timestamp format/],
      [{ type: 'searches_with_clicks', filter: { search_type: 'x' } }, /search_type must be one of/],
      [{ type: 'recommendation_ctr_metrics', filter: { recommendation_type: 'chunk' } }, /recommendation_type must be Chunk or Group/],
    ],
  },
  {
    route: 'POST /api/analytics/top',
    scope: 'org',
    role: 1,
    path: () => '/api/analytics/top',
    body: () => ({ type: 'search' }),
    fields: () => [
      [{ type: 'clicks' }, /type must be one of search, rag, recommendation/],
      [{}, /type must be one of/],
      [{ type: ['search'] }, /type must be one of/],
      [{ type: 'rag', date_range: { gte: '2024-02-01', lte: '2024-01-01' } }, /date_range is empty/],
      [{ type: 'search', date_range: 5 }, /date_range: .*expected object/],
      [{ type: 'search', date_range: { lt: 'soon' } }, /Invalid timestamp format/],
      [[], /expected object/],
    ],
  },
  {
    route: 'POST /api/experiment',
    scope: 'ds',
    role: 1,
    destructive: true,
    path: () => '/api/experiment',
    body: () => ({ name: 'sweep exp', experiment_config: EXPERIMENT_CONFIG }),
    fields: () => [
      [{}, /name/],
      [{ name: 'x' }, /experiment_config/],
      [{ name: 'x', experiment_config: { ...EXPERIMENT_CONFIG, t1_split: 0.6 } }, /must sum to 1/],
      [{ name: 'x', experiment_config: { ...EXPERIMENT_CONFIG, t1_split: -0.5, control_split: 1.5 } }, /t1_split: must be a fraction/],
      [{ name: 'x', experiment_config: { ...EXPERIMENT_CONFIG, t1_split: '0.5' } }, /t1_split/],
      [{ name: 'x', experiment_config: { ...EXPERIMENT_CONFIG, t1_name: 'ctl' } }, /must differ/],
      [{ name: 'x', experiment_config: { ...EXPERIMENT_CONFIG, area: '' } }, /area: must not be empty/],
      [{ name: 'n'.repeat(257), experiment_config: EXPERIMENT_CONFIG }, /name: must be at most 256/],
    ],
  },
  { route: 'GET /api/experiment', scope: 'ds', role: 1, path: () => '/api/experiment' },
  {
    route: 'GET /api/experiment/:experiment_id',
    scope: 'ds',
    role: 1,
    path: (i) => `/api/experiment/${i.experiment}`,
    badParams: () => [['/api/experiment/abc', /experiment_id/]],
    unknown: () => [[`/api/experiment/${MISSING}`, undefined, 404]],
  },
  {
    route: 'GET /api/experiment/:experiment_id/results',
    scope: 'ds',
    role: 1,
    path: (i) => `/api/experiment/${i.experiment}/results`,
    badParams: () => [['/api/experiment/abc/results', /experiment_id/]],
    unknown: () => [[`/api/experiment/${MISSING}/results`, undefined, 404]],
  },
  {
    route: 'DELETE /api/experiment/:experiment_id',
    scope: 'ds',
    role: 1,
    destructive: true,
    path: (i) => `/api/experiment/${i.experiment}`,
    badParams: () => [['/api/experiment/abc', /experiment_id/]],
    unknown: () => [[`/api/experiment/${MISSING}`, undefined, 404]],
  },
  {
    route: 'PUT /api/experiment',
    scope: 'ds',
    role: 2,
    destructive: true,
    path: () => '/api/experiment',
    body: (i) => ({ id: i.experiment, name: 'renamed' }),
    fields: (i) => [
      [{ name: 'x' }, /id/],
      [{ id: 'x' }, /id: must be a UUID/],
      [{ id: i.experiment, name: ' ' }, /name: must not be empty/],
      [{ id: i.experiment, experiment_config: { ...EXPERIMENT_CONFIG, area: 'other' } }, /area cannot be updated/],
      [{ id: i.experiment, experiment_config: { ...EXPERIMENT_CONFIG, control_split: 0.2 } }, /must sum to 1/],
      [{ id: i.experiment, experiment_config: { t1_name: 'a' } }, /t1_split/],
    ],
    unknown: () => [['/api/experiment', { id: MISSING, name: 'x' }, 404]],
  },
  {
    route: 'POST /api/experiment/ab-test',
    scope: 'ds',
    role: 2,
    destructive: true,
    path: () => '/api/experiment/ab-test',
    body: (i) => ({ experiment_id: i.experiment, user_id: 'sweep-user' }),
    fields: (i) => [
      [{ user_id: 'u' }, /experiment_id/],
      [{ experiment_id: 'x', user_id: 'u' }, /experiment_id: must be a UUID/],
      [{ experiment_id: i.experiment }, /user_id/],
      [{ experiment_id: i.experiment, user_id: '' }, /user_id: must not be empty/],
      [{ experiment_id: i.experiment, user_id: 'u'.repeat(1025) }, /user_id: must be at most 1024/],
      [{ experiment_id: i.experiment, user_id: 5 }, /user_id/],
    ],
    unknown: () => [['/api/experiment/ab-test', { experiment_id: MISSING, user_id: 'u' }, 404]],
  },
];

/** `METHOD /path` of every route registered in facade/routes (read from the source). */
function registeredRoutes(): string[] {
  const dir = path.join(ROOT, 'facade/routes');
  const out: string[] = [];
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    const text = fs.readFileSync(path.join(dir, file), 'utf8');
    for (const m of text.matchAll(/router\.(get|post|put|patch|delete)\(\s*'([^']+)'/g)) out.push(`${m[1]!.toUpperCase()} ${m[2]}`);
  }
  return out.sort();
}

let stack: Stack;
let t: Tenant;
let other: Tenant;
let ids: Ids;
let readKey: string;
let adminKey: string;
/** Owner-role key restricted to a second dataset of the organization. */
let restrictedKey: string;
/** Owner-role key whose scopes allow only GET /api/auth/me. */
let scopedKey: string;

beforeAll(async () => {
  stack = await startStack({ env: { QUARRY_BODY_LIMIT_BYTES: String(BODY_LIMIT) } });
  t = await createTenant(stack);
  other = await createTenant(stack);
  readKey = await createKey(stack, t.orgId, { role: 0 });
  adminKey = await createKey(stack, t.orgId, { role: 1 });
  const second = await t.org.post('/api/dataset', { dataset_name: 'sweep second' });
  expect(second.status, second.text).toBe(200);
  restrictedKey = await createKey(stack, t.orgId, { role: 2, dataset_ids: [second.body.id] });
  scopedKey = await createKey(stack, t.orgId, { role: 2, scopes: ['GET /api/auth/me'] });
  const dsTracking = 'sweep-ds-tracking';
  const upd = await t.org.put('/api/dataset', { dataset_id: t.datasetId, new_tracking_id: dsTracking });
  expect(upd.status, upd.text).toBe(200);
  const chunk = await t.ds.post('/api/chunk', { chunk_html: 'sweep seed', tracking_id: 'sweep-chunk', tag_set: ['t'] });
  expect(chunk.status, chunk.text).toBe(200);
  const group = await t.ds.post('/api/chunk_group', { name: 'sweep group', tracking_id: 'sweep-group' });
  expect(group.status, group.text).toBe(200);
  expect((await t.ds.post(`/api/chunk_group/chunk/${group.body.id}`, { chunk_id: chunk.body.chunk_metadata.id })).status).toBe(204);
  const keys = await t.org.get('/api/organization/api_key');
  const topic = await t.ds.post('/api/topic', { owner_id: 'sweep-owner', name: 'sweep topic' });
  expect(topic.status, topic.text).toBe(200);
  // One question and its answer, so that editing and regenerating have something to work on.
  const asked = await t.ds.post('/api/message', { topic_id: topic.body.id, new_message_content: 'sweep seed?', search_type: 'bm25', stream_response: false });
  expect(asked.status, asked.text).toBe(200);
  // The sweep edits the first topic's messages (PUT /api/message from sort order 1 replaces them all).
  const quiet = await t.ds.post('/api/topic', { owner_id: 'sweep-owner', name: 'sweep topic kept' });
  expect(quiet.status, quiet.text).toBe(200);
  const quietAsked = await t.ds.post('/api/message', { topic_id: quiet.body.id, new_message_content: 'kept?', search_type: 'bm25', stream_response: false });
  expect(quietAsked.status, quietAsked.text).toBe(200);
  const kept = await t.ds.get(`/api/messages/${quiet.body.id}`);
  expect(kept.status, kept.text).toBe(200);
  const file = await t.ds.post('/api/file/csv_or_jsonl', { file_name: 'sweep.csv' });
  expect(file.status, file.text).toBe(200);
  const event = await t.ds.put('/api/analytics/events', { event_type: 'view', event_name: 'sweep view', items: ['a'] });
  expect(event.status, event.text).toBe(204);
  const experiment = await t.ds.post('/api/experiment', { name: 'sweep experiment', experiment_config: EXPERIMENT_CONFIG });
  expect(experiment.status, experiment.text).toBe(200);
  ids = {
    event: event.headers.get('tr-event-id')!,
    experiment: experiment.body.id,
    file: file.body.file_metadata.id,
    org: t.orgId,
    ds: t.datasetId,
    dsTracking,
    chunk: chunk.body.chunk_metadata.id,
    chunkTracking: 'sweep-chunk',
    group: group.body.id,
    groupTracking: 'sweep-group',
    key: keys.body[0].id,
    topic: topic.body.id,
    message: kept.body[0].id,
  };
});
afterAll(async () => {
  await stack?.stop();
});

/** Headers that give a valid request its tenant, with the given key. */
function tenantHeaders(rc: RouteCase, key: string | undefined): Record<string, string | undefined> {
  const h: Record<string, string | undefined> = { authorization: key };
  if (rc.scope === 'ds') h['tr-dataset'] = ids.ds;
  if (rc.scope === 'org' || rc.scope === 'dsBody') h['tr-organization'] = ids.org;
  return h;
}

/** Every 5xx answer seen anywhere in the sweep. */
const serverErrors: string[] = [];
let sent = 0;

const send = async (rc: RouteCase, opts: { path?: string; body?: unknown; raw?: string; headers?: Record<string, string | undefined> }) => {
  const [method] = rc.route.split(' ');
  const p = opts.path ?? rc.path(ids);
  const res = await request(stack.baseUrl, method!, p, {
    body: opts.raw === undefined ? opts.body : undefined,
    raw: opts.raw,
    headers: opts.headers,
  });
  sent++;
  if (res.status >= 500) serverErrors.push(`${method} ${p} → ${res.status} ${res.text}`);
  return res;
};

const ownerKeyFor = (rc: RouteCase) => (rc.scope === 'operator' || rc.asOperator ? stack.adminKey : t.ownerKey);

it('every route registered in facade/routes has a sweep entry (and every entry is registered)', () => {
  const table = ROUTES.map((r) => r.route).sort();
  expect(new Set(table).size).toBe(table.length);
  expect(table).toEqual(registeredRoutes());
});

describe.each(ROUTES.filter((r) => r.scope !== 'public'))('$route', (rc) => {
  const bodyFor = () => rc.body?.(ids);

  it('no credentials or a wrong key: 401', async () => {
    for (const key of [undefined, 'tr-' + 'A'.repeat(32), 'Bearer ']) {
      await expectRejected(stack, () => send(rc, { body: bodyFor(), headers: tenantHeaders(rc, key) }), 401);
    }
  });

  if (rc.scope === 'operator') {
    it('an organization owner key is not the operator: 401', async () => {
      await expectRejected(stack, () => send(rc, { body: bodyFor(), headers: { authorization: t.ownerKey } }), 401);
    });
  }

  if (rc.scope === 'ds') {
    it('TR-Dataset missing (400), unknown (404), a tracking id without TR-Organization (400), non-UUID TR-Organization (400)', async () => {
      const body = bodyFor();
      await expectRejected(stack, () => send(rc, { body, headers: { authorization: t.ownerKey } }), 400, /TR-Dataset/);
      await expectRejected(stack, () => send(rc, { body, headers: { authorization: t.ownerKey, 'tr-dataset': MISSING } }), 404);
      await expectRejected(stack, () => send(rc, { body, headers: { authorization: t.ownerKey, 'tr-dataset': ids.dsTracking } }), 400, /TR-Organization/);
      await expectRejected(
        stack,
        () => send(rc, { body, headers: { authorization: t.ownerKey, 'tr-dataset': ids.ds, 'tr-organization': 'org-1' } }),
        400,
        /Organization/,
      );
    });
  }

  if (rc.scope === 'org') {
    it('TR-Organization missing or malformed (400), unknown (404)', async () => {
      const body = bodyFor();
      await expectRejected(stack, () => send(rc, { body, headers: { authorization: t.ownerKey } }), 400, /TR-Organization/);
      await expectRejected(stack, () => send(rc, { body, headers: { authorization: t.ownerKey, 'tr-organization': 'acme' } }), 400, /Organization/);
      await expectRejected(stack, () => send(rc, { body, headers: { authorization: t.ownerKey, 'tr-organization': MISSING } }), 404);
    });
  }

  if (rc.scope === 'dsBody') {
    it('malformed TR-Organization (400); a tracking id needs the right organization (404)', async () => {
      const body = bodyFor();
      await expectRejected(stack, () => send(rc, { body, headers: { authorization: t.ownerKey, 'tr-organization': 'acme' } }), 400, /Organization/);
      await expectRejected(
        stack,
        () => send(rc, { body: { tracking_id: ids.dsTracking, dataset_name: 'x' }, headers: { authorization: t.ownerKey, 'tr-organization': other.orgId } }),
        404,
      );
      await expectRejected(stack, () => send(rc, { body: { tracking_id: ids.dsTracking, dataset_name: 'x' }, headers: { authorization: t.ownerKey } }), 400, /TR-Organization/);
    });
  }

  if (['ds', 'dsPath', 'dsBody', 'org', 'orgPath'].includes(rc.scope)) {
    it("a key of another organization: 404, as if absent (a 403 would confirm it exists)", async () => {
      await expectRejected(stack, () => send(rc, { body: bodyFor(), headers: tenantHeaders(rc, other.ownerKey) }), 404);
    });
  }

  if (rc.route !== 'GET /api/auth/me') {
    it('a key whose scopes do not include the route: 403', async () => {
      await expectRejected(stack, () => send(rc, { body: bodyFor(), headers: tenantHeaders(rc, scopedKey) }), 403, /scope/);
    });
  }

  if (['ds', 'dsPath', 'dsBody'].includes(rc.scope)) {
    it('a key restricted to another dataset: 403', async () => {
      await expectRejected(stack, () => send(rc, { body: bodyFor(), headers: tenantHeaders(rc, restrictedKey) }), 403, /restricted/);
    });
  }

  if (rc.role >= 1 && rc.scope !== 'operator') {
    it(`a read key is below the required role ${rc.role}: 403`, async () => {
      await expectRejected(stack, () => send(rc, { body: bodyFor(), headers: tenantHeaders(rc, readKey) }), 403, /role/);
    });
  }
  if (rc.role === 2 && rc.scope !== 'operator') {
    it('an admin key is below owner: 403', async () => {
      await expectRejected(stack, () => send(rc, { body: bodyFor(), headers: tenantHeaders(rc, adminKey) }), 403, /role/);
    });
  }

  if (rc.body) {
    it('malformed JSON: 400 naming JSON', async () => {
      for (const raw of ['{"a":', '{a: 1}', "{'a': 1}", '[1,]', 'undefined', '{"a":1}}']) {
        await expectRejected(stack, () => send(rc, { raw, headers: tenantHeaders(rc, ownerKeyFor(rc)) }), 400, /JSON/i);
      }
    });

    it('JSON of the wrong top-level type: 400', async () => {
      const raws = ['"a string"', '42', 'true', '[1, 2]', ...(rc.bodyOptional ? [] : ['null'])];
      for (const raw of raws) {
        await expectRejected(stack, () => send(rc, { raw, headers: tenantHeaders(rc, ownerKeyFor(rc)) }), 400);
      }
    });

    if (!rc.bodyOptional) {
      it('no body at all: 400', async () => {
        await expectRejected(stack, () => send(rc, { headers: tenantHeaders(rc, ownerKeyFor(rc)) }), 400);
      });
    }

    it(`a body over the ${BODY_LIMIT}-byte limit: 413`, async () => {
      const valid = bodyFor() as Record<string, unknown>;
      const big = { ...valid, padding: 'x'.repeat(BODY_LIMIT + 10) };
      await expectRejected(stack, () => send(rc, { body: big, headers: tenantHeaders(rc, ownerKeyFor(rc)) }), 413, /limit/);
    });
  }

  if (rc.fields) {
    it('wrong field types and missing fields: 400 naming the field', async () => {
      for (const [body, field, status] of rc.fields!(ids)) {
        const res = await expectRejected(stack, () => send(rc, { body, headers: tenantHeaders(rc, ownerKeyFor(rc)) }), status ?? 400);
        expect(res.body.message, `${JSON.stringify(body).slice(0, 200)} → ${res.text}`).toMatch(field);
      }
    });
  }

  if (rc.badParams) {
    it('non-UUID / non-integer path or query parameters: 400 naming the parameter', async () => {
      for (const [p, name] of rc.badParams!(ids)) {
        await expectRejected(stack, () => send(rc, { path: p, body: bodyFor(), headers: tenantHeaders(rc, ownerKeyFor(rc)) }), 400, name);
      }
    });
  }

  if (rc.unknown) {
    it('unknown ids: 404 (or the documented 400)', async () => {
      for (const [p, body, status] of rc.unknown!(ids)) {
        await expectRejected(stack, () => send(rc, { path: p, body, headers: tenantHeaders(rc, ownerKeyFor(rc)) }), status);
      }
    });
  }
});

describe('the valid request of every non-destructive route succeeds (the table is not vacuous)', () => {
  it.each(ROUTES.filter((r) => !r.destructive && r.scope !== 'operator'))('$route', async (rc) => {
    const res = await send(rc, { body: rc.body?.(ids), headers: tenantHeaders(rc, ownerKeyFor(rc)) });
    // PUT /api/user names a user that is not a member: documented 400. Everything else succeeds.
    if (rc.route === 'PUT /api/user') expect(res.status, res.text).toBe(400);
    else expect(res.status, res.text).toBeLessThan(300);
  });
});

describe('outside the route table', () => {
  it('unknown routes are 404 and unsupported methods 405, each with a message', async () => {
    await expectRejected(stack, () => request(stack.baseUrl, 'GET', '/api/nothing-here', { headers: { authorization: t.ownerKey } }), 404, /nothing-here/);
    await expectRejected(stack, () => request(stack.baseUrl, 'POST', '/api/chunk/not/a/route', { body: {}, headers: { authorization: t.ownerKey } }), 404);
    await expectRejected(
      stack,
      () => request(stack.baseUrl, 'PATCH', '/api/chunk', { body: { chunk_html: 'x' }, headers: { authorization: t.ownerKey, 'tr-dataset': ids.ds } }),
      405,
      /PATCH/,
    );
    await expectRejected(stack, () => request(stack.baseUrl, 'DELETE', '/api/chunks', { headers: { authorization: t.ownerKey, 'tr-dataset': ids.ds } }), 405);
  });

  it('multipart bodies are 415; a body that is not JSON under another content type is 400', async () => {
    const headers = { authorization: t.ownerKey, 'tr-dataset': ids.ds };
    await expectRejected(
      stack,
      () => request(stack.baseUrl, 'POST', '/api/chunk', { raw: '--b\r\n\r\nx\r\n--b--', headers: { ...headers, 'content-type': 'multipart/form-data; boundary=b' } }),
      415,
      /Content-Type/,
    );
    await expectRejected(
      stack,
      () => request(stack.baseUrl, 'POST', '/api/chunk', { raw: 'chunk_html=x', headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' } }),
      400,
      /JSON/,
    );
  });

  it('a body larger than its Content-Length claims or chunked past the limit is refused', async () => {
    const headers = { authorization: t.ownerKey, 'tr-dataset': ids.ds };
    // Streamed without Content-Length.
    const stream = new ReadableStream({
      start(c) {
        for (let i = 0; i < 20; i++) c.enqueue(new TextEncoder().encode('x'.repeat(8192)));
        c.close();
      },
    });
    const before = await snapshotStore(stack);
    const res = await fetch(`${stack.baseUrl}/api/chunk`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: stream, duplex: 'half' } as RequestInit);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { message: string }).message).toMatch(/limit/);
    expect(await snapshotStore(stack)).toEqual(before);
  });
});

it('no route answered 5xx anywhere in the sweep', () => {
  expect(sent).toBeGreaterThan(500);
  expect(serverErrors).toEqual([]);
});
