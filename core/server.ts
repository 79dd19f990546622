/** grpc-js bootstrap: the only code in the core that binds a port. */
import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { callSignal, coreHandlers } from './rpc/handlers.js';
import { health } from './rpc/health.js';
import { loadCoreService } from './rpc/proto.js';
import { toServiceError } from './rpc/status.js';
import type { Engine } from './router/engine.js';

/** A running core server. */
export interface CoreServer {
  /** The port actually bound (useful when configured as 0). */
  readonly port: number;
  /** Stops accepting calls and waits for in-flight ones, up to the grace period. */
  close(graceMs: number): Promise<void>;
}

/**
 * Wraps a unary handler so that a thrown error is answered once, with its mapped status, and
 * the call's deadline and cancellation reach the engine as an AbortSignal.
 */
function unary<Req, Res>(logger: Logger, fn: (req: Req, signal?: AbortSignal) => Promise<Res> | Res): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    Promise.resolve()
      .then(() => fn(call.request, callSignal(call as grpc.ServerUnaryCall<unknown, unknown>)))
      .then(
        (reply) => callback(null, reply),
        (err: unknown) => {
          const mapped = toServiceError(err);
          if (mapped.code === grpc.status.INTERNAL) logger.error({ err }, 'internal error in core call');
          callback(mapped);
        },
      );
  };
}

/** The core's operations by RPC name: what the gRPC server and the in-process client both call. */
export function coreMethods(
  config: Config,
  version: string,
  engine: Engine,
): Record<string, (req: any, signal?: AbortSignal) => Promise<unknown> | unknown> {
  const handlers = coreHandlers(engine);
  return {
    Health: () => health(version, config.shardThreads, engine.shardHealth()),
    Apply: handlers.Apply,
    Search: handlers.Search,
    Count: handlers.Count,
    Scroll: handlers.Scroll,
    Stats: handlers.Stats,
    Drop: handlers.Drop,
  };
}

/** Starts the core's gRPC server over an engine. */
export async function startCoreServer(config: Config, logger: Logger, version: string, engine: Engine): Promise<CoreServer> {
  const server = new grpc.Server({ 'grpc.max_receive_message_length': 256 * 1024 * 1024 });
  const methods = coreMethods(config, version, engine);
  server.addService(
    loadCoreService().service,
    Object.fromEntries(Object.entries(methods).map(([name, fn]) => [name, unary(logger, fn)])),
  );
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
