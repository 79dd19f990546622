/**
 * The core's gRPC port as internal services and their tools see it, called from this process
 * (the core runs in its own, with QUARRY_CORE_TOKEN set): Core calls need the bearer token (the
 * HTTP API and job workers send it), while the standard health service (grpc.health.v1) and
 * server reflection (grpc.reflection.v1, which lists and describes the Core service without its
 * .proto file) answer without it, as health probes and schema tools expect.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectCore } from '../../core/client/core-client.js';
import { QuarryError } from '../../core/domain/errors.js';
import { isLoopbackHost, startCoreServer } from '../../core/server.js';
import { loadConfig } from '../../core/config.js';
import { createTenant } from '../helpers/fixtures.js';
import { startStack, type Stack } from '../helpers/stack.js';

const TOKEN = 'test-core-token-0123456789';

const LOAD = { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true } as const;
const reflectionProto = path.join(path.dirname(createRequire(import.meta.url).resolve('@grpc/reflection/package.json')), 'build', 'proto', 'grpc', 'reflection', 'v1', 'reflection.proto');

let stack: Stack;
let address: string;

beforeAll(async () => {
  stack = await startStack({ env: { QUARRY_CORE_TOKEN: TOKEN } });
  address = stack.env.QUARRY_CORE_ADDRESS!;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

/** A client of the first service of `proto` named `name`. */
function client(proto: string, pick: (pkg: any) => grpc.ServiceClientConstructor): grpc.Client {
  const Ctor = pick(grpc.loadPackageDefinition(protoLoader.loadSync(proto, LOAD)));
  return new Ctor(address, grpc.credentials.createInsecure());
}

function check(health: grpc.Client, service: string): Promise<{ status: string } | grpc.ServiceError> {
  return new Promise((resolve) => (health as any).Check({ service }, (err: grpc.ServiceError | null, res: { status: string }) => resolve(err ?? res)));
}

describe('the core as a gRPC product surface', () => {
  it('refuses Core calls without the bearer token, while the HTTP API (which sends it) works', async () => {
    const tenant = await createTenant(stack);
    const created = await tenant.ds.post('/api/chunk', { chunk_html: 'token guarded pangolin' });
    expect(created.status, created.text).toBe(200);
    const found = await tenant.ds.post('/api/chunk/search', { query: 'pangolin', search_type: 'bm25' });
    expect(found.status, found.text).toBe(200);
    expect(found.body.chunks).toHaveLength(1);
    const args = { dataset_id: tenant.datasetId, search_type: 'bm25', query: 'pangolin', offset: 0, limit: 10 };
    for (const token of [null, 'wrong-token-0123456789']) {
      const core = connectCore(address, 5000, token);
      try {
        const err = await core.search(args as never).then(() => null, (e: unknown) => e);
        expect(err, `token ${token}`).toBeInstanceOf(QuarryError);
        // The service's own misconfiguration: 503 for whoever called the HTTP API, not a 401.
        expect((err as QuarryError).httpStatus).toBe(503);
        expect((err as QuarryError).message).toMatch(/refused this process's QUARRY_CORE_TOKEN/);
      } finally {
        core.close();
      }
    }
    const core = connectCore(address, 5000, TOKEN);
    try {
      expect((await core.search(args as never)).chunks).toHaveLength(1);
    } finally {
      core.close();
    }
  });

  it('answers every Core RPC to a caller with the token, as the HTTP API sees the same data', async () => {
    const tenant = await createTenant(stack);
    const chunks = ['alpha pangolin', 'alpha okapi', 'beta okapi'].map((chunk_html, i) => ({ chunk_html, tag_set: [i < 2 ? 'a' : 'b'] }));
    const created = await tenant.ds.post('/api/chunk', chunks);
    expect(created.status, created.text).toBe(200);
    const ids = (created.body.chunk_metadata as { id: string }[]).map((c) => c.id);
    const core = connectCore(address, 5000, TOKEN);
    try {
      expect((await core.health()).status).toBe('ok');
      const applied = await core.apply(tenant.datasetId);
      expect(applied).toBeGreaterThan(0);
      const search = await core.search({ dataset_id: tenant.datasetId, search_type: 'bm25', query: 'okapi', offset: 0, limit: 10, count_total: true });
      expect(new Set(search.chunks.map((c) => c.chunk_id))).toEqual(new Set([ids[1], ids[2]]));
      expect(search.total).toBe(2);
      const tagged = { must: [{ field: { field: 'tag_set', match_any: [{ text: 'a' }] } }], must_not: [], should: [] };
      expect(await core.count({ dataset_id: tenant.datasetId, search_type: 'bm25', query: 'alpha okapi', filter: tagged })).toBe(2);
      expect(new Set(await core.scroll({ dataset_id: tenant.datasetId, filter: tagged, limit: 10 }))).toEqual(new Set([ids[0], ids[1]]));
      // Count and scroll are modes of Search: the requests as an internal service sends them.
      const counted = await core.search({ dataset_id: tenant.datasetId, search_type: 'bm25', query: 'alpha okapi', filter: tagged, count_only: { limit: 1 } });
      expect(counted.total).toBe(1);
      expect(counted.chunks).toEqual([]);
      const listed = await core.search({ dataset_id: tenant.datasetId, filter: tagged, limit: 10, scroll: {} });
      expect(listed.chunks.map((c) => c.chunk_id)).toEqual([ids[0]!, ids[1]!].sort());
      const page = await core.search({ dataset_id: tenant.datasetId, limit: 2, scroll: { offset_chunk_id: [...ids].sort()[1] } });
      expect(page.chunks.map((c) => c.chunk_id)).toEqual([...ids].sort().slice(1, 3));
      await expect(core.search({ dataset_id: tenant.datasetId, query: 'okapi', limit: 10, scroll: {} })).rejects.toThrow(/query must be empty/);
      const stats = await core.stats(tenant.datasetId);
      expect(Number(stats.chunk_count)).toBe(3);
      expect(Number(stats.applied_seq)).toBe(applied);
      // The same search over HTTP: the same chunks.
      const http = await tenant.ds.post('/api/chunk/search', { query: 'okapi', search_type: 'bm25' });
      expect(new Set((http.body.chunks as { chunk: { id: string } }[]).map((h) => h.chunk.id))).toEqual(new Set([ids[1], ids[2]]));
      await core.drop(tenant.datasetId);
    } finally {
      core.close();
    }
  });

  it('will not start listening beyond loopback without a token of at least 16 characters', async () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1']) expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.5', 'core.internal']) expect(isLoopbackHost(host), host).toBe(false);
    const engine = {} as Parameters<typeof startCoreServer>[3];
    for (const token of [undefined, 'short']) {
      const config = loadConfig({ QUARRY_GRPC_HOST: '0.0.0.0', QUARRY_GRPC_PORT: '0', ...(token ? { QUARRY_CORE_TOKEN: token } : {}) });
      await expect(startCoreServer(config, undefined as never, 'test', engine)).rejects.toThrow(/QUARRY_CORE_TOKEN \(at least 16 characters\)/);
    }
  });

  it('answers the standard health check for the server and the Core service, NOT_FOUND for others', async () => {
    const health = client(healthProtoPath, (p) => p.grpc.health.v1.Health);
    try {
      expect(await check(health, '')).toEqual({ status: 'SERVING' });
      expect(await check(health, 'quarry.search.v1.Core')).toEqual({ status: 'SERVING' });
      const unknown = await check(health, 'no.such.Service');
      expect((unknown as grpc.ServiceError).code).toBe(grpc.status.NOT_FOUND);
    } finally {
      health.close();
    }
  });

  it('lists its services and describes the Core service through server reflection', async () => {
    const reflection = client(reflectionProto, (p) => p.grpc.reflection.v1.ServerReflection);
    try {
      const ask = (request: Record<string, unknown>): Promise<any> =>
        new Promise((resolve, reject) => {
          const call = (reflection as any).ServerReflectionInfo();
          call.on('data', (m: unknown) => {
            resolve(m);
            call.end();
          });
          call.on('error', reject);
          call.write(request);
        });
      const listed = await ask({ list_services: '' });
      const names = (listed.list_services_response.service as { name: string }[]).map((s) => s.name);
      expect(names).toEqual(expect.arrayContaining(['quarry.search.v1.Core', 'grpc.health.v1.Health']));
      const described = await ask({ file_containing_symbol: 'quarry.search.v1.Core' });
      const files = described.file_descriptor_response.file_descriptor_proto as Buffer[];
      expect(files.length).toBeGreaterThan(0);
      // The descriptor carries the service's RPCs by name: enough for grpcurl to call them.
      const text = Buffer.concat(files).toString('latin1');
      for (const rpc of ['Health', 'Apply', 'Search', 'Stats', 'Drop', 'count_only', 'ScrollOptions']) expect(text).toContain(rpc);
    } finally {
      reflection.close();
    }
  });
});
