/** Maps errors to gRPC status objects at the core's edge. */
import type * as grpc from '@grpc/grpc-js';
import { ErrorCodes, GrpcStatus, QuarryError } from '../domain/errors.js';

/** The gRPC error to send for a thrown value; internal errors do not expose their message. */
export function toServiceError(err: unknown): Partial<grpc.ServiceError> {
  if (err instanceof QuarryError && ErrorCodes[err.code].expose) {
    return { code: err.grpcStatus, details: err.message, message: err.message };
  }
  return { code: GrpcStatus.INTERNAL, details: 'internal error', message: 'internal error' };
}
