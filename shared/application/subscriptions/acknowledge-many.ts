import { CumulativeAckSubscriptionError } from '../../domain/catalog-errors.ts';
import { AcklineError, NotFoundError, PreconditionFailedError } from '../../domain/errors.ts';
import { PositionNotFoundError } from '../../domain/ledger-layout.ts';
import { Position } from '../../domain/position.ts';
import { isCumulativeAckType } from '../../domain/subscription-type.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import type { SubscriptionRecord } from '../../ports/topic-catalog.ts';
import { markSubscriptionActive } from '../maintenance/activity.ts';
import { requireAction, requirePrincipal } from '../tenancy/authorization.ts';
import type { Principal } from '../tenancy/principal.ts';
import { requireSubscription, resolvePosition, resolveTopic } from '../topics/topic-lookup.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { type DryRunOutcome, dryRun, parseId } from './acknowledge-message.ts';
import { namesOtherPartition, otherPartitionText } from './named-partition.ts';

/** Ids one call takes at most (its audit record lists them all, well under DynamoDB's 400 KB). */
export const MAX_ACKNOWLEDGE_IDS = 1_000;

export interface AcknowledgeManyRequest {
  readonly topic: TopicName;
  /** `ledgerId:entryId` (a MessageId's `:partitionIndex` may follow), as given. */
  readonly messageIds: readonly string[];
  /** Empty: every subscription of each message's partition. */
  readonly subscriptionNames: readonly string[];
  readonly dryRun: boolean;
  readonly principal: Principal | undefined;
  readonly requestId: string;
}

/** One message of the call, resolved. */
interface Target {
  readonly id: string;
  readonly partition: TopicName;
  readonly position: Position;
  readonly subscriptions: readonly SubscriptionRecord[];
  readonly messageId: string;
}

/**
 * PIP-423's acknowledgeMessage for many messages at once, all or nothing.
 *
 * 1. As for one message: persistent topic (405), `acknowledge_message` (403).
 * 2. Every id must parse (412), name a written message of the topic (404) and every named
 *    subscription must exist on its partition (404), none of them cumulative (412): the refusal
 *    names every id at fault, and nothing is acknowledged anywhere.
 * 3. Dry run: each id's view on each subscription, nothing changed.
 * 4. Otherwise one acknowledgement per subscription with all its positions (idempotent).
 * 5. One audit record for the call, with every id, whatever the outcome.
 */
export async function acknowledgeMany(
  ports: UseCasePorts,
  request: AcknowledgeManyRequest,
): Promise<{ messages: DryRunOutcome[] } | undefined> {
  const caller = requirePrincipal(request.principal);
  await requireAction(ports.permissions, caller, request.topic, ['acknowledge_message']);
  let targets: Target[] = [];
  try {
    targets = await resolveTargets(ports, request);
    if (request.dryRun) {
      const messages = [];
      for (const target of targets) {
        messages.push(await dryRun(ports, target));
      }
      await audit(ports, request, { caller, targets, outcome: 'dry run' });
      return { messages };
    }
    const byCursor = new Map<
      string,
      { partition: TopicName; subscription: SubscriptionRecord; positions: Position[] }
    >();
    for (const { partition, position, subscriptions } of targets) {
      for (const subscription of subscriptions) {
        const entry = byCursor.get(subscription.cursorId) ?? { partition, subscription, positions: [] };
        entry.positions.push(position);
        byCursor.set(subscription.cursorId, entry);
      }
    }
    for (const [cursorId, { positions }] of byCursor) await ports.cursors.acknowledge(cursorId, positions);
    // Maintenance folds what the acknowledgements completed.
    for (const { partition, subscription } of byCursor.values()) {
      await markSubscriptionActive(ports, partition, subscription);
    }
    await audit(ports, request, { caller, targets, outcome: `acknowledged ${targets.length}` });
    return undefined;
  } catch (error) {
    if (error instanceof AcklineError) {
      await audit(ports, request, { caller, targets, outcome: `refused: ${error.message}` });
    }
    throw error;
  }
}

/** Ids a refusal's reason names at most (the audit record keeps every id of the call). */
export const REASON_IDS = 10;
/** Characters of a malformed id a reason shows at most. */
const REASON_ID_CHARS = 40;

/** The first REASON_IDS of `items`, and how many more there are: a reason stays short. */
function firstFew(items: readonly string[], separator: string): string {
  const shown = items.slice(0, REASON_IDS).join(separator);
  return items.length > REASON_IDS ? `${shown} and ${items.length - REASON_IDS} more` : shown;
}

function clipped(id: string): string {
  return id.length > REASON_ID_CHARS ? `${id.slice(0, REASON_ID_CHARS)}...` : id;
}

/**
 * Every id parsed and resolved, or one error counting the ids at fault and naming the first
 * REASON_IDS of them (nothing written).
 */
async function resolveTargets(ports: UseCasePorts, request: AcknowledgeManyRequest): Promise<Target[]> {
  const parsed = request.messageIds.map((id) => ({ id, position: parseMessageId(id) }));
  const malformed = parsed.filter(({ position }) => position instanceof Error);
  if (malformed.length > 0) {
    throw new PreconditionFailedError(
      `${malformed.length} of ${parsed.length} ids are not ledgerId:entryId[:partitionIndex] of non-negative integers: ${firstFew(
        malformed.map(({ id }) => `'${clipped(id)}'`),
        ', ',
      )}; nothing was acknowledged`,
    );
  }
  const resolved = await resolveTopic(ports, request.topic);
  const subscriptionsOf = new Map<string, SubscriptionRecord[]>();
  const missing: string[] = [];
  const misplaced: string[] = [];
  const targets: Target[] = [];
  for (const { id, position } of parsed as { id: string; position: Position }[]) {
    let partition: TopicName;
    try {
      partition = (await resolvePosition(ports, resolved, position)).partition;
    } catch (error) {
      if (!(error instanceof PositionNotFoundError)) throw error;
      missing.push(id);
      continue;
    }
    if (namesOtherPartition(id, partition)) {
      misplaced.push(otherPartitionText(id, partition));
      continue;
    }
    const key = partition.toString();
    if (!subscriptionsOf.has(key)) subscriptionsOf.set(key, await subscriptionsOn(ports, partition, request));
    const subscriptions = subscriptionsOf.get(key) as SubscriptionRecord[];
    targets.push({
      id,
      partition,
      position,
      subscriptions,
      messageId: `${position.toString()}:${partition.partitionIndex}`,
    });
  }
  if (misplaced.length > 0) {
    throw new PreconditionFailedError(
      `${misplaced.length} of ${parsed.length} ids name another partition than their message's: ${firstFew(misplaced, '; ')}; nothing was acknowledged`,
    );
  }
  if (missing.length > 0) {
    throw new NotFoundError(
      `${missing.length} of ${parsed.length} messages not found in topic ${request.topic.toString()}: ${firstFew(missing, ', ')}; nothing was acknowledged`,
    );
  }
  const cumulative = [...subscriptionsOf.values()].flat().filter((s) => isCumulativeAckType(s.type));
  if (cumulative.length > 0) {
    const names = [...new Set(cumulative.map((s) => `${s.name} (${s.type})`))].join(', ');
    throw new CumulativeAckSubscriptionError(
      `Cannot acknowledge individual messages on ${names}: cumulative acknowledgement only; nothing was acknowledged`,
    );
  }
  return targets;
}

async function subscriptionsOn(
  ports: UseCasePorts,
  partition: TopicName,
  request: AcknowledgeManyRequest,
): Promise<SubscriptionRecord[]> {
  if (request.subscriptionNames.length === 0) return ports.catalog.listSubscriptions(partition);
  return Promise.all(request.subscriptionNames.map((name) => requireSubscription(ports, partition, name)));
}

/** `ledgerId:entryId`, optionally `:partitionIndex` (checked against the partition the ledger names). */
function parseMessageId(id: string): Position | Error {
  const parts = id.split(':');
  if (parts.length < 2 || parts.length > 3 || (parts[2] !== undefined && !/^(-1|\d{1,6})$/.test(parts[2]))) {
    return new Error(id);
  }
  try {
    return Position.of(parseId(parts[0], 'ledgerId'), parseId(parts[1], 'entryId'));
  } catch (error) {
    if (error instanceof PreconditionFailedError) return error;
    throw error;
  }
}

async function audit(
  ports: UseCasePorts,
  request: AcknowledgeManyRequest,
  input: { readonly caller: Principal; readonly targets: readonly Target[]; readonly outcome: string },
): Promise<void> {
  const names = new Set(input.targets.flatMap((t) => t.subscriptions.map((s) => s.name)));
  await ports.audit.record({
    atMs: ports.clock.nowMs(),
    role: input.caller.role,
    topic: request.topic.partitionedTopicName.toString(),
    // Every id as the call gave it: the record is the call's, whether or not they resolved.
    position: request.messageIds.join(','),
    subscriptions: names.size > 0 ? [...names] : [...request.subscriptionNames],
    dryRun: request.dryRun,
    outcome: input.outcome,
    requestId: request.requestId,
  });
}
