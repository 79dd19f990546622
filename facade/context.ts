/** What the facade's middleware puts on `ctx.state`, and the services every route can reach. */
import type { Logger } from 'pino';
import type { BlobStore } from '../core/blob/blob-store.js';
import type { Config } from '../core/config.js';
import type { CoreClient } from '../core/client/core-client.js';
import type { JobsClient } from '../core/client/jobs-client.js';
import type { ApiKeyRecord, UserRecord } from '../core/domain/tenancy.js';
import type { Store } from '../store/repository.js';
import type { AnalyticsRecorder } from './analytics/recorder.js';
import type { StageTimer } from './stage-timing.js';

/**
 * Who is calling: the operator's ADMIN_API_KEY, an organization API key, or nobody on a read
 * route of a dataset whose server_configuration makes it public (read role, that dataset only).
 */
export type Caller =
  | { readonly kind: 'admin' }
  | { readonly kind: 'key'; readonly key: ApiKeyRecord; readonly user: UserRecord | null }
  | { readonly kind: 'public'; readonly datasetId: string };

/** Services shared by all routes, built once by the app factory. */
export interface Services {
  readonly config: Config;
  readonly store: Store;
  readonly core: CoreClient;
  readonly jobs: JobsClient;
  readonly logger: Logger;
  /** Buffers analytics records of searches and recommendations; never blocks a request. */
  readonly analytics: AnalyticsRecorder;
  /** File bytes: the embedded store under the data dir, or S3 (core/blob/blob-store.ts). */
  readonly blobs: BlobStore;
}

/** Per-request state. */
export interface RequestState {
  requestId: string;
  log: Logger;
  /**
   * The core for this request's reads: cancelled when its client goes away. Routes search,
   * count and scroll through it, never through `Services.core`.
   */
  core: CoreClient;
  /** Undefined when the request carried no credentials. */
  caller?: Caller;
  /** The matched route as registered (`METHOD /api/pattern/:param`); undefined when none matches. */
  route?: string;
  /** Stage timer of the request, when QUARRY_SERVER_TIMING is on. */
  timing?: StageTimer;
  /** Parsed JSON body (undefined when the body was empty). */
  body?: unknown;
  /** Bytes of the body read, for the tenant's share of the event loop. */
  bodyLength?: number;
  /**
   * Ends the request's turn in its organization's fair share early (tenant-fairness.ts), for a
   * request that from now on only waits on another service (a RAG answer's tokens). Idempotent.
   */
  yieldTurn?: () => void;
}
