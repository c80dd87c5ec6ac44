import {
  AcklineError,
  ConflictError,
  PreconditionFailedError,
  ValidationError,
} from '../../domain/errors.ts';
import { Position } from '../../domain/position.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import { ringAt } from '../consumers/doorbells.ts';
import { engineOf } from '../engine/engine-ports.ts';
import { type RescheduleOutcome, rescheduleEntry } from '../engine/reschedule.ts';
import { requireAction, requirePrincipal } from '../tenancy/authorization.ts';
import type { Principal } from '../tenancy/principal.ts';
import { requireSubscription, resolvePosition, resolveTopic } from '../topics/topic-lookup.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { parseId } from './acknowledge-message.ts';
import { namesOtherPartition, otherPartitionText } from './named-partition.ts';
import { messageIdOf } from './scheduled-messages.ts';

export interface RescheduleMessageRequest {
  readonly principal: Principal | undefined;
  readonly topic: TopicName;
  readonly subscription: string;
  /** `ledgerId:entryId[:partitionIndex]`, as given. */
  readonly messageId: string;
  /** Epoch ms: never in the past. */
  readonly deliverAtMs: number;
  /** Earlier than the due time its consumer's policy (or its deliverAt) gave, only when true. */
  readonly earlier: boolean;
  readonly dryRun: boolean;
  readonly requestId: string;
}

export interface RescheduleAnswer {
  readonly messageId: string;
  readonly subscription: string;
  /** The due time it had (epoch ms). */
  readonly from: number;
  /** The due time it has now (dry run: would have). */
  readonly deliverAt: number;
  /** The redeliveryCount its next delivery carries. */
  readonly redeliveryCount: number;
  readonly dryRun: boolean;
}

/**
 * Moves one waiting message's due time on one subscription (issue 24, criterion 3); cancelling
 * stays acknowledgeMessage (PIP-423).
 *
 * 1. The caller needs `acknowledge_message` on the topic (403), as for PIP-423's operator calls.
 * 2. deliverAt must not be in the past (400); the id must name a written message of the topic
 *    (412 malformed, 404 absent); the subscription must exist on its partition (404).
 * 3. The entry must wait: in the redelivery tracker (released: nack backoff, a gone consumer, a
 *    delayed message the dispatcher passed, an earlier reschedule), or not reached by the
 *    dispatcher yet on Shared/Key_Shared (a delayed message or backlog: its due time is kept as an
 *    override the dispatcher honours); held, acknowledged, or not reached on Exclusive/Failover
 *    answers 409 with why; earlier than its due time needs `earlier` (412).
 * 4. Dry run: what would change. Otherwise the engine moves it and the doorbell rings at the new
 *    time. Every outcome is audited (operation `reschedule`).
 */
export async function rescheduleMessage(
  ports: UseCasePorts,
  request: RescheduleMessageRequest,
): Promise<RescheduleAnswer> {
  const caller = requirePrincipal(request.principal);
  await requireAction(ports.permissions, caller, request.topic, ['acknowledge_message']);
  try {
    const answer = await reschedule(ports, request);
    await audit(ports, request, caller, request.dryRun ? 'dry run' : `rescheduled from ${answer.from}`);
    return answer;
  } catch (error) {
    // Refusals of authorized callers are audited too (an operator's failed attempt matters).
    if (error instanceof AcklineError) {
      await audit(ports, request, caller, `refused: ${error.message}`);
    }
    throw error;
  }
}

async function reschedule(ports: UseCasePorts, request: RescheduleMessageRequest): Promise<RescheduleAnswer> {
  const now = ports.clock.nowMs();
  if (request.deliverAtMs < now) {
    throw new ValidationError(
      `deliverAt ${request.deliverAtMs} is in the past (now ${now}): a due time is never moved back`,
    );
  }
  const position = parseMessageId(request.messageId);
  const resolved = await resolveTopic(ports, request.topic);
  const { partition } = await resolvePosition(ports, resolved, position);
  if (namesOtherPartition(request.messageId, partition)) {
    throw new PreconditionFailedError(
      `${otherPartitionText(request.messageId, partition)}: nothing was moved`,
    );
  }
  const subscription = await requireSubscription(ports, partition, request.subscription);
  const cursor = { partition, cursorId: subscription.cursorId, type: subscription.type };
  const outcome = await rescheduleEntry(engineOf(ports), cursor, {
    position,
    dueAtMs: request.deliverAtMs,
    earlier: request.earlier,
    dryRun: request.dryRun,
  });
  const messageId = messageIdOf(position, partition.partitionIndex);
  if (outcome.kind !== 'rescheduled') throw refusal(outcome, messageId, request.subscription);
  if (!request.dryRun) await ringAt(ports, subscription.cursorId, request.deliverAtMs);
  return {
    messageId,
    subscription: request.subscription,
    from: outcome.fromDueAtMs,
    deliverAt: request.deliverAtMs,
    redeliveryCount: outcome.deliveries,
    dryRun: request.dryRun,
  };
}

function refusal(
  outcome: Exclude<RescheduleOutcome, { kind: 'rescheduled' }>,
  id: string,
  sub: string,
): Error {
  switch (outcome.kind) {
    case 'earlierThanPolicy':
      return new PreconditionFailedError(
        `${id} is due at ${outcome.policyDueAtMs} on ${sub} (its consumer's policy or its deliverAt); moving it earlier needs earlier=true`,
      );
    case 'held':
      return new ConflictError(
        `${id} is held by consumer ${outcome.consumerId} on ${sub}: it waits for its acknowledgement (see .../pending), not for a due time`,
      );
    case 'notWaiting':
      return new ConflictError(
        outcome.why === 'acknowledged'
          ? `${id} is acknowledged on ${sub}: nothing waits`
          : `${id} was not dispatched on ${sub} yet, and ${sub} hands out first deliveries in log order (Exclusive or Failover ignore due times, as they ignore deliverAt): cancel with acknowledgeMessage`,
      );
    case 'tooManyOverrides':
      return new ConflictError(
        `${outcome.max} reschedules of messages the dispatcher has not reached already wait on ${sub} (this partition); once a consumer receives past them, try again, or cancel with acknowledgeMessage`,
      );
  }
}

/** `ledgerId:entryId`, optionally `:partitionIndex` (checked against the partition the ledger names). */
function parseMessageId(id: string): Position {
  const parts = id.split(':');
  if (parts.length < 2 || parts.length > 3) {
    throw new PreconditionFailedError(`messageId must be ledgerId:entryId[:partitionIndex], got '${id}'`);
  }
  return Position.of(parseId(parts[0], 'ledgerId'), parseId(parts[1], 'entryId'));
}

async function audit(
  ports: UseCasePorts,
  request: RescheduleMessageRequest,
  caller: Principal,
  outcome: string,
): Promise<void> {
  await ports.audit.record({
    operation: 'reschedule',
    atMs: ports.clock.nowMs(),
    role: caller.role,
    topic: request.topic.partitionedTopicName.toString(),
    position: `${request.messageId} deliverAt ${request.deliverAtMs}${request.earlier ? ' earlier' : ''}`,
    subscriptions: [request.subscription],
    dryRun: request.dryRun,
    outcome,
    requestId: request.requestId,
  });
}
