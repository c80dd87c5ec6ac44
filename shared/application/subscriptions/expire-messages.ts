import { ValidationError } from '../../domain/errors.ts';
import { Position, positionBefore } from '../../domain/position.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import type { SubscriptionRecord } from '../../ports/topic-catalog.ts';
import { engineOf } from '../engine/engine-ports.ts';
import { type CursorMove, markDeleteForward } from '../engine/reset-cursor.ts';
import { firstPublishedAtOrAfter } from '../topics/find-by-publish-time.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import {
  type CursorOperationOutcome,
  type CursorOperationRequest,
  runCursorOperation,
} from './cursor-operation.ts';

/**
 * Pulsar's `expireMessages/{expireTimeInSeconds}` (PersistentMessageExpiryMonitor): on every
 * partition the call addresses, every message published more than `expireTimeInSeconds` ago is
 * acknowledged, by moving mark-delete forward to the last such message (never back; individual
 * acknowledgements after it stay). As Pulsar's `isEntryExpired`, 0 expires nothing. Without a
 * subscription name: every subscription of the topic (`all_subscription`). Audited; `dryRun`
 * answers where each cursor would go.
 */
export function expireMessages(
  ports: UseCasePorts,
  request: CursorOperationRequest & { readonly expireTimeInSeconds: number },
): Promise<CursorOperationOutcome> {
  const seconds = request.expireTimeInSeconds;
  if (!Number.isSafeInteger(seconds) || seconds < 0) {
    throw new ValidationError(`expireTimeInSeconds must be an integer >= 0, got ${seconds}`);
  }
  const nowMs = ports.clock.nowMs();
  return runCursorOperation(ports, request, {
    operation: 'expireMessages',
    target: `expireTimeInSeconds ${seconds}`,
    move: ({ partition, subscription }, dryRun) =>
      expireOnPartition(ports, { partition, subscription, ttlSeconds: seconds, nowMs, dryRun }),
  });
}

/**
 * Expires, on one partition's subscription, what was published more than `ttlSeconds` before
 * `nowMs` (Pulsar: expired when now > publishTime + ttl). Used by the admin call and by
 * maintenance's message TTL. Cost: the publish-time search, the head (read, one write when it moves).
 */
export async function expireOnPartition(
  ports: UseCasePorts,
  request: {
    readonly partition: TopicName;
    readonly subscription: SubscriptionRecord;
    readonly ttlSeconds: number;
    readonly nowMs: number;
    readonly dryRun?: boolean;
  },
): Promise<CursorMove> {
  const { partition, subscription } = request;
  const cursor = { partition, cursorId: subscription.cursorId, type: subscription.type };
  const ctx = engineOf(ports);
  // 0 expires nothing: a move to the very first position changes nothing (and writes nothing).
  if (request.ttlSeconds === 0)
    return markDeleteForward(ctx, cursor, Position.beforeFirst(0n), { dryRun: true });
  const firstKept = await firstPublishedAtOrAfter(
    ports.ledger,
    partition,
    request.nowMs - request.ttlSeconds * 1_000,
  );
  return markDeleteForward(ctx, cursor, positionBefore(firstKept), { dryRun: request.dryRun ?? false });
}
