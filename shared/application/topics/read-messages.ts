import { MessageNotFoundError } from '../../domain/catalog-errors.ts';
import { ValidationError } from '../../domain/errors.ts';
import type { Position } from '../../domain/position.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import { requireAction } from '../tenancy/authorization.ts';
import type { Principal } from '../tenancy/principal.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { type MessageView, messageView } from './message-view.ts';
import { loadCursor, requireSubscription, resolvePosition, resolveTopic } from './topic-lookup.ts';

/** Which message peekMessage reads: the `messagePosition`-th of a subscription's backlog. */
export interface PeekMessageRequest {
  readonly subscriptionName: string;
  /** 1-based: 1 is the first message of the backlog (Pulsar's peekNthMessage `messagePosition`). */
  readonly messagePosition: number;
}

/**
 * Peek the n-th message (1-based) of a subscription's backlog without
 * consuming it. A partitioned topic's backlog is read partition after
 * partition.
 */
export async function peekMessage(
  ports: UseCasePorts,
  principal: Principal | undefined,
  topic: TopicName,
  request: PeekMessageRequest,
): Promise<MessageView> {
  const { subscriptionName, messagePosition: n } = request;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new ValidationError(`Message position must be an integer >= 1, got ${n}`);
  }
  await requireAction(ports.permissions, principal, topic, ['consume']);
  const resolved = await resolveTopic(ports, topic);
  let remaining = n;
  for (const partition of resolved.partitions) {
    const subscription = await requireSubscription(ports, partition, subscriptionName);
    const { cursor } = await loadCursor(ports, partition, subscription);
    const backlog = cursor.backlog();
    if (remaining > backlog) {
      remaining -= backlog;
      continue;
    }
    const position = cursor.nthBacklogPosition(remaining) as Position;
    const entry = await ports.ledger.readEntry(position);
    if (!entry) break;
    return messageView(partition, entry);
  }
  throw new MessageNotFoundError(
    `No message at position ${n} of the backlog of subscription ${subscriptionName} on ${topic.toString()}`,
  );
}

/** Get one message by `ledgerId:entryId` (Pulsar's get-message-by-id). */
export async function getMessageById(
  ports: UseCasePorts,
  principal: Principal | undefined,
  topic: TopicName,
  position: Position,
): Promise<MessageView> {
  await requireAction(ports.permissions, principal, topic, ['consume']);
  const resolved = await resolveTopic(ports, topic);
  const { partition } = await resolvePosition(ports, resolved, position);
  const entry = await ports.ledger.readEntry(position);
  if (!entry)
    throw new MessageNotFoundError(`Message ${position.toString()} not found in topic ${topic.toString()}`);
  return messageView(partition, entry);
}
