import { schedulerQueue } from '../shared/config/resources.ts';
import { tokenRefusalReasons } from '../shared/domain/token-refusal.ts';

/**
 * Which Lambda entry point serves which HTTP path, and which paths the token
 * authorizer guards. Pure data, read by the CDK stateless stack (API Gateway
 * resources) and by the embedded stack's local gateway, so both route alike.
 */

/** A folder under functions/ holding `handler.ts` that exports `handler`. */
export type ApiFunctionName = 'admin-api' | 'data-api';

export interface ApiRoute {
  /** First path segment, e.g. `admin` for `/admin/{proxy+}`. */
  readonly firstSegment: string;
  readonly functionName: ApiFunctionName;
}

export const apiRoutes: readonly ApiRoute[] = [
  { firstSegment: 'admin', functionName: 'admin-api' },
  { firstSegment: 'topics', functionName: 'data-api' },
  { firstSegment: 'consumers', functionName: 'data-api' },
];

/**
 * Paths served without a token: the liveness probe only (a load balancer or
 * uptime check has no token). It reveals nothing but "the API answers".
 */
export const publicPaths: readonly { method: string; path: string }[] = [
  { method: 'GET', path: '/admin/v2/brokers/health' },
];

/**
 * How long API Gateway keeps the token authorizer's answer for one
 * Authorization header value (its results cache, keyed by that value) and
 * answers later requests carrying it without invoking the authorizer. The
 * local gateway keeps answers the same way. Safe because the authorizer only
 * authenticates and allows the whole API, and the handlers re-check what a
 * cached answer cannot see (shared/http/credentials.ts). Within it, a rotated
 * token secret or changed superuser roles reach a token already seen only
 * when its entry expires, or when the stage's cache is flushed
 * (`aws apigateway flush-stage-authorizers-cache`).
 */
export const AUTHORIZER_RESULT_TTL_SECONDS = 300;

/**
 * How often the maintenance function runs: an EventBridge rate on AWS, a timer
 * in the embedded stack (infra/local/local-schedule.ts).
 */
export const MAINTENANCE_INTERVAL_MS = 60_000;
/**
 * The maintenance function's timeout (its Lambda setting; the embedded stack gives it the same
 * budget): shorter than MAINTENANCE_INTERVAL_MS, so a run has ended before the next one is due and
 * runs do not pile up (EventBridge does not wait for a run to end; a scheduled rule fires somewhere
 * within its minute, so two runs may still overlap by a few seconds: a run is idempotent).
 */
export const MAINTENANCE_TIMEOUT_SECONDS = 50;
/**
 * The scheduler function's timeout, a sixth of its queue's visibility timeout as AWS advises for
 * SQS event sources (its Lambda setting; the embedded stack gives each batch the same budget).
 */
export const SCHEDULER_TIMEOUT_SECONDS = schedulerQueue.visibilityTimeoutSeconds / 6;
/**
 * How many scheduler invocations its SQS event source runs at once (the event source's maximum
 * concurrency, `ackline:schedulerMaxConcurrency`): the event source stops taking batches there,
 * where a reserved concurrency would let it take them and have them throttled.
 */
export const SCHEDULER_MAX_CONCURRENCY = 5;
/**
 * The reserved concurrency `ackline:reservedConcurrency=true` gives each function (none by
 * default: a reservation must leave the account's unreserved minimum, which a new account's low
 * limit cannot).
 */
export const RECOMMENDED_RESERVED_CONCURRENCY = {
  scheduler: SCHEDULER_MAX_CONCURRENCY,
  maintenance: 1,
} as const;

/** Every entry point under functions/, API-facing or not. */
export const functionNames = ['admin-api', 'data-api', 'authorizer', 'scheduler', 'maintenance'] as const;
export type FunctionName = (typeof functionNames)[number];

/**
 * API Gateway's own answers (gateway responses: the authorizer's refusals, an integration that
 * times out), rewritten to ackline's `{ "reason": ... }` shape. The local gateway answers with the
 * same bodies. `unauthorized` answers a request without an Authorization header, which API Gateway
 * refuses without invoking the authorizer (its identity source is missing); the authorizer itself
 * never throws 'Unauthorized' nor denies, so every other 401 comes from the handlers with the
 * failed check's reason. `authorizerFailure` answers an authorizer that fails (its key unreadable).
 */
export const gatewayResponses = {
  unauthorized: { statusCode: 401, reason: tokenRefusalReasons.missing },
  authorizerFailure: { statusCode: 500, reason: 'Internal server error: the authorizer failed' },
  accessDenied: { statusCode: 403, reason: 'Forbidden: the token does not allow this call' },
  missingRoute: { statusCode: 404, reason: 'No route for this path' },
  payloadTooLarge: { statusCode: 413, reason: 'Request body is larger than 10 MB' },
  /** The integration (the function) did not answer within API_INTEGRATION_TIMEOUT_MS. */
  integrationTimeout: { statusCode: 504, reason: 'Endpoint request timed out' },
} as const;

/**
 * API Gateway's integration timeout for a REST API, 29 s (defined with the answer deadline the
 * handlers derive from it). The API functions' timeout equals it; their answers are due 4 s
 * before it, counted from the request's start (shared/http/answer-deadline.ts).
 */
export { API_INTEGRATION_TIMEOUT_MS } from '../shared/http/answer-deadline.ts';

/** API Gateway's request payload limit. */
export const MAX_REQUEST_BODY_BYTES = 10 * 1024 * 1024;

/**
 * What API Gateway answers when Lambda refuses a proxy invocation for its size (over
 * LAMBDA_PAYLOAD_LIMIT_BYTES, 6,291,456 bytes, each way: shared/http/lambda-payload.ts). The local
 * gateway answers with these bodies; on AWS no gateway response rewrites them, so the body there
 * is API Gateway's own (`{"message": ...}`) and clients go by the status. See
 * docs/design/aws-limits.md.
 */
export const invocationRefusals = {
  /**
   * The proxy event (the serialized APIGatewayProxyEvent: body, headers, query and context) is over
   * the limit: Lambda refuses the invoke (RequestTooLargeException, 413), the function never runs.
   */
  requestTooLarge: {
    statusCode: 413,
    reason: 'Request is too large for the function: its proxy event is over 6,291,456 bytes',
  },
  /**
   * The function's answer (the serialized proxy result) is over the limit: the invocation fails
   * after the function did its work (Function.ResponseSizeTooLarge) and API Gateway answers 502.
   */
  responseTooLarge: { statusCode: 502, reason: 'Internal server error' },
} as const;
