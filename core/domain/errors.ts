/**
 * The one error table of the service. Every failure a user can cause is a {@link QuarryError}
 * with a code from this table; the HTTP facade and the gRPC core map it to their own status
 * only at their edge, so no layer branches on message text.
 */

/** gRPC status numbers used by the table (kept here so domain code has no grpc-js import). */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

interface ErrorKind {
  /** HTTP status the facade answers with. */
  readonly http: number;
  /** gRPC status the core answers with. */
  readonly grpc: number;
  /** Whether the message may be shown to the caller (internal errors are logged, not exposed). */
  readonly expose: boolean;
  /**
   * Whether a gRPC status maps back to this code. False for codes that share their gRPC status
   * with a more general one and that the core never sends (HTTP-side refinements).
   */
  readonly fromGrpc?: false;
}

/** Error codes, their HTTP and gRPC statuses. */
export const ErrorCodes = {
  bad_request: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT, expose: true },
  invalid_json: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT, expose: true, fromGrpc: false },
  duplicate_tracking_id: { http: 400, grpc: GrpcStatus.ALREADY_EXISTS, expose: true, fromGrpc: false },
  unauthorized: { http: 401, grpc: GrpcStatus.UNAUTHENTICATED, expose: true },
  forbidden: { http: 403, grpc: GrpcStatus.PERMISSION_DENIED, expose: true },
  not_found: { http: 404, grpc: GrpcStatus.NOT_FOUND, expose: true },
  method_not_allowed: { http: 405, grpc: GrpcStatus.INVALID_ARGUMENT, expose: true, fromGrpc: false },
  /** A deadline passed (the core's, or a model server's): a gateway timeout, not the client's fault. */
  timeout: { http: 504, grpc: GrpcStatus.DEADLINE_EXCEEDED, expose: true },
  /** The caller went away; nginx's 499 "client closed request", which nobody reads. */
  cancelled: { http: 499, grpc: GrpcStatus.CANCELLED, expose: true },
  /** One organization has too many requests in flight (its fair share); retry after Retry-After. */
  too_many_requests: { http: 429, grpc: GrpcStatus.RESOURCE_EXHAUSTED, expose: true, fromGrpc: false },
  payload_too_large: { http: 413, grpc: GrpcStatus.RESOURCE_EXHAUSTED, expose: true, fromGrpc: false },
  unsupported_media_type: { http: 415, grpc: GrpcStatus.INVALID_ARGUMENT, expose: true, fromGrpc: false },
  overloaded: { http: 503, grpc: GrpcStatus.RESOURCE_EXHAUSTED, expose: true },
  unavailable: { http: 503, grpc: GrpcStatus.UNAVAILABLE, expose: true },
  internal: { http: 500, grpc: GrpcStatus.INTERNAL, expose: false },
} as const satisfies Record<string, ErrorKind>;

/** Name of an entry in {@link ErrorCodes}. */
export type ErrorCode = keyof typeof ErrorCodes;

/** The only error type thrown for failures a caller can cause or must be told about. */
export class QuarryError extends Error {
  /** Seconds the caller should wait before retrying (sent as Retry-After), when relevant. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: { cause?: unknown; retryAfterSeconds?: number } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'QuarryError';
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  /** HTTP status of this error's code. */
  get httpStatus(): number {
    return ErrorCodes[this.code].http;
  }

  /** gRPC status of this error's code. */
  get grpcStatus(): number {
    return ErrorCodes[this.code].grpc;
  }
}

/** 400 with a message. */
export const badRequest = (message: string): QuarryError => new QuarryError('bad_request', message);
/** 404 with the Trieve-style `Not Found: ` prefix. */
export const notFound = (what: string): QuarryError => new QuarryError('not_found', `Not Found: ${what}`);
/** 401 with a reason. */
export const unauthorized = (why: string): QuarryError => new QuarryError('unauthorized', `Unauthorized: ${why}`);
/** 403 with a reason. */
export const forbidden = (why: string): QuarryError => new QuarryError('forbidden', `Forbidden: ${why}`);

/** Maps a gRPC status number back to the closest error code (used by the core client). */
export function codeFromGrpc(status: number): ErrorCode {
  for (const [code, kind] of Object.entries(ErrorCodes) as [ErrorCode, ErrorKind][]) {
    if (kind.grpc === status && kind.fromGrpc !== false) {
      return code;
    }
  }
  return 'internal';
}
