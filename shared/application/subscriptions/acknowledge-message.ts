import { CumulativeAckSubscriptionError } from '../../domain/catalog-errors.ts';
import { AcklineError, PreconditionFailedError } from '../../domain/errors.ts';
import { Position } from '../../domain/position.ts';
import { isCumulativeAckType } from '../../domain/subscription-type.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import type { SubscriptionRecord } from '../../ports/topic-catalog.ts';
import { subscriptionKey } from '../consumers/consumer-session.ts';
import { engineOf } from '../engine/engine-ports.ts';
import { deliveriesOf } from '../engine/pending-view.ts';
import { markSubscriptionActive } from '../maintenance/activity.ts';
import { requireAction, requirePrincipal } from '../tenancy/authorization.ts';
import type { Principal } from '../tenancy/principal.ts';
import {
  requirePersistent,
  requireSubscription,
  resolvePosition,
  resolveTopic,
} from '../topics/topic-lookup.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { comesBack } from './pending-messages.ts';
import { releasedReason, type ScheduledReason } from './scheduled-messages.ts';

export interface AcknowledgeMessageRequest {
  readonly topic: TopicName;
  /** Raw query values: validated here, so that bad ids answer 412 as PIP-423 specifies. */
  readonly ledgerId: string | undefined;
  readonly entryId: string | undefined;
  /** Empty: every subscription of the topic. */
  readonly subscriptionNames: readonly string[];
  readonly dryRun: boolean;
  readonly principal: Principal | undefined;
  readonly requestId: string;
}

/**
 * A message's state on one subscription, as a dry run reports it: `already acknowledged`;
 * `held` by `consumer`, back at `comesBackAt` (as `pending`); `waiting` for a redelivery due at
 * `dueAt` for `reason` (as `scheduled`: nack, consumerGone, rescheduled, routed); `delayed` until
 * `deliverAt` (not handed out yet); `in backlog` (due, not handed out, or not dispatched yet).
 */
export type DryRunState = 'already acknowledged' | 'in backlog' | 'delayed' | 'held' | 'waiting';

export interface DryRunView {
  readonly state: DryRunState;
  readonly deliverAt?: number;
  readonly consumer?: string;
  readonly comesBackAt?: number | null;
  readonly dueAt?: number;
  readonly reason?: ScheduledReason;
}

export interface DryRunOutcome {
  readonly messageId: string;
  readonly subscriptions: Record<string, DryRunView>;
}

/** Digits only: PIP-423 answers 412 for a missing, negative or non-integer id. */
export function parseId(value: string | undefined, name: string): bigint {
  if (value === undefined || !/^\d{1,19}$/.test(value) || BigInt(value) > 2n ** 63n - 1n) {
    throw new PreconditionFailedError(
      value === undefined
        ? `${name} is required`
        : `${name} must be a non-negative 64-bit integer, got '${value}'`,
    );
  }
  return BigInt(value);
}

/**
 * PIP-423: acknowledge one message, by `ledgerId:entryId`, on chosen
 * subscriptions (all when none is named), so an operator can cancel a
 * scheduled message or pull a poison message out of a backlog.
 *
 * 1. The topic must be persistent (405); the caller needs `acknowledge_message`
 *    on the topic or namespace (403); ids must be non-negative integers (412).
 * 2. From here on, every outcome is recorded in the audit log.
 * 3. Resolve the topic and the partition owning the ledger; the position must be
 *    a written message of it (404).
 * 4. Every named subscription must exist (404) and none may be Exclusive or
 *    Failover (412): then nothing is acknowledged anywhere.
 * 5. Dry run: report each subscription's view of the message and change nothing.
 * 6. Otherwise add the position to each cursor (idempotent, so repeating the
 *    call changes nothing) and record the outcome in the audit log.
 */
export async function acknowledgeMessage(
  ports: UseCasePorts,
  request: AcknowledgeMessageRequest,
): Promise<DryRunOutcome | undefined> {
  const caller = requirePrincipal(request.principal);
  requirePersistent(request.topic);
  // Authorization first: a caller without the permission learns nothing about ids, topics or subscriptions.
  await requireAction(ports.permissions, caller, request.topic, ['acknowledge_message']);
  let position: Position | undefined;
  let subscriptions: SubscriptionRecord[] = [];
  try {
    position = Position.of(parseId(request.ledgerId, 'ledgerId'), parseId(request.entryId, 'entryId'));
    const resolved = await resolveTopic(ports, request.topic);
    const { partition } = await resolvePosition(ports, resolved, position);
    subscriptions =
      request.subscriptionNames.length === 0
        ? await ports.catalog.listSubscriptions(partition)
        : await Promise.all(
            request.subscriptionNames.map((name) => requireSubscription(ports, partition, name)),
          );
    const cumulative = subscriptions.filter((subscription) => isCumulativeAckType(subscription.type));
    if (cumulative.length > 0) {
      throw new CumulativeAckSubscriptionError(
        `Cannot acknowledge an individual message on ${cumulative
          .map((s) => `${s.name} (${s.type})`)
          .join(
            ', ',
          )}: ${cumulative.length > 1 ? 'these subscriptions acknowledge' : 'this subscription acknowledges'} cumulatively; nothing was acknowledged`,
      );
    }
    const messageId = `${position.toString()}:${partition.partitionIndex}`;
    if (request.dryRun) {
      const outcome = await dryRun(ports, { messageId, partition, position, subscriptions });
      await audit(ports, request, { caller, position, subscriptions, outcome: 'dry run' });
      return outcome;
    }
    const target = position;
    await Promise.all(subscriptions.map((s) => ports.cursors.acknowledge(s.cursorId, [target])));
    // Maintenance folds what the acknowledgement completed.
    for (const subscription of subscriptions) await markSubscriptionActive(ports, partition, subscription);
    await audit(ports, request, { caller, position, subscriptions, outcome: 'acknowledged' });
    return undefined;
  } catch (error) {
    // Refusals of authorized callers are audited too (an operator's failed attempt matters);
    // callers without the permission never reach here, so they cannot write to the log.
    if (error instanceof AcklineError) {
      await audit(ports, request, { caller, position, subscriptions, outcome: `refused: ${error.message}` });
    }
    throw error;
  }
}

/** The message to report and the subscriptions of its partition to report it on. */
export interface DryRunTarget {
  readonly messageId: string;
  readonly partition: TopicName;
  readonly position: Position;
  readonly subscriptions: readonly SubscriptionRecord[];
}

/**
 * Each subscription's view of the message (see DryRunState), from its acknowledgement, its run on
 * the cursor (held or released: as `pending` and `scheduled` say) and else its deliverAt.
 * Cost: the entry; per subscription, its acknowledgement, the head and one or two pages, and for
 * a held message the subscription's leases.
 */
export async function dryRun(ports: UseCasePorts, target: DryRunTarget): Promise<DryRunOutcome> {
  const { position, partition } = target;
  const entry = await ports.ledger.readEntry(position);
  const now = ports.clock.nowMs();
  const result: DryRunOutcome = { messageId: target.messageId, subscriptions: {} };
  for (const subscription of target.subscriptions) {
    const [acknowledged] = await ports.cursors.isAcknowledged(subscription.cursorId, [position]);
    const cursor = { partition, cursorId: subscription.cursorId, type: subscription.type };
    const { deliveries, state, overrideDueAtMs } = acknowledged
      ? { deliveries: 0, state: undefined, overrideDueAtMs: undefined }
      : await deliveriesOf(engineOf(ports), cursor, position);
    let view: DryRunView;
    if (acknowledged) {
      view = { state: 'already acknowledged' };
    } else if (state?.kind === 'held') {
      const key = subscriptionKey(partition.partitionedTopicName.toString(), subscription.name);
      const lease = (await ports.consumers.leases(key)).find((l) => l.consumerId === state.consumerId);
      view = {
        state: 'held',
        consumer: state.consumerId,
        comesBackAt: comesBack(state.timeoutAtMs, lease?.untilMs).at,
      };
    } else if (state?.kind === 'released') {
      const reason = releasedReason({ ...state, deliveries }, entry?.deliverAtMs);
      view =
        reason === 'delayed'
          ? { state: 'delayed', deliverAt: state.dueAtMs }
          : { state: 'waiting', dueAt: state.dueAtMs, reason };
    } else if (overrideDueAtMs !== undefined && overrideDueAtMs > now) {
      // Not reached by the dispatcher: an operator's due time holds it (as `scheduled` lists it).
      view = { state: 'waiting', dueAt: overrideDueAtMs, reason: 'rescheduled' };
    } else if (overrideDueAtMs === undefined && entry?.deliverAtMs !== undefined && entry.deliverAtMs > now) {
      view = { state: 'delayed', deliverAt: entry.deliverAtMs };
    } else {
      view = { state: 'in backlog' };
    }
    result.subscriptions[subscription.name] = view;
  }
  return result;
}

/** What one call did, as its audit record states it. */
interface AcknowledgeAudit {
  readonly caller: Principal;
  /** Undefined when the ids did not parse: the record shows them as the request gave them. */
  readonly position: Position | undefined;
  /** The subscriptions resolved so far; none: the record names those the request named. */
  readonly subscriptions: readonly SubscriptionRecord[];
  /** `dry run`, `acknowledged` or `refused: <reason>`. */
  readonly outcome: string;
}

async function audit(
  ports: UseCasePorts,
  request: AcknowledgeMessageRequest,
  { caller, position, subscriptions, outcome }: AcknowledgeAudit,
): Promise<void> {
  await ports.audit.record({
    atMs: ports.clock.nowMs(),
    role: caller.role,
    topic: request.topic.partitionedTopicName.toString(),
    position: position?.toString() ?? `${request.ledgerId ?? '?'}:${request.entryId ?? '?'}`,
    subscriptions:
      subscriptions.length > 0 ? subscriptions.map((s) => s.name) : [...request.subscriptionNames],
    dryRun: request.dryRun,
    outcome,
    requestId: request.requestId,
  });
}

/** Reads the audit log of a topic (superuser or `acknowledge_message`). */
export async function readAcknowledgeAudit(
  ports: UseCasePorts,
  principal: Principal | undefined,
  topic: TopicName,
  limit: number,
) {
  await requireAction(ports.permissions, principal, topic, ['acknowledge_message']);
  requirePersistent(topic);
  return ports.audit.list(topic.partitionedTopicName.toString(), limit, ports.clock.nowMs());
}
