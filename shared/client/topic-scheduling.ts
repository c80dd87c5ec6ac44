import type { AdminHttp } from './admin-http.ts';
import { pathSegment, topicPath } from './admin-paths.ts';
import { checkCount } from './entry-id.ts';
import { AcklineAdminArgumentError } from './errors.ts';
import type { JsonValue } from './lossless-json.ts';

/** Which entries a scheduled view lists (issue 24). */
export interface ScheduledQuery {
  /** Epoch ms (default 0: everything waiting, overdue first). */
  readonly from?: number;
  /** Epoch ms, included. */
  readonly until?: number;
  /** 1 to 1,000 (default 100); with `histogramSeconds`, 1 to 100,000 (default 10,000). */
  readonly limit?: number;
  /** The previous answer's `nextPageToken`. */
  readonly pageToken?: string;
  /** Count per bucket of this many seconds instead of listing. */
  readonly histogramSeconds?: number;
}

/** Which held entries a pending view lists. */
export interface PendingQuery {
  /** Only what this consumer holds. */
  readonly consumer?: string;
  readonly limit?: number;
  readonly pageToken?: string;
}

/** Where one waiting message moves. */
export interface RescheduleRequest {
  /** `ledgerId:entryId` (a MessageId's `:partitionIndex` may follow). */
  readonly messageId: string;
  /** Epoch ms, not in the past. */
  readonly deliverAt: number;
  /** Allow a time earlier than the one its consumer's policy (or its deliverAt) gave. */
  readonly earlier?: boolean;
  readonly dryRun?: boolean;
}

function subscriptionPath(topic: string, subscription: string): string {
  return `${topicPath(topic)}/subscription/${pathSegment(subscription, 'subscription')}`;
}

/** GET `.../subscription/{sub}/scheduled`: what waits, in due order (or a histogram). */
export async function getScheduled(
  http: AdminHttp,
  target: { readonly topic: string; readonly subscription: string },
  query: ScheduledQuery,
): Promise<JsonValue | undefined> {
  const params: [string, string][] = [];
  if (query.from !== undefined) params.push(['from', String(checkCount(query.from, 'from', 0))]);
  if (query.until !== undefined) params.push(['until', String(checkCount(query.until, 'until', 0))]);
  if (query.limit !== undefined) params.push(['limit', String(checkCount(query.limit, 'limit', 1))]);
  if (query.pageToken) params.push(['pageToken', query.pageToken]);
  if (query.histogramSeconds !== undefined) {
    params.push(['histogram', String(checkCount(query.histogramSeconds, 'histogram seconds', 1))]);
  }
  const path = `${subscriptionPath(target.topic, target.subscription)}/scheduled`;
  return http.send({ method: 'GET', path, query: params });
}

/** GET `.../subscription/{sub}/pending`: who holds what. */
export async function getPending(
  http: AdminHttp,
  target: { readonly topic: string; readonly subscription: string },
  query: PendingQuery,
): Promise<JsonValue | undefined> {
  const params: [string, string][] = [];
  if (query.consumer) params.push(['consumer', query.consumer]);
  if (query.limit !== undefined) params.push(['limit', String(checkCount(query.limit, 'limit', 1))]);
  if (query.pageToken) params.push(['pageToken', query.pageToken]);
  const path = `${subscriptionPath(target.topic, target.subscription)}/pending`;
  return http.send({ method: 'GET', path, query: params });
}

/** POST `.../subscription/{sub}/reschedule`: moves one waiting message's due time. */
export async function postReschedule(
  http: AdminHttp,
  target: { readonly topic: string; readonly subscription: string },
  request: RescheduleRequest,
): Promise<JsonValue | undefined> {
  if (!/^\d+:\d+(:-?\d+)?$/.test(request.messageId)) {
    throw new AcklineAdminArgumentError(
      `Invalid message id '${request.messageId}': expected ledgerId:entryId`,
    );
  }
  const path = `${subscriptionPath(target.topic, target.subscription)}/reschedule`;
  return http.send({
    method: 'POST',
    path,
    query: request.dryRun ? [['dryRun', 'true']] : [],
    body: {
      messageId: request.messageId,
      deliverAt: checkCount(request.deliverAt, 'deliverAt', 0),
      ...(request.earlier ? { earlier: true } : {}),
    },
  });
}

/** GET `.../subscription/{sub}/preview`: a message's next redeliveries under a consumer's policy. */
export async function getPreview(
  http: AdminHttp,
  target: { readonly topic: string; readonly subscription: string },
  query: { readonly messageId: string; readonly consumer?: string; readonly count?: number },
): Promise<JsonValue | undefined> {
  const params: [string, string][] = [['messageId', query.messageId]];
  if (query.consumer) params.push(['consumer', query.consumer]);
  if (query.count !== undefined) params.push(['count', String(checkCount(query.count, 'count', 1))]);
  const path = `${subscriptionPath(target.topic, target.subscription)}/preview`;
  return http.send({ method: 'GET', path, query: params });
}
