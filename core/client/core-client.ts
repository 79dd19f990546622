/** Typed gRPC client of the core, used by the facade, the job workers and benchmarks. */
import * as grpc from '@grpc/grpc-js';
import { QuarryError, codeFromGrpc } from '../domain/errors.js';
import type { HealthReply } from '../rpc/health.js';
import { loadCoreService } from '../rpc/proto.js';

/** The core's operations as promises. */
export interface CoreClient {
  /** Health of the core; rejects with `unavailable` when it does not answer within the deadline. */
  health(deadlineMs?: number): Promise<HealthReply>;
  close(): void;
}

type Callback<T> = (err: grpc.ServiceError | null, reply: T) => void;

/** Connects to the core at `address` (`host:port`); calls carry `deadlineMs` unless overridden. */
export function connectCore(address: string, deadlineMs: number): CoreClient {
  const Client = loadCoreService();
  const client = new Client(address, grpc.credentials.createInsecure()) as grpc.Client &
    Record<string, (req: unknown, meta: grpc.Metadata, opts: grpc.CallOptions, cb: Callback<unknown>) => void>;

  const call = <Req, Res>(method: string, request: Req, ms = deadlineMs): Promise<Res> =>
    new Promise<Res>((resolve, reject) => {
      client[method]!(request, new grpc.Metadata(), { deadline: Date.now() + ms }, (err, reply) => {
        if (!err) return resolve(reply as Res);
        if (err.code === grpc.status.UNAVAILABLE || err.code === grpc.status.DEADLINE_EXCEEDED) {
          return reject(new QuarryError('unavailable', `the search core at ${address} is not answering (${err.details})`, { cause: err, retryAfterSeconds: 1 }));
        }
        reject(new QuarryError(codeFromGrpc(err.code), err.details || err.message, { cause: err }));
      });
    });

  return {
    health: (ms) => call<Record<string, never>, HealthReply>('Health', {}, ms),
    close: () => client.close(),
  };
}
