import { firstOverlap, HashRangeConflictError } from '../../domain/key-shared-sticky.ts';
import type { ConsumerRecord } from '../../ports/consumer-registry.ts';
import { cursorOf, engineOf } from '../engine/engine-ports.ts';
import { keySharedJoined } from '../engine/key-shared-routing.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { subscriptionKey } from './consumer-session.ts';
import type { SubscribeRequest } from './subscribe-consumer.ts';

/**
 * Key_Shared sticky consumers (Pulsar's HashRangeExclusiveStickyKeyConsumerSelector): a joining
 * consumer is refused (HashRangeConflictError, 409) when its ranges overlap those of a member of
 * the subscription, or when it is sticky and the members are not (AUTO_SPLIT), or the other way
 * round. Members whose lease lapsed keep their ranges until maintenance removes them, as they keep
 * their keys. Cost: the subscription's member list (one Query) and each member's record (cached).
 */
export async function requireKeySharedFit(
  ports: UseCasePorts,
  request: Pick<SubscribeRequest, 'topic' | 'subscription' | 'subscriptionType' | 'hashRanges'>,
  consumerId: string,
): Promise<void> {
  // Stryker disable next-line ConditionalExpression: equivalent, other types' members have no ranges and the request none, so nothing is refused (the guard saves the member Query)
  if (request.subscriptionType !== 'Key_Shared') return;
  const key = subscriptionKey(request.topic.toString(), request.subscription);
  for (const id of await ports.consumers.members(key, 0)) {
    if (id === consumerId) continue;
    const member = await ports.consumers.recent(id);
    if (member === undefined) continue;
    const sticky = member.hashRanges !== undefined;
    if (sticky !== (request.hashRanges !== undefined)) {
      throw new HashRangeConflictError(
        // Stryker disable next-line StringLiteral: message text only
        `Subscription ${request.subscription} has Key_Shared consumers in ${sticky ? 'STICKY' : 'AUTO_SPLIT'} mode; a consumer in ${sticky ? 'AUTO_SPLIT' : 'STICKY'} mode cannot join it`,
      );
    }
    // Stryker disable next-line ArrayDeclaration: equivalent, past the mode check both sides have ranges or neither has
    const overlap = firstOverlap(request.hashRanges ?? [], member.hashRanges ?? []);
    if (overlap) {
      const [mine, theirs] = overlap;
      throw new HashRangeConflictError(
        `Range conflict with consumer ${member.consumerName}: [${mine.start}, ${mine.end}] overlaps its [${theirs.start}, ${theirs.end}]`,
      );
    }
  }
}

/**
 * The same check once the consumer is a member (registered, with its lease): of two consumers that
 * joined at once with overlapping ranges, at least one sees the other here, and leaves again
 * (record deleted, join marks cleared) before it was handed anything.
 * @throws HashRangeConflictError after leaving.
 */
export async function requireKeySharedFitAfterJoin(
  ports: UseCasePorts,
  consumer: ConsumerRecord,
  request: Pick<SubscribeRequest, 'topic' | 'subscription' | 'subscriptionType' | 'hashRanges'>,
): Promise<void> {
  // Stryker disable next-line ConditionalExpression: equivalent, an AUTO_SPLIT consumer's check again refuses only a mode mismatch, as the sticky one's does (the guard saves the member Query)
  if (consumer.hashRanges === undefined) return;
  try {
    await requireKeySharedFit(ports, request, consumer.consumerId);
  } catch (error) {
    await ports.consumers.leave(subscriptionKey(consumer.topic, consumer.subscription), consumer.consumerId);
    await ports.consumers.delete(consumer.consumerId);
    for (const partition of consumer.partitions) {
      await keySharedJoined(engineOf(ports), cursorOf(consumer, partition), consumer.consumerId);
    }
    throw error;
  }
}
