import type { APIGatewayProxyEvent } from 'aws-lambda';
import { UnauthorizedError } from '../domain/errors.ts';

/** What API Gateway answers with 401 (infra/api-routes.ts gatewayResponses), said again by the handlers. */
const UNAUTHORIZED_REASON = 'Unauthorized: a valid bearer token is required';

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
 * The authorizer context key carrying the token's `exp` in milliseconds (absent for a token
 * without expiry). API Gateway may hand context numbers over as strings: read it with Number().
 */
export const TOKEN_EXPIRES_AT_MS = 'tokenExpiresAtMs';

/**
 * API Gateway keeps the authorizer's answer for one Authorization header value for the
 * authorizer's cache TTL (infra/api-routes.ts AUTHORIZER_RESULT_TTL_SECONDS) and answers later
 * requests with that value from it, whatever else they carry. So what the authorizer judged
 * beyond that value is judged again on every request, here: the token's expiry (a cached
 * answer outlives it) and a second Authorization header (the cache key is one header's value;
 * two are refused as ambiguous). Requests without an authorizer context (the public paths)
 * pass. Throws UnauthorizedError (401, the gateway's reason). Cost: a look at the headers.
 *
 * @example requireCurrentCredentials(event, clock.nowMs()) // throws once the token expired
 */
export function requireCurrentCredentials(event: APIGatewayProxyEvent, nowMs: number): void {
  const authorizer = event.requestContext?.authorizer;
  if (authorizer === null || authorizer === undefined) return;
  const expiresAt = authorizer[TOKEN_EXPIRES_AT_MS];
  // As the authorizer: expired once now reaches exp; an unreadable expiry is an expired one.
  const expired = expiresAt !== undefined && !(Number(expiresAt) > nowMs);
  if (expired || authorizationHeaderValues(event).length > 1) {
    throw new UnauthorizedError(UNAUTHORIZED_REASON);
  }
}
