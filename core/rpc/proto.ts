/** Loads the core's gRPC contract from `proto/` (shared by the server and the client). */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

/** Repository root, found from this file's location in the source tree or in `dist/`. */
function repoRoot(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const parts = here.split(path.sep);
  const dist = parts.lastIndexOf('dist');
  return dist >= 0 ? parts.slice(0, dist).join(path.sep) : path.resolve(here, '..', '..');
}

/** Path of the core's .proto file. */
export const CORE_PROTO = path.join(repoRoot(), 'proto', 'search', 'v1', 'core.proto');

/** Full name of the core's service, as gRPC health checks and reflection name it. */
export const CORE_SERVICE_NAME = 'quarry.search.v1.Core';

/** How every side of the core's gRPC turns messages into objects (proto-loader's and protobufjs's `toObject` options). */
export const CORE_LOAD_OPTIONS = Object.freeze({
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
});

/** The core's proto, loaded, with any `extra` .proto files (server reflection describes them all). */
export function loadCoreDefinition(extra: readonly string[] = []): protoLoader.PackageDefinition {
  return protoLoader.loadSync([CORE_PROTO, ...extra], CORE_LOAD_OPTIONS);
}

/** The loaded `quarry.search.v1.Core` service definition and client constructor. */
export function loadCoreService(definition: protoLoader.PackageDefinition = loadCoreDefinition()): grpc.ServiceClientConstructor {
  const pkg = grpc.loadPackageDefinition(definition) as unknown as {
    quarry: { search: { v1: { Core: grpc.ServiceClientConstructor } } };
  };
  return pkg.quarry.search.v1.Core;
}
