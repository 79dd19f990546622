/**
 * The core's gRPC port as internal services and their tools see it, called from this process
 * (the core runs in its own): the standard health service (grpc.health.v1) and server reflection
 * (grpc.reflection.v1), which list and describe the Core service without its .proto file.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoPath as healthProtoPath } from 'grpc-health-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../helpers/stack.js';

const LOAD = { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true } as const;
const reflectionProto = path.join(path.dirname(createRequire(import.meta.url).resolve('@grpc/reflection/package.json')), 'build', 'proto', 'grpc', 'reflection', 'v1', 'reflection.proto');

let stack: Stack;
let address: string;

beforeAll(async () => {
  stack = await startStack();
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
      for (const rpc of ['Health', 'Apply', 'Search', 'Count', 'Scroll', 'Stats', 'Drop']) expect(text).toContain(rpc);
    } finally {
      reflection.close();
    }
  });
});
