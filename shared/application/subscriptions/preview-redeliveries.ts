import type { RunState } from '../../domain/delivery-run.ts';
import {
  ConflictError,
  NotFoundError,
  PreconditionFailedError,
  ValidationError,
} from '../../domain/errors.ts';
import { Position } from '../../domain/position.ts';
import {
  FixedRedeliveryBackoff,
  latestDelay,
  type RedeliveryBackoff,
} from '../../domain/redelivery-backoff.ts';
import {
  type PreviewInput,
  type PreviewPolicy,
  previewRedeliveries,
  type RedeliveryPreview,
} from '../../domain/redelivery-preview.ts';
import { isCumulativeAckType } from '../../domain/subscription-type.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import type { ConsumerRecord } from '../../ports/consumer-registry.ts';
import { subscriptionKey } from '../consumers/consumer-session.ts';
import { engineOf } from '../engine/engine-ports.ts';
import { deliveriesOf } from '../engine/pending-view.ts';
import { requireAction } from '../tenancy/authorization.ts';
import type { Principal } from '../tenancy/principal.ts';
import { requireSubscription, resolvePosition, resolveTopic } from '../topics/topic-lookup.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { parseId } from './acknowledge-message.ts';
import { comesBack } from './pending-messages.ts';
import { messageIdOf } from './scheduled-messages.ts';

/** Redeliveries a preview shows at most. */
export const MAX_PREVIEW_STEPS = 50;

export interface PreviewRequest {
  readonly principal: Principal | undefined;
  readonly topic: TopicName;
  readonly subscription: string;
  readonly messageId: string;
  /** The consumer whose policy decides (default: the subscription's first live consumer). */
  readonly consumerId?: string;
  readonly count: number;
}

export interface PreviewAnswer extends RedeliveryPreview {
  readonly messageId: string;
  readonly consumer: string;
  /** The redeliveryCount of its next delivery, now. */
  readonly redeliveryCount: number;
}

/**
 * For one message on one subscription, the next redeliveries under a consumer's policy, for nack
 * and for ack timeout separately (issue 24, criterion 5): each one's earliest and latest due time
 * (jitter), from its current due time (see startOf), and the count at which it is dead-lettered.
 * Reads only.
 * Cost: the message's partition and subscription, the head and a page, the consumer records.
 */
export async function previewMessage(ports: UseCasePorts, request: PreviewRequest): Promise<PreviewAnswer> {
  await requireAction(ports.permissions, request.principal, request.topic, [
    'consume',
    'acknowledge_message',
  ]);
  const parts = request.messageId.split(':');
  if (parts.length < 2 || parts.length > 3) {
    throw new PreconditionFailedError(
      `messageId must be ledgerId:entryId[:partitionIndex], got '${request.messageId}'`,
    );
  }
  if (!Number.isInteger(request.count) || request.count < 1 || request.count > MAX_PREVIEW_STEPS) {
    throw new ValidationError(`count must be 1 to ${MAX_PREVIEW_STEPS}, got ${request.count}`);
  }
  const position = Position.of(parseId(parts[0], 'ledgerId'), parseId(parts[1], 'entryId'));
  const { partition } = await resolvePosition(ports, await resolveTopic(ports, request.topic), position);
  const subscription = await requireSubscription(ports, partition, request.subscription);
  const consumer = await consumerOf(ports, request);
  const cursor = { partition, cursorId: subscription.cursorId, type: subscription.type };
  const { deliveries, state, overrideDueAtMs } = await deliveriesOf(engineOf(ports), cursor, position);
  // Exclusive and Failover ignore deliverAt: their first delivery is in log order.
  const firstDueAtMs =
    state || isCumulativeAckType(subscription.type)
      ? undefined
      : await firstDueOf(ports, { position, overrideDueAtMs });
  const start = await startOf(ports, {
    request,
    deliveries,
    ...(state ? { state } : {}),
    ...(firstDueAtMs !== undefined ? { firstDueAtMs } : {}),
  });
  const preview = previewRedeliveries(policyOf(ports, consumer), { ...start, count: request.count });
  return {
    messageId: messageIdOf(position, partition.partitionIndex),
    consumer: consumer.consumerId,
    redeliveryCount: start.redeliveryCount,
    ...preview,
  };
}

/**
 * Where the preview starts, from the message's run, so that its first step agrees with `scheduled`
 * and `pending`. Held: the delivery it is in carries deliveries - 1; nacked now, the next is due
 * after the backoff; left unacknowledged, it comes back when `pending` says (its ack timeout or
 * its holder's lease, whichever is first). Released: its next delivery, carrying deliveries, is
 * due at the run's time (a nack's backoff, a reschedule) for either list. Not reached by the
 * dispatcher and held back (its deliverAt, or an operator's due time): its first delivery is
 * due then, as for a released run. Otherwise (never handed out): its first delivery is now.
 */
async function startOf(
  ports: UseCasePorts,
  input: { request: PreviewRequest; deliveries: number; state?: RunState; firstDueAtMs?: number },
): Promise<{ fromCount: number; fromMs: number; redeliveryCount: number; dueMs?: PreviewInput['dueMs'] }> {
  const { state, deliveries } = input;
  const nowMs = ports.clock.nowMs();
  if (input.firstDueAtMs !== undefined) {
    const dueMs = { nack: input.firstDueAtMs, ackTimeout: input.firstDueAtMs };
    return { fromCount: -1, fromMs: nowMs, redeliveryCount: 0, dueMs };
  }
  if (state?.kind === 'released') {
    const dueMs = { nack: state.dueAtMs, ackTimeout: state.dueAtMs };
    return { fromCount: deliveries - 1, fromMs: nowMs, redeliveryCount: deliveries, dueMs };
  }
  if (state?.kind === 'held') {
    const key = subscriptionKey(
      input.request.topic.partitionedTopicName.toString(),
      input.request.subscription,
    );
    const lease = (await ports.consumers.leases(key)).find((l) => l.consumerId === state.consumerId);
    const back = comesBack(state.timeoutAtMs, lease?.untilMs).at;
    const held = { fromCount: deliveries - 1, fromMs: nowMs, redeliveryCount: deliveries - 1 };
    return back === null ? held : { ...held, dueMs: { ackTimeout: back } };
  }
  return { fromCount: deliveries, fromMs: nowMs, redeliveryCount: deliveries };
}

/**
 * When a message the dispatcher has not reached is first due, if later than now: the override an
 * operator set, else its deliverAt. Cost: one entry read, none with an override.
 */
async function firstDueOf(
  ports: UseCasePorts,
  input: { readonly position: Position; readonly overrideDueAtMs: number | undefined },
): Promise<number | undefined> {
  const nowMs = ports.clock.nowMs();
  if (input.overrideDueAtMs !== undefined)
    return input.overrideDueAtMs > nowMs ? input.overrideDueAtMs : undefined;
  const entry = await ports.ledger.readEntry(input.position);
  return entry?.deliverAtMs !== undefined && entry.deliverAtMs > nowMs ? entry.deliverAtMs : undefined;
}

async function consumerOf(ports: UseCasePorts, request: PreviewRequest): Promise<ConsumerRecord> {
  const key = subscriptionKey(request.topic.partitionedTopicName.toString(), request.subscription);
  const members = await ports.consumers.members(key, ports.clock.nowMs());
  const id = request.consumerId ?? members[0];
  if (id === undefined) {
    throw new ConflictError(
      `Subscription ${request.subscription} has no consumer: a consumer's policy decides redeliveries; name one with consumer=`,
    );
  }
  const record = members.includes(id) ? await ports.consumers.get(id) : undefined;
  if (!record)
    throw new NotFoundError(`Consumer ${id} is not a live consumer of subscription ${request.subscription}`);
  return record;
}

function policyOf(ports: UseCasePorts, consumer: ConsumerRecord): PreviewPolicy {
  const { policy } = consumer;
  const nackBackoff = policy.negativeAckRedeliveryBackoff
    ? ports.backoffs.fromJson(policy.negativeAckRedeliveryBackoff)
    : FixedRedeliveryBackoff.of(policy.negativeAckRedeliveryDelayMs);
  const timeoutBackoff = policy.ackTimeoutRedeliveryBackoff
    ? ports.backoffs.fromJson(policy.ackTimeoutRedeliveryBackoff)
    : undefined;
  const ackTimeoutMs = consumer.kind === 'lambda' ? undefined : policy.ackTimeoutMs || undefined;
  return {
    nackBackoff,
    ...(ackTimeoutMs !== undefined ? { ackTimeoutBackoff: plus(ackTimeoutMs, timeoutBackoff) } : {}),
    ...(policy.deadLetterPolicy ? { maxRedeliverCount: policy.deadLetterPolicy.maxRedeliverCount } : {}),
  };
}

/** The ack timeout's delay: the timeout plus its backoff (jitter included in `latest`). */
function plus(
  ackTimeoutMs: number,
  backoff: RedeliveryBackoff | undefined,
): RedeliveryBackoff & { latest(count: number): number } {
  return {
    next: (count) => ackTimeoutMs + (backoff ? backoff.next(count) : 0),
    latest: (count) => ackTimeoutMs + (backoff ? latestDelay(backoff, count) : 0),
    toJSON: () => ({ className: 'AckTimeout', params: { ackTimeoutMs } }),
  };
}
