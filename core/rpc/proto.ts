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

/** The loaded `quarry.search.v1.Core` service definition and client constructor. */
export function loadCoreService(): grpc.ServiceClientConstructor {
  const definition = protoLoader.loadSync(CORE_PROTO, {
    keepCase: true,
    longs: Number,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const pkg = grpc.loadPackageDefinition(definition) as unknown as {
    quarry: { search: { v1: { Core: grpc.ServiceClientConstructor } } };
  };
  return pkg.quarry.search.v1.Core;
}
