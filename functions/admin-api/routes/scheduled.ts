import { listPending } from '../../../shared/application/subscriptions/pending-messages.ts';
import { previewMessage } from '../../../shared/application/subscriptions/preview-redeliveries.ts';
import { rescheduleMessage } from '../../../shared/application/subscriptions/reschedule-message.ts';
import {
  listScheduled,
  type ScheduledRequest,
  scheduledHistogram,
} from '../../../shared/application/subscriptions/scheduled-messages.ts';
import type { UseCasePorts } from '../../../shared/application/use-case-ports.ts';
import { ValidationError } from '../../../shared/domain/errors.ts';
import { NO_END_MS } from '../../../shared/domain/scheduled-order.ts';
import type { HttpRequest, Route } from '../../../shared/http/http-types.ts';
import { ok } from '../../../shared/http/http-types.ts';
import {
  boundedName,
  jsonBody,
  queryBoolean,
  queryValue,
  refuseUnknownQuery,
  safeInteger,
} from '../../../shared/http/request-parsing.ts';
import { SUBSCRIPTION, topicOf } from './admin-paths.ts';

/** Entries a page lists by default, and at most. */
export const SCHEDULED_DEFAULT_LIMIT = 100;
export const SCHEDULED_MAX_LIMIT = 1_000;
/** Entries a histogram counts by default, and at most, per call (a token counts on). */
export const HISTOGRAM_DEFAULT_LIMIT = 10_000;
export const HISTOGRAM_MAX_LIMIT = 100_000;

/** What waits on a subscription and who holds what (issue 24): `.../scheduled`, `.../pending`. */
export function scheduledRoutes(ports: UseCasePorts): Route[] {
  return [
    {
      method: 'GET',
      path: `${SUBSCRIPTION}/scheduled`,
      handler: async (request) => {
        refuseUnknownQuery(request, ['from', 'until', 'limit', 'pageToken', 'histogram']);
        const bucket = queryValue(request, 'histogram');
        if (bucket !== undefined) {
          const bucketSeconds = safeInteger(bucket, 'histogram (bucket seconds)', 1);
          const limit = limitOf(request, HISTOGRAM_DEFAULT_LIMIT, HISTOGRAM_MAX_LIMIT);
          return ok(await scheduledHistogram(ports, { ...scheduledRequest(request, limit), bucketSeconds }));
        }
        const limit = limitOf(request, SCHEDULED_DEFAULT_LIMIT, SCHEDULED_MAX_LIMIT);
        return ok(await listScheduled(ports, scheduledRequest(request, limit)));
      },
    },
    {
      method: 'GET',
      path: `${SUBSCRIPTION}/pending`,
      handler: async (request) => {
        refuseUnknownQuery(request, ['consumer', 'limit', 'pageToken']);
        const consumer = queryValue(request, 'consumer');
        const pageToken = queryValue(request, 'pageToken');
        return ok(
          await listPending(ports, {
            principal: request.principal,
            topic: topicOf(request),
            subscription: request.params.subscription as string,
            limit: limitOf(request, SCHEDULED_DEFAULT_LIMIT, SCHEDULED_MAX_LIMIT),
            ...(consumer ? { consumerId: boundedName(consumer, 'consumer') } : {}),
            ...(pageToken ? { pageToken } : {}),
          }),
        );
      },
    },
    {
      method: 'GET',
      path: `${SUBSCRIPTION}/preview`,
      handler: async (request) => {
        refuseUnknownQuery(request, ['messageId', 'consumer', 'count']);
        const messageId = queryValue(request, 'messageId');
        if (!messageId) throw new ValidationError('messageId (ledgerId:entryId) is required');
        const consumer = queryValue(request, 'consumer');
        const count = queryValue(request, 'count');
        return ok(
          await previewMessage(ports, {
            principal: request.principal,
            topic: topicOf(request),
            subscription: request.params.subscription as string,
            messageId: boundedName(messageId, 'messageId'),
            count: count === undefined ? 5 : safeInteger(count, 'count', 1),
            ...(consumer ? { consumerId: boundedName(consumer, 'consumer') } : {}),
          }),
        );
      },
    },
    {
      method: 'POST',
      path: `${SUBSCRIPTION}/reschedule`,
      handler: async (request) => {
        refuseUnknownQuery(request, ['dryRun']);
        const body = rescheduleBodyOf(jsonBody(request));
        return ok(
          await rescheduleMessage(ports, {
            principal: request.principal,
            topic: topicOf(request),
            subscription: request.params.subscription as string,
            ...body,
            dryRun: queryBoolean(request, 'dryRun'),
            requestId: request.requestId,
          }),
        );
      },
    },
  ];
}

/** `{"messageId": "ledgerId:entryId[:partitionIndex]", "deliverAt": epochMs, "earlier"?: boolean}`, nothing else. */
function rescheduleBodyOf(body: unknown): { messageId: string; deliverAtMs: number; earlier: boolean } {
  const shape =
    'The body must be {"messageId": "ledgerId:entryId", "deliverAt": <epoch ms>, "earlier"?: true|false}';
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ValidationError(shape);
  const { messageId, deliverAt, earlier, ...rest } = body as Record<string, unknown>;
  if (Object.keys(rest).length > 0) {
    throw new ValidationError(`${shape}; unknown field ${Object.keys(rest).join(', ')}`);
  }
  if (typeof messageId !== 'string' || messageId.length === 0 || messageId.length > 64) {
    throw new ValidationError(`${shape}; messageId is missing or not a string`);
  }
  if (
    typeof deliverAt !== 'number' ||
    !Number.isSafeInteger(deliverAt) ||
    deliverAt < 0 ||
    deliverAt > NO_END_MS
  ) {
    throw new ValidationError(`${shape}; deliverAt must be epoch milliseconds`);
  }
  if (earlier !== undefined && typeof earlier !== 'boolean') {
    throw new ValidationError(`${shape}; earlier must be true or false`);
  }
  return { messageId, deliverAtMs: deliverAt, earlier: earlier === true };
}

function scheduledRequest(request: HttpRequest, limit: number): ScheduledRequest {
  const from = queryValue(request, 'from');
  const until = queryValue(request, 'until');
  const pageToken = queryValue(request, 'pageToken');
  const fromMs = from === undefined ? undefined : safeInteger(from, 'from (epoch ms)');
  const untilMs = until === undefined ? undefined : safeInteger(until, 'until (epoch ms)');
  if (fromMs !== undefined && untilMs !== undefined && untilMs < fromMs) {
    throw new ValidationError(`until (${untilMs}) is before from (${fromMs})`);
  }
  return {
    principal: request.principal,
    topic: topicOf(request),
    subscription: request.params.subscription as string,
    limit,
    ...(fromMs !== undefined ? { fromMs } : {}),
    ...(untilMs !== undefined ? { untilMs } : {}),
    ...(pageToken ? { pageToken } : {}),
  };
}

function limitOf(request: HttpRequest, fallback: number, max: number): number {
  const value = queryValue(request, 'limit');
  if (value === undefined) return fallback;
  const limit = safeInteger(value, 'limit', 1);
  if (limit > max) throw new ValidationError(`limit must be at most ${max}, got ${limit}`);
  return limit;
}
