/** grpc-js bootstrap: the only code in the core that binds a port. */
import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { health } from './rpc/health.js';
import { loadCoreService } from './rpc/proto.js';
import { toServiceError } from './rpc/status.js';

/** A running core server. */
export interface CoreServer {
  /** The port actually bound (useful when configured as 0). */
  readonly port: number;
  /** Stops accepting calls and waits for in-flight ones, up to the grace period. */
  close(graceMs: number): Promise<void>;
}

/** Wraps a unary handler so that a thrown error is answered once, with its mapped status. */
function unary<Req, Res>(fn: (req: Req) => Promise<Res> | Res): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    Promise.resolve()
      .then(() => fn(call.request))
      .then(
        (reply) => callback(null, reply),
        (err: unknown) => callback(toServiceError(err)),
      );
  };
}

/** Starts the core's gRPC server. */
export async function startCoreServer(config: Config, logger: Logger, version: string): Promise<CoreServer> {
  const server = new grpc.Server({ 'grpc.max_receive_message_length': 256 * 1024 * 1024 });
  server.addService(loadCoreService().service, {
    Health: unary(() => health(version)),
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${config.grpcHost}:${config.grpcPort}`, grpc.ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    );
  });
  logger.info({ port }, 'core listening');
  return {
    port,
    close(graceMs) {
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
