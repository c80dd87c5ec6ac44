/**
 * API Gateway's integration timeout for a REST API (29 s, its default and the most it allows
 * without a quota increase): when the function has not answered by then, the client gets 504
 * (gatewayResponses.integrationTimeout in infra/api-routes.ts) while the function runs on. It
 * counts from the integration request: a cold start (Lambda's Init phase) is inside it.
 */
export const API_INTEGRATION_TIMEOUT_MS = 29_000;

/**
 * What an answer keeps back from API Gateway's integration timeout: the answer's way back (the
 * function returning up to 6 MB, Lambda and API Gateway passing it on), and any difference
 * between API Gateway's clock, which stamps the request's start, and the function's. A use case
 * that writes before it answers keeps back, within its deadline, what those writes take with the
 * SDK's retries (see receiveMessages, publishMessages).
 */
export const ANSWER_MARGIN_MS = 4_000;

/** How long after the request's start its answer must be on its way: 25 s. */
export const ANSWER_WITHIN_MS = API_INTEGRATION_TIMEOUT_MS - ANSWER_MARGIN_MS;

/**
 * The epoch ms by which a request's answer must be on its way: ANSWER_WITHIN_MS after the request's
 * start as API Gateway stamped it (`requestContext.requestTimeEpoch`, epoch ms in a REST API's
 * proxy event), whatever a cold start or the authorizer took of it. The function's own start
 * (`nowMs`) stands in for a start that is missing (a handler called directly) or not a number,
 * and for one later than it (the two clocks apart: the earlier instant is the safe one).
 *
 * @example
 * answerDeadlineMs(event.requestContext.requestTimeEpoch, clock.nowMs()); // start + 25,000
 */
export function answerDeadlineMs(requestTimeEpochMs: unknown, nowMs: number): number {
  const startMs =
    typeof requestTimeEpochMs === 'number' && Number.isFinite(requestTimeEpochMs)
      ? Math.min(requestTimeEpochMs, nowMs)
      : nowMs;
  return startMs + ANSWER_WITHIN_MS;
}
