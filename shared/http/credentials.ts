import type { APIGatewayProxyEvent } from 'aws-lambda';
import { isTokenRefusal, TokenRefusedError } from '../domain/token-refusal.ts';

type HeaderMap = Readonly<Record<string, string | readonly string[] | undefined>> | null | undefined;

/**
 * Every Authorization header line of a request, whatever the case of its name: from
 * `multiValueHeaders` when the event has them (API Gateway always sends both maps), else
 * `headers`. Used by the authorizer and again by the handlers (see {@link requireCurrentCredentials}).
 *
 * @example authorizationHeaderValues({ headers: { authorization: 'Bearer x' } }) // ['Bearer x']
 */
export function authorizationHeaderValues(event: {
  readonly headers?: HeaderMap;
  readonly multiValueHeaders?: HeaderMap;
}): string[] {
  const values = (map: HeaderMap) =>
    Object.entries(map ?? {})
      .filter(([key]) => key.toLowerCase() === 'authorization')
      .flatMap(([, value]) => (value === undefined ? [] : typeof value === 'string' ? [value] : [...value]));
  const multi = values(event.multiValueHeaders);
  return multi.length > 0 ? multi : values(event.headers);
}

/**
 * The authorizer context key carrying the instant (ms since the epoch) from which the token is
 * refused as expired: its `exp` plus the clock tolerance; absent for a token without expiry.
 * API Gateway may hand context numbers over as strings: read it with Number().
 */
export const TOKEN_EXPIRES_AT_MS = 'tokenExpiresAtMs';

/**
 * The authorizer context key carrying the instant until which the token is refused as not valid
 * yet: its `nbf` minus the clock tolerance; absent when `nbf` had passed when it was verified.
 */
export const TOKEN_VALID_FROM_MS = 'tokenValidFromMs';

/**
 * The authorizer context key naming the check a refused token failed (a TokenRefusal code). The
 * authorizer answers a refused token with an Allow that carries only this key, and the handlers
 * answer 401 with its reason: API Gateway answers an authorizer's own refusal (a thrown
 * 'Unauthorized' or a Deny) with one fixed gateway response, which cannot say which check failed.
 */
export const TOKEN_REFUSAL = 'tokenRefusal';

/**
 * The authorizer judged the request, but its answer may not hold for this request: the handlers
 * judge again, on every request, before any route.
 *
 * - The authorizer refused the token: its reason (TOKEN_REFUSAL).
 * - API Gateway keeps the authorizer's answer for one Authorization header value for the
 *   authorizer's cache TTL (infra/api-routes.ts AUTHORIZER_RESULT_TTL_SECONDS) and answers later
 *   requests with that value from it, whatever else they carry. So what the authorizer judged
 *   beyond that value is judged again here: the token's expiry and `nbf` (a kept answer
 *   outlives either instant) and a second Authorization header (the cache key is one header's
 *   value; two are refused as ambiguous).
 *
 * Requests without an authorizer context (the public paths) pass. Throws TokenRefusedError
 * (401, the reason names the check). Cost: a look at the headers.
 *
 * @example requireCurrentCredentials(event, clock.nowMs()) // throws 'the token expired' once it did
 */
export function requireCurrentCredentials(event: APIGatewayProxyEvent, nowMs: number): void {
  const authorizer = event.requestContext?.authorizer;
  if (authorizer === null || authorizer === undefined) return;
  if (authorizationHeaderValues(event).length > 1) throw new TokenRefusedError('ambiguous');
  const refusal: unknown = authorizer[TOKEN_REFUSAL];
  if (refusal !== undefined) throw new TokenRefusedError(isTokenRefusal(refusal) ? refusal : 'malformed');
  if (typeof authorizer.role !== 'string' || authorizer.role === '') throw new TokenRefusedError('noRole');
  const expiresAt = authorizer[TOKEN_EXPIRES_AT_MS];
  // As the authorizer: expired once now reaches it; an unreadable instant is a passed one.
  if (expiresAt !== undefined && !(Number(expiresAt) > nowMs)) throw new TokenRefusedError('expired');
  const validFrom = authorizer[TOKEN_VALID_FROM_MS];
  if (validFrom !== undefined && !(Number(validFrom) <= nowMs)) throw new TokenRefusedError('notYetValid');
}
