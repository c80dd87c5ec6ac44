import {
  AcklineError,
  ConflictError,
  ForbiddenError,
  MethodNotAllowedError,
  NotAcceptableError,
  NotFoundError,
  PayloadTooLargeError,
  PreconditionFailedError,
  ServiceUnavailableError,
  UnauthorizedError,
  ValidationError,
} from '../domain/errors.ts';

type ErrorClass = abstract new (...args: never[]) => Error;

/**
 * The one error -> HTTP status table, matched by class (`instanceof`), most
 * specific first. Anything not listed is a 500 whose details are logged, not
 * returned.
 */
const statusByErrorClass: readonly (readonly [ErrorClass, number])[] = [
  [ValidationError, 400],
  [UnauthorizedError, 401],
  [ForbiddenError, 403],
  [NotFoundError, 404],
  [MethodNotAllowedError, 405],
  [NotAcceptableError, 406],
  [ConflictError, 409],
  [PreconditionFailedError, 412],
  [PayloadTooLargeError, 413],
  [ServiceUnavailableError, 503],
];

export interface ErrorResponse {
  readonly statusCode: number;
  readonly reason: string;
  /** True when the error was not one of ours: log it in full. */
  readonly unexpected: boolean;
}

export function errorResponse(error: unknown): ErrorResponse {
  for (const [errorClass, statusCode] of statusByErrorClass) {
    if (error instanceof errorClass) {
      return { statusCode, reason: error.message, unexpected: false };
    }
  }
  if (error instanceof AcklineError) {
    return { statusCode: 500, reason: error.message, unexpected: true };
  }
  return { statusCode: 500, reason: 'Internal server error', unexpected: true };
}
