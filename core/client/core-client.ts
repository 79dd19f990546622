/** Typed gRPC client of the core, used by the facade, the job workers and benchmarks. */
import * as grpc from '@grpc/grpc-js';
import { QuarryError, codeFromGrpc } from '../domain/errors.js';
import type { Filter } from '../domain/filter.js';
import type { HealthReply } from '../rpc/health.js';
import type { ScoredChunk__Output } from '../rpc/generated/quarry/search/v1/ScoredChunk.js';
import type { SearchReply__Output } from '../rpc/generated/quarry/search/v1/SearchReply.js';
import type { SearchRequest } from '../rpc/generated/quarry/search/v1/SearchRequest.js';

export type { HealthReply } from '../rpc/health.js';
import { loadCoreService } from '../rpc/proto.js';
import { withFields } from '../domain/with-fields.js';

/** A ranked hit. */
export type ScoredChunk = ScoredChunk__Output;

/** A request type of the proto whose filter is the domain's (the same shape, with readonly lists). */
type WithDomainFilter<T> = Omit<T, 'filter'> & { filter?: Filter | null };

/** Search arguments: the proto's SearchRequest (see proto/search/v1/core.proto); absent fields are "not given". */
export type SearchArgs = WithDomainFilter<SearchRequest>;

/** What a search answers: ranked chunks, or ranked groups with group_by. */
export type SearchResult = SearchReply__Output;

/** Count arguments: a Search with `count_only` (its `limit` here is where counting stops, 0: never). */
export type CountArgs = Pick<SearchArgs, 'dataset_id' | 'search_type' | 'query' | 'filter' | 'score_threshold'> & { limit?: number };

/** Scroll arguments: a Search with `scroll` (`limit` ids, from `offset_chunk_id` or by `sort_field`). */
export type ScrollArgs = Pick<SearchArgs, 'dataset_id' | 'filter' | 'limit'> & { offset_chunk_id?: string; sort_field?: string; sort_direction?: string };

/** The core's operations as promises. */
export interface CoreClient {
  /** Health of the core; rejects with `unavailable` when it does not answer within the deadline. */
  health(deadlineMs?: number): Promise<HealthReply>;
  /** Makes every change recorded for the dataset searchable. */
  apply(datasetId: string, minSeq?: number): Promise<number>;
  /** Every search feature (ranking, sort options, autocomplete, recommendations, groups) in one call. */
  search(args: SearchArgs): Promise<SearchResult>;
  /** How many chunks match a query and filter (a Search with `count_only`). */
  count(args: CountArgs): Promise<number>;
  /** The ids of chunks matching a filter, by id or by a field (a Search with `scroll`). */
  scroll(args: ScrollArgs): Promise<string[]>;
  stats(datasetId: string): Promise<{ chunk_count: number; shards: number; applied_seq: number }>;
  drop(datasetId: string): Promise<void>;
  /**
   * This client with its reads (search, count, scroll, stats) cancelled when `signal` aborts:
   * the HTTP API hands each request one bound to that request, so the core stops work for a
   * client that went away. Writes' Apply and Drop finish whatever happens (the write they follow
   * is already durable).
   */
  withSignal(signal: AbortSignal): CoreClient;
  close(): void;
}

type Callback<T> = (err: grpc.ServiceError | null, reply: T) => void;

/**
 * A failed core call as callers see it (the same mapping for the gRPC and the in-process client).
 * `reachable` false means the channel never got a connection: a deadline that passed while
 * waiting for one is an outage (503, retry), not a slow search (504).
 */
export function coreError(address: string, ms: number, err: { code: number; details: string; message: string }, reachable = true): QuarryError {
  if (err.code === grpc.status.UNAVAILABLE || (err.code === grpc.status.DEADLINE_EXCEEDED && !reachable)) {
    return new QuarryError('unavailable', `search core unavailable: the core at ${address} is not reachable (${err.details}); retry shortly`, {
      cause: err,
      retryAfterSeconds: 1,
    });
  }
  if (err.code === grpc.status.UNAUTHENTICATED) {
    // The service's own configuration, not the caller's key: a 503 for the caller, the cause for the operator.
    return new QuarryError('unavailable', `search core unavailable: the core at ${address} refused this process's QUARRY_CORE_TOKEN (${err.details})`, {
      cause: err,
      retryAfterSeconds: 1,
    });
  }
  if (err.code === grpc.status.DEADLINE_EXCEEDED) {
    return new QuarryError('timeout', `deadline exceeded: the search core did not answer within ${ms} ms`, { cause: err });
  }
  const retryAfterSeconds = err.code === grpc.status.RESOURCE_EXHAUSTED ? 1 : undefined;
  return new QuarryError(codeFromGrpc(err.code), err.details || err.message, { cause: err, retryAfterSeconds });
}

/**
 * One unary call of the core: method name, request object, deadline, wait-for-ready, and the
 * signal that cancels it (the HTTP request it serves went away).
 */
export type CoreCall = <Res>(method: string, request: unknown, ms: number, waitForReady: boolean, signal: AbortSignal | undefined) => Promise<Res>;

/** The typed operations over one generic unary call; reads are cancelled by `signal`. */
export function coreClientOver(call: CoreCall, deadlineMs: number, close: () => void, signal?: AbortSignal): CoreClient {
  // Queries wait (within their deadline) for a core that is reconnecting; health and writes'
  // Apply fail fast, since a write is already durable and health must report at once.
  return {
    health: (ms = deadlineMs) => call<HealthReply>('Health', {}, ms, false, undefined),
    apply: async (datasetId, minSeq = 0) =>
      Number((await call<{ applied_seq: number }>('Apply', { dataset_id: datasetId, min_seq: minSeq }, deadlineMs, false, undefined)).applied_seq),
    search: (args) => call<SearchResult>('Search', args, deadlineMs, true, signal),
    count: async ({ limit, ...rest }) => {
      const request: SearchArgs = withFields(rest, { count_only: { limit: limit ?? 0 } });
      return Number((await call<SearchResult>('Search', request, deadlineMs, true, signal)).total);
    },
    scroll: async ({ offset_chunk_id, sort_field, sort_direction, ...rest }) => {
      const request: SearchArgs = withFields(rest, { scroll: { offset_chunk_id, sort_field, sort_direction } });
      return (await call<SearchResult>('Search', request, deadlineMs, true, signal)).chunks.map((c) => c.chunk_id);
    },
    stats: (datasetId) => call('Stats', { dataset_id: datasetId }, deadlineMs, true, signal),
    drop: async (datasetId) => {
      await call('Drop', { dataset_id: datasetId }, deadlineMs, true, undefined);
    },
    withSignal: (s) => coreClientOver(call, deadlineMs, close, s),
    close,
  };
}

/**
 * Connects to the core at `address` (`host:port`); calls carry `deadlineMs` unless overridden,
 * and `token` (QUARRY_CORE_TOKEN) as `authorization: Bearer <token>` when given.
 */
export function connectCore(address: string, deadlineMs: number, token: string | null = null): CoreClient {
  const Client = loadCoreService();
  const client = new Client(address, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': 256 * 1024 * 1024,
    // A restarted core must be found within a second, not after grpc's default backoff of minutes.
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': 1000,
  }) as grpc.Client & Record<string, (req: unknown, meta: grpc.Metadata, opts: grpc.CallOptions, cb: Callback<unknown>) => void>;

  // A call made for an HTTP request is cancelled when that request's client goes away.
  const call: CoreCall = <Res>(method: string, request: unknown, ms: number, waitForReady: boolean, signal: AbortSignal | undefined): Promise<Res> =>
    new Promise<Res>((resolve, reject) => {
      if (signal?.aborted) return reject(new QuarryError('cancelled', 'the client went away before the core was called'));
      const connectedAtStart = client.getChannel().getConnectivityState(false) === grpc.connectivityState.READY;
      const metadata = new grpc.Metadata({ waitForReady });
      if (token !== null) metadata.set('authorization', `Bearer ${token}`);
      const pending = client[method]!(request, metadata, { deadline: Date.now() + ms }, (err, reply) => {
        signal?.removeEventListener('abort', cancel);
        if (!err) return resolve(reply as Res);
        const connected = connectedAtStart || client.getChannel().getConnectivityState(false) === grpc.connectivityState.READY;
        reject(coreError(address, ms, err, connected));
      }) as unknown as grpc.ClientUnaryCall;
      const cancel = (): void => pending.cancel();
      signal?.addEventListener('abort', cancel, { once: true });
    });

  return coreClientOver(call, deadlineMs, () => client.close());
}
