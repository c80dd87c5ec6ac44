import { clearBacklog } from '../../../shared/application/subscriptions/clear-backlog.ts';
import type { CursorOperationOutcome } from '../../../shared/application/subscriptions/cursor-operation.ts';
import { expireMessages } from '../../../shared/application/subscriptions/expire-messages.ts';
import {
  resetCursorToEdge,
  resetCursorToMessageId,
  resetCursorToTimestamp,
} from '../../../shared/application/subscriptions/reset-subscription.ts';
import { skipByMessageIds, skipMessages } from '../../../shared/application/subscriptions/skip-messages.ts';
import type { UseCasePorts } from '../../../shared/application/use-case-ports.ts';
import { messageIdsOf, resetCursorBodyOf } from '../../../shared/http/admin-requests.ts';
import type { HttpRequest, HttpResponse, Route } from '../../../shared/http/http-types.ts';
import { noContent, ok } from '../../../shared/http/http-types.ts';
import { jsonBody, queryBoolean, safeInteger } from '../../../shared/http/request-parsing.ts';
import { SUBSCRIPTION, TOPIC, topicOf } from './admin-paths.ts';

/** Moving a subscription's cursor: skip, reset (to a time, a message id or an edge), clear the backlog, expire. */
export function cursorOperationRoutes(ports: UseCasePorts): Route[] {
  return [
    {
      method: 'POST',
      path: `${SUBSCRIPTION}/skip/{count}`,
      handler: async (request) => {
        await skipMessages(ports, request.principal, topicOf(request), {
          subscriptionName: request.params.subscription as string,
          numMessages: safeInteger(request.params.count, 'Number of messages'),
        });
        return noContent();
      },
    },
    {
      method: 'POST',
      path: `${SUBSCRIPTION}/skipByMessageIds`,
      handler: async (request) => {
        await skipByMessageIds(ports, request.principal, topicOf(request), {
          subscriptionName: request.params.subscription as string,
          positions: messageIdsOf(jsonBody(request)),
        });
        return noContent();
      },
    },
    {
      method: 'POST',
      path: `${SUBSCRIPTION}/resetcursor/{timestamp}`,
      handler: (request) => resetCursorToTime(ports, request),
    },
    {
      method: 'POST',
      path: `${SUBSCRIPTION}/resetcursor`,
      handler: (request) => resetCursorToPosition(ports, request),
    },
    {
      method: 'POST',
      path: `${SUBSCRIPTION}/skip_all`,
      handler: async (request) =>
        answered(
          await clearBacklog(ports, {
            ...cursorOperationOf(request),
            subscriptionName: request.params.subscription as string,
          }),
        ),
    },
    {
      method: 'POST',
      path: `${SUBSCRIPTION}/expireMessages/{expireTimeInSeconds}`,
      handler: async (request) =>
        answered(
          await expireMessages(ports, {
            ...cursorOperationOf(request),
            subscriptionName: request.params.subscription as string,
            expireTimeInSeconds: safeInteger(request.params.expireTimeInSeconds, 'expireTimeInSeconds'),
          }),
        ),
    },
    {
      method: 'POST',
      path: `${TOPIC}/all_subscription/expireMessages/{expireTimeInSeconds}`,
      handler: async (request) =>
        answered(
          await expireMessages(ports, {
            ...cursorOperationOf(request),
            expireTimeInSeconds: safeInteger(request.params.expireTimeInSeconds, 'expireTimeInSeconds'),
          }),
        ),
    },
  ];
}

/** POST .../resetcursor/{timestamp}: to the first message published at or after the time (epoch ms). */
async function resetCursorToTime(ports: UseCasePorts, request: HttpRequest): Promise<HttpResponse> {
  return answered(
    await resetCursorToTimestamp(ports, {
      ...cursorOperationOf(request),
      subscriptionName: request.params.subscription as string,
      timestampMs: safeInteger(request.params.timestamp, 'timestamp (epoch ms)'),
    }),
  );
}

/** POST .../resetcursor: the body names a message id or an edge (earliest, latest). */
async function resetCursorToPosition(ports: UseCasePorts, request: HttpRequest): Promise<HttpResponse> {
  const body = resetCursorBodyOf(jsonBody(request));
  if ('edge' in body) {
    return answered(
      await resetCursorToEdge(ports, {
        ...cursorOperationOf(request),
        subscriptionName: request.params.subscription as string,
        edge: body.edge,
        ...(body.partitionIndex !== undefined ? { partitionIndex: body.partitionIndex } : {}),
      }),
    );
  }
  return answered(
    await resetCursorToMessageId(ports, {
      ...cursorOperationOf(request),
      subscriptionName: request.params.subscription as string,
      position: body.position,
      ...(body.partitionIndex !== undefined ? { partitionIndex: body.partitionIndex } : {}),
      isExcluded: body.isExcluded || queryBoolean(request, 'isExcluded'),
    }),
  );
}

/** What every cursor operation reads of the request (Pulsar's `authoritative` is accepted and has no effect). */
function cursorOperationOf(request: HttpRequest) {
  queryBoolean(request, 'authoritative');
  return {
    topic: topicOf(request),
    dryRun: queryBoolean(request, 'dryRun'),
    principal: request.principal,
    requestId: request.requestId,
  };
}

/** 204 when done (Pulsar's answer); a dry run answers 200 with where each cursor would go. */
function answered(outcome: CursorOperationOutcome): HttpResponse {
  return outcome.dryRun ? ok(outcome) : noContent();
}
