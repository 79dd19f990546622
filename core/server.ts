/** grpc-js bootstrap: the only code in the core that binds a port. */
import { timingSafeEqual } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { callSignal, coreHandlers } from './rpc/handlers.js';
import { health } from './rpc/health.js';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation, protoPath as healthProto } from 'grpc-health-check';
import { CORE_SERVICE_NAME, loadCoreDefinition, loadCoreService } from './rpc/proto.js';
import { toServiceError } from './rpc/status.js';
import type { Engine } from './router/engine.js';
import type { CoreHandlers } from './rpc/generated/quarry/search/v1/Core.js';
import type { Store } from '../store/repository.js';

/** How often the standard health service's status follows the engine's shards, in ms. */
const HEALTH_REFRESH_MS = 1000;

/** A running core server. */
export interface CoreServer {
  /** The port actually bound (useful when configured as 0). */
  readonly port: number;
  /** Stops accepting calls and waits for in-flight ones, up to the grace period. */
  close(graceMs: number): Promise<void>;
}

/** Shortest QUARRY_CORE_TOKEN accepted. */
export const MIN_CORE_TOKEN_LENGTH = 16;

/** Whether a listen host only accepts connections from this machine. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** Whether a call carries `authorization: Bearer <token>` (compared in constant time). */
function authorized(call: { metadata: grpc.Metadata }, expected: Buffer): boolean {
  const given = call.metadata.get('authorization')[0];
  const got = Buffer.from(typeof given === 'string' ? given : '', 'utf8');
  return got.length === expected.length && timingSafeEqual(got, expected);
}

/**
 * Wraps a unary handler so that a thrown error is answered once, with its mapped status, and
 * the call's deadline and cancellation reach the engine as an AbortSignal.
 */
function unary<Req, Res>(
  logger: Logger,
  token: Buffer | null,
  store: Store,
  fn: (req: Req, signal?: AbortSignal) => Promise<Res> | Res,
): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    if (token && !authorized(call, token)) {
      callback({ code: grpc.status.UNAUTHENTICATED, details: 'this core requires "authorization: Bearer <QUARRY_CORE_TOKEN>" on every call' });
      return;
    }
    // The call arrives: the store's caches check for other processes' writes once, here.
    store.pinReads();
    const stop = callSignal(call);
    Promise.resolve()
      .then(() => fn(call.request, stop.signal))
      .finally(() => stop.dispose())
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

/** The named keys of a type, without its index signature. */
type NamedKeys<T> = keyof { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] };

/** One RPC as the core implements it: the request as the proto decodes it, the reply as the proto encodes it. */
type CoreMethod<H> = H extends grpc.handleUnaryCall<infer Req, infer Res> ? (req: Req, signal?: AbortSignal) => Promise<Res> | Res : never;

/** The core's operations by RPC name, typed by the proto's generated service (a new RPC without a method fails to compile). */
export type CoreMethods = { readonly [K in NamedKeys<CoreHandlers>]: CoreMethod<CoreHandlers[K]> };

/** The core's operations by RPC name: what the gRPC server and the in-process client both call. */
export function coreMethods(config: Config, version: string, engine: Engine): CoreMethods {
  const handlers = coreHandlers(engine);
  return {
    Health: () => health(version, config.shardThreads, engine.shardHealth()),
    Apply: handlers.Apply,
    Search: handlers.Search,
    Stats: handlers.Stats,
    Drop: handlers.Drop,
  };
}

/** Starts the core's gRPC server over an engine. */
export async function startCoreServer(config: Config, logger: Logger, version: string, engine: Engine): Promise<CoreServer> {
  if (!isLoopbackHost(config.grpcHost) && (config.coreToken === null || config.coreToken.length < MIN_CORE_TOKEN_LENGTH)) {
    throw new Error(
      `the core would listen on ${config.grpcHost}, beyond loopback, where anyone who reaches the port could search and change every tenant's index: set QUARRY_CORE_TOKEN (at least ${MIN_CORE_TOKEN_LENGTH} characters) or listen on 127.0.0.1`,
    );
  }
  const token = config.coreToken === null ? null : Buffer.from(`Bearer ${config.coreToken}`, 'utf8');
  const server = new grpc.Server({ 'grpc.max_receive_message_length': 256 * 1024 * 1024 });
  const methods = coreMethods(config, version, engine);
  const definition = loadCoreDefinition();
  server.addService(
    loadCoreService(definition).service,
    {
      Health: unary(logger, token, engine.store, methods.Health),
      Apply: unary(logger, token, engine.store, methods.Apply),
      Search: unary(logger, token, engine.store, methods.Search),
      Stats: unary(logger, token, engine.store, methods.Stats),
      Drop: unary(logger, token, engine.store, methods.Drop),
    } satisfies CoreHandlers,
  );
  // For internal services and their tooling: the standard health service (grpc.health.v1, what
  // grpc-health-probe and load balancers ask) and server reflection (grpcurl, Postman, Evans list
  // and call the RPCs without the .proto file).
  const healthService = new HealthImplementation({ '': 'SERVING', [CORE_SERVICE_NAME]: 'SERVING' });
  healthService.addToServer(server);
  const described = loadCoreDefinition([healthProto]);
  new ReflectionService(described).addToServer(server);
  // The core serves while no dataset has lost shards with a thread (its own Health RPC says
  // "reloading" then): checked every second, as the standard service holds a status, not a probe.
  const servingOf = (): 'SERVING' | 'NOT_SERVING' => (engine.shardHealth().lost > 0 ? 'NOT_SERVING' : 'SERVING');
  const healthTimer = setInterval(() => healthService.setStatus(CORE_SERVICE_NAME, servingOf()), HEALTH_REFRESH_MS);
  healthTimer.unref();
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${config.grpcHost}:${config.grpcPort}`, grpc.ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    );
  });
  logger.info({ port }, 'core listening');
  return {
    port,
    close(graceMs) {
      // Tell health checkers first, so that load balancers stop sending while in-flight calls finish.
      clearInterval(healthTimer);
      healthService.setStatus('', 'NOT_SERVING');
      healthService.setStatus(CORE_SERVICE_NAME, 'NOT_SERVING');
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
