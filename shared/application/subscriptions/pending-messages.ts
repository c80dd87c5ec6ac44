import { ValidationError } from '../../domain/errors.ts';
import { Position } from '../../domain/position.ts';
import { pageTokenScope, scopedToken, unscopedToken } from '../../domain/scheduled-order.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import { subscriptionKey } from '../consumers/consumer-session.ts';
import { engineOf } from '../engine/engine-ports.ts';
import { type HeldEntry, heldOnCursor } from '../engine/pending-view.ts';
import { requireAction } from '../tenancy/authorization.ts';
import type { Principal } from '../tenancy/principal.ts';
import { requireSubscription, resolveTopic } from '../topics/topic-lookup.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { messageIdOf } from './scheduled-messages.ts';

/** Pages of a partition's window one call walks at most (20,000 entries). */
export const PENDING_PAGES_PER_CALL = 200;

/** One entry handed out and not acknowledged, as the admin API answers it. */
export interface PendingMessage {
  readonly messageId: string;
  readonly consumer: string;
  /** Epoch ms of its last hand-out. */
  readonly deliveredAt: number;
  /** The redeliveryCount it was handed out with. */
  readonly redeliveryCount: number;
  /** When it comes back if not acknowledged (epoch ms); null: only when its consumer goes. */
  readonly comesBackAt: number | null;
  /** `ackTimeout`, or `lease` (its consumer's lease lapses first); null with comesBackAt. */
  readonly comesBackBecause: 'ackTimeout' | 'lease' | null;
}

export interface PendingPage {
  readonly messages: PendingMessage[];
  readonly nextPageToken?: string;
}

export interface PendingRequest {
  readonly principal: Principal | undefined;
  readonly topic: TopicName;
  readonly subscription: string;
  readonly consumerId?: string;
  readonly limit: number;
  readonly pageToken?: string;
}

/**
 * Who holds what on a subscription (every partition of a partitioned topic, one after the other).
 *
 * 1. The caller needs `consume` or `acknowledge_message` on the topic (403); the subscription must
 *    exist (404).
 * 2. From the token's partition and position, each partition's held entries in log order
 *    (engine/pending-view), at most PENDING_PAGES_PER_CALL pages a partition and call.
 * 3. Each entry comes back at its ack timeout or when its consumer's lease lapses, whichever is
 *    first (the subscription's leases, one read).
 * Cost: per partition walked, what heldOnCursor states; one read of the leases.
 */
export async function listPending(ports: UseCasePorts, request: PendingRequest): Promise<PendingPage> {
  await requireAction(ports.permissions, request.principal, request.topic, [
    'consume',
    'acknowledge_message',
  ]);
  const resolved = await resolveTopic(ports, request.topic);
  const scope = pageTokenScope(
    'pending',
    request.topic.partitionedTopicName.toString(),
    request.subscription,
  );
  const token = request.pageToken ? decodePendingToken(request.pageToken, scope) : undefined;
  const leases = new Map(
    (
      await ports.consumers.leases(
        subscriptionKey(request.topic.partitionedTopicName.toString(), request.subscription),
      )
    ).map((lease) => [lease.consumerId, lease.untilMs]),
  );
  const ctx = engineOf(ports);
  const messages: PendingMessage[] = [];
  for (const partition of resolved.partitions) {
    if (token && partition.partitionIndex < token.partitionIndex) continue;
    const record = await requireSubscription(ports, partition, request.subscription);
    const from = token?.partitionIndex === partition.partitionIndex ? token.position : undefined;
    const held = await heldOnCursor(
      ctx,
      { partition, cursorId: record.cursorId, type: record.type },
      {
        ...(from ? { from } : {}),
        ...(request.consumerId !== undefined ? { consumerId: request.consumerId } : {}),
        limit: request.limit - messages.length,
        maxPages: PENDING_PAGES_PER_CALL,
      },
    );
    messages.push(...held.entries.map((entry) => pendingMessage(entry, partition.partitionIndex, leases)));
    if (held.next) {
      return { messages, nextPageToken: encodePendingToken(partition.partitionIndex, held.next, scope) };
    }
    if (messages.length >= request.limit) {
      const following = resolved.partitions.find((p) => p.partitionIndex > partition.partitionIndex);
      return following
        ? {
            messages,
            nextPageToken: encodePendingToken(following.partitionIndex, Position.of(0n, 0n), scope),
          }
        : { messages };
    }
  }
  return { messages };
}

function pendingMessage(
  entry: HeldEntry,
  partitionIndex: number,
  leases: ReadonlyMap<string, number>,
): PendingMessage {
  const back = comesBack(entry.timeoutAtMs, leases.get(entry.consumerId));
  return {
    messageId: messageIdOf(entry.position, partitionIndex),
    consumer: entry.consumerId,
    deliveredAt: entry.deliveredAtMs,
    redeliveryCount: entry.deliveries - 1,
    comesBackAt: back.at,
    comesBackBecause: back.because,
  };
}

/** When a held entry comes back: at its ack timeout or its holder's lease, whichever is first. */
export function comesBack(
  timeoutAtMs: number | undefined,
  leaseUntilMs: number | undefined,
): { at: number | null; because: PendingMessage['comesBackBecause'] } {
  if (leaseUntilMs !== undefined && (timeoutAtMs === undefined || leaseUntilMs < timeoutAtMs)) {
    return { at: leaseUntilMs, because: 'lease' };
  }
  return timeoutAtMs !== undefined ? { at: timeoutAtMs, because: 'ackTimeout' } : { at: null, because: null };
}

function encodePendingToken(partitionIndex: number, position: Position, scope: string): string {
  return scopedToken(`${partitionIndex}.${position.ledgerId}.${position.entryId}`, scope);
}

function decodePendingToken(token: string, scope: string): { partitionIndex: number; position: Position } {
  const match = /^(-1|\d{1,6})\.(\d{1,19})\.(\d{1,19})$/.exec(unscopedToken(token, scope));
  if (!match) throw new ValidationError(`pageToken '${token}' is not a token this API gave`);
  return { partitionIndex: Number(match[1]), position: Position.of(match[2] as string, match[3] as string) };
}
