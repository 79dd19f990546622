/**
 * The core client of a process that hosts the engine itself (QUARRY_CORE_IN_PROCESS): the same
 * messages as over gRPC (shaped as the wire shapes them, ../rpc/wire-shape.ts, so a request and a
 * reply look exactly as they do after a gRPC call: defaults, nulls, number conversions) and the
 * same error mapping, without HTTP/2, a socket, the bytes and a second process on the way.
 */
import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Engine } from '../router/engine.js';
import { CORE_SERVICE_NAME } from '../rpc/proto.js';
import { loadCoreRoot, methodShapers } from '../rpc/wire-shape.js';
import { QuarryError } from '../domain/errors.js';
import { toServiceError } from '../rpc/status.js';
import { coreMethods } from '../server.js';
import { callDeadline } from '../pool/task-stop.js';
import { coreClientOver, coreError, type CoreCall, type CoreClient } from './core-client.js';

/** A CoreClient calling `engine` in this process. */
export function inProcessCore(config: Config, logger: Logger, version: string, engine: Engine, deadlineMs: number): CoreClient {
  const shapers = methodShapers(loadCoreRoot(), CORE_SERVICE_NAME);
  // Called by name, as the wire calls them (the client's typed methods name them).
  const methods = coreMethods(config, version, engine) as unknown as Readonly<Record<string, ((req: unknown, signal?: AbortSignal) => unknown) | undefined>>;
  const call: CoreCall = async <Res>(method: string, request: unknown, ms: number, _waitForReady: boolean, signal: AbortSignal | undefined): Promise<Res> => {
    const shape = shapers.get(method);
    if (!shape) throw new QuarryError('internal', `the core has no method ${method}`);
    const req = shape.request(request);
    let reply: unknown;
    // As a gRPC deadline and a cancelled call do: the core stops the call's work.
    const deadline = callDeadline(Date.now() + ms, 'the core call', signal);
    try {
      const fn = methods[method];
      if (!fn) throw new QuarryError('internal', `the core has no method ${method}`);
      reply = await fn(req, deadline.signal);
    } catch (err) {
      const mapped = toServiceError(err) as { code: number; details: string; message: string };
      if (mapped.code === grpc.status.INTERNAL) logger.error({ err }, 'internal error in core call');
      throw coreError('in-process', ms, mapped);
    } finally {
      deadline.dispose();
    }
    return shape.response(reply) as Res;
  };
  return coreClientOver(call, deadlineMs, () => undefined);
}
