/** Tenancy fixtures created through the API: organization, owner key, dataset, more keys. */
import { expect } from 'vitest';
import { client, type Client } from './api.js';
import { FAKE_DIM, startFakeEmbeddings, type FakeEmbeddings } from './fake-embeddings.js';
import { startStack, type Stack } from './stack.js';

/** An organization with an owner key and one dataset. */
export interface Tenant {
  orgId: string;
  ownerKey: string;
  datasetId: string;
  /** Admin-key client (ADMIN_API_KEY), no other header. */
  admin: Client;
  /** Owner-key client with TR-Organization set. */
  org: Client;
  /** Owner-key client with TR-Dataset set. */
  ds: Client;
}

let counter = 0;
/** A name unique within this test run. */
export const unique = (prefix: string): string => `${prefix}-${process.pid}-${Date.now().toString(36)}-${++counter}`;

/** Creates an organization as ADMIN_API_KEY. */
export async function createOrganization(stack: Stack, name = unique('org')): Promise<string> {
  const res = await client(stack.baseUrl, { authorization: stack.adminKey }).post('/api/organization', { name });
  expect(res.status, res.text).toBe(200);
  return res.body.id as string;
}

/** Creates an API key in an organization, returning the raw key. */
export async function createKey(
  stack: Stack,
  orgId: string,
  body: Record<string, unknown>,
  asKey: string = stack.adminKey,
): Promise<string> {
  const res = await client(stack.baseUrl, { authorization: asKey, 'tr-organization': orgId }).post('/api/organization/api_key', {
    name: unique('key'),
    ...body,
  });
  expect(res.status, res.text).toBe(200);
  expect(res.body.api_key).toMatch(/^tr-[A-Za-z0-9]{32}$/);
  return res.body.api_key as string;
}

/** Creates a dataset with the given key (an owner key of the organization). */
export async function createDataset(
  stack: Stack,
  orgId: string,
  key: string,
  body: Record<string, unknown> = {},
): Promise<string> {
  const res = await client(stack.baseUrl, { authorization: key, 'tr-organization': orgId }).post('/api/dataset', {
    dataset_name: unique('ds'),
    ...body,
  });
  expect(res.status, res.text).toBe(200);
  return res.body.id as string;
}

/** Organization → owner key → dataset, all through the API. */
export async function createTenant(stack: Stack): Promise<Tenant> {
  const orgId = await createOrganization(stack);
  const ownerKey = await createKey(stack, orgId, { role: 2 });
  const datasetId = await createDataset(stack, orgId, ownerKey);
  return {
    orgId,
    ownerKey,
    datasetId,
    admin: client(stack.baseUrl, { authorization: stack.adminKey }),
    org: client(stack.baseUrl, { authorization: ownerKey, 'tr-organization': orgId }),
    ds: client(stack.baseUrl, { authorization: ownerKey, 'tr-dataset': datasetId }),
  };
}

/** A stack that embeds with a fake OpenAI-compatible server, and a tenant whose dataset uses it. */
export interface FakeEmbeddingSetup {
  fake: FakeEmbeddings;
  stack: Stack;
  tenant: Tenant;
  /** The tenant's dataset configured for the fake server (not `tenant.datasetId`). */
  datasetId: string;
}

/** Starts the fake embedding server and a stack with embedding jobs on (fast retries), then the tenant and its dataset. */
export async function startFakeEmbeddingSetup(env: Record<string, string> = {}): Promise<FakeEmbeddingSetup> {
  const fake = await startFakeEmbeddings();
  const stack = await startStack({ env: { QUARRY_EMBED_JOBS: 'true', QUARRY_EMBED_BACKOFF_MS: '50', ...env } });
  const tenant = await createTenant(stack);
  const datasetId = await createDataset(stack, tenant.orgId, tenant.ownerKey, {
    server_configuration: { EMBEDDING_BASE_URL: fake.baseUrl, EMBEDDING_MODEL_NAME: 'fake', EMBEDDING_SIZE: FAKE_DIM },
  });
  return { fake, stack, tenant, datasetId };
}
