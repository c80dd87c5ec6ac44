import { NotFoundError } from '../../domain/errors.ts';
import { jsonId } from '../../domain/json-id.ts';
import { type MeasuredRate, type RateCounter, rateOf } from '../../domain/rate-counter.ts';
import { isCumulativeAckType } from '../../domain/subscription-type.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import type { SubscriptionRecord } from '../../ports/topic-catalog.ts';
import { subscriptionKey } from '../consumers/consumer-session.ts';
import { heldAgainstCap } from '../engine/consumer-cap.ts';
import { dispatchWindowSize } from '../engine/dispatcher-window.ts';
import { engineOf } from '../engine/engine-ports.ts';
import { pendingSummary } from '../engine/pending-summary.ts';
import { countUndispatched } from '../engine/scheduled-view.ts';
import { requireAction } from '../tenancy/authorization.ts';
import type { Principal } from '../tenancy/principal.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { loadCursor, resolveTopic } from './topic-lookup.ts';

/** A consumer of a subscription, as Pulsar's ConsumerStats names what ackline measures. */
export interface ConsumerStats {
  consumerName: string;
  /** ackline's consumer id (what the consumer API's paths carry). */
  consumerId: string;
  /** When it subscribed (ISO 8601, as Pulsar's). */
  connectedSince: string;
  /** Entries handed to it and not acknowledged. */
  unackedMessages: number;
  /**
   * How many more entries the dispatcher may hand this consumer before it blocks it (Pulsar's
   * flow permits, as the cap of unacknowledged messages per consumer leaves them): on Shared and
   * Key_Shared its cap less its unacknowledged entries; on Exclusive and Failover the window's cap
   * less the window (the active consumer holds it all). Never below 0.
   */
  availablePermits: number;
  /** Pulsar's blockedConsumerOnUnackedMsgs: at its cap, nothing more is handed to it. */
  blockedConsumerOnUnackedMsgs: boolean;
}

export interface SubscriptionStats {
  type: string;
  msgBacklog: number;
  msgBacklogNoDelayed: number;
  msgDelayed: number;
  unackedMessages: number;
  msgRedeliverCounter: number;
  msgOutCounter: number;
  bytesOutCounter: number;
  msgRateOut: number;
  msgThroughputOut: number;
  msgRateRedeliver: number;
  /** Epoch ms; absent when nothing was ever acknowledged (that the cursor remembers). */
  lastAckedTimestamp?: number;
  /** Epoch ms; absent when nothing was ever handed out. */
  lastConsumedTimestamp?: number;
  isDurable: boolean;
  /**
   * First deliveries are paused: the window from mark-delete (over what is acknowledged) to the
   * read position holds the subscription's cap of unacknowledged entries
   * (maxUnackedMessagesPerSubscription, 200,000).
   */
  blockedSubscriptionOnUnackedMsgs: boolean;
  consumers: ConsumerStats[];
}

/** A producer that published lately (ackline's REST produce: the caller's role). */
export interface PublisherStats {
  producerName: string;
  /** Epoch ms of its last publish the partition recorded. */
  lastPublishTimestamp: number;
}

export interface TopicStats {
  msgRateIn: number;
  msgThroughputIn: number;
  msgRateOut: number;
  msgThroughputOut: number;
  msgInCounter: number;
  bytesInCounter: number;
  msgOutCounter: number;
  bytesOutCounter: number;
  storageSize: number;
  publishers: PublisherStats[];
  subscriptions: Record<string, SubscriptionStats>;
  metadata?: { partitions: number };
  partitions?: Record<string, TopicStats>;
}

/**
 * Pulsar's topic stats (field names kept); see docs/admin-api.md#topic-stats for how each field is
 * measured. A partitioned topic answers the sum over its partitions, with `metadata.partitions`
 * and each partition's own stats under `partitions`, as Pulsar's partitioned-stats do.
 */
export async function getTopicStats(
  ports: UseCasePorts,
  principal: Principal | undefined,
  topic: TopicName,
  options: { readonly perPartition?: boolean; readonly partitionedOnly?: boolean } = {},
): Promise<TopicStats> {
  await requireAction(ports.permissions, principal, topic, ['consume', 'produce', 'acknowledge_message']);
  const resolved = await resolveTopic(ports, topic);
  if (options.partitionedOnly && (resolved.record.partitions === 0 || topic.isPartition)) {
    throw new NotFoundError(`Partitioned topic ${topic.toString()} not found: it is not a partitioned topic`);
  }
  const perPartition = await Promise.all(
    resolved.partitions.map((partition) => partitionStats(ports, partition)),
  );
  if (resolved.partitions.length === 1 && resolved.record.partitions === 0)
    return perPartition[0] as TopicStats;
  if (topic.isPartition) return perPartition[0] as TopicStats;
  const total = emptyStats();
  total.metadata = { partitions: resolved.record.partitions };
  if (options.perPartition ?? true) {
    total.partitions = {};
    perPartition.forEach((stats, index) => {
      (total.partitions as Record<string, TopicStats>)[resolved.partitions[index]?.toString() as string] =
        stats;
    });
  }
  for (const stats of perPartition) addInto(total, stats);
  return total;
}

function emptyStats(): TopicStats {
  return {
    msgRateIn: 0,
    msgThroughputIn: 0,
    msgRateOut: 0,
    msgThroughputOut: 0,
    msgInCounter: 0,
    bytesInCounter: 0,
    msgOutCounter: 0,
    bytesOutCounter: 0,
    storageSize: 0,
    publishers: [],
    subscriptions: {},
  };
}

/** Adds one partition's stats into the partitioned topic's (sums; the newest timestamps). */
function addInto(total: TopicStats, stats: TopicStats): void {
  total.msgRateIn += stats.msgRateIn;
  total.msgThroughputIn += stats.msgThroughputIn;
  total.msgRateOut += stats.msgRateOut;
  total.msgThroughputOut += stats.msgThroughputOut;
  total.msgInCounter += stats.msgInCounter;
  total.bytesInCounter += stats.bytesInCounter;
  total.msgOutCounter += stats.msgOutCounter;
  total.bytesOutCounter += stats.bytesOutCounter;
  total.storageSize += stats.storageSize;
  const publishers = new Map(total.publishers.map((p) => [p.producerName, p]));
  for (const publisher of stats.publishers) {
    const known = publishers.get(publisher.producerName);
    if (!known || known.lastPublishTimestamp < publisher.lastPublishTimestamp)
      publishers.set(publisher.producerName, { ...publisher });
  }
  total.publishers = [...publishers.values()].sort((a, b) => b.lastPublishTimestamp - a.lastPublishTimestamp);
  for (const [name, sub] of Object.entries(stats.subscriptions)) {
    const sum = total.subscriptions[name];
    if (!sum) {
      total.subscriptions[name] = { ...sub, consumers: sub.consumers.map((c) => ({ ...c })) };
      continue;
    }
    for (const field of [
      'msgBacklog',
      'msgBacklogNoDelayed',
      'msgDelayed',
      'unackedMessages',
      'msgRedeliverCounter',
      'msgOutCounter',
      'bytesOutCounter',
      'msgRateOut',
      'msgThroughputOut',
      'msgRateRedeliver',
    ] as const) {
      sum[field] += sub[field];
    }
    for (const field of ['lastAckedTimestamp', 'lastConsumedTimestamp'] as const) {
      const newest = Math.max(sum[field] ?? 0, sub[field] ?? 0);
      if (newest > 0) sum[field] = newest;
    }
    sum.blockedSubscriptionOnUnackedMsgs ||= sub.blockedSubscriptionOnUnackedMsgs;
    // One consumer reads every partition: its unacked entries and its permits add up (as Pulsar
    // sums a consumer's per-partition stats); it is blocked where any partition blocks it.
    for (const consumer of sub.consumers) {
      const known = sum.consumers.find((c) => c.consumerId === consumer.consumerId);
      if (known) {
        known.unackedMessages += consumer.unackedMessages;
        known.availablePermits += consumer.availablePermits;
        known.blockedConsumerOnUnackedMsgs ||= consumer.blockedConsumerOnUnackedMsgs;
      } else sum.consumers.push({ ...consumer });
    }
  }
}

async function partitionStats(ports: UseCasePorts, partition: TopicName): Promise<TopicStats> {
  const stats = emptyStats();
  const now = ports.clock.nowMs();
  const state = await ports.ledger.state(partition);
  stats.msgInCounter = state?.msgInCounter ?? 0;
  stats.bytesInCounter = state?.bytesInCounter ?? 0;
  // What is stored: what came in, less what retention deleted.
  stats.storageSize = (state?.bytesInCounter ?? 0) - (state?.bytesDeleted ?? 0);
  const inRate = rateOf(state?.msgIn, now);
  stats.msgRateIn = inRate?.perSecond ?? 0;
  stats.msgThroughputIn = inRate?.bytesPerSecond ?? 0;
  stats.publishers = (state?.publishers ?? []).map((publisher) => ({
    producerName: publisher.producerName,
    lastPublishTimestamp: publisher.lastPublishAtMs,
  }));
  for (const subscription of await ports.catalog.listSubscriptions(partition)) {
    const sub = await subscriptionStats(ports, partition, subscription, now);
    stats.subscriptions[subscription.name] = sub;
    stats.msgRateOut += sub.msgRateOut;
    stats.msgThroughputOut += sub.msgThroughputOut;
    stats.msgOutCounter += sub.msgOutCounter;
    stats.bytesOutCounter += sub.bytesOutCounter;
  }
  return stats;
}

/**
 * One subscription on one partition. Cost: the cursor (head and pages from mark-delete, twice: the
 * backlog and the pending summary), the delivery counters item, the consumer registry's members and
 * one record per member.
 */
async function subscriptionStats(
  ports: UseCasePorts,
  partition: TopicName,
  subscription: SubscriptionRecord,
  now: number,
): Promise<SubscriptionStats> {
  const ctx = engineOf(ports);
  const cursor = { partition, cursorId: subscription.cursorId, type: subscription.type };
  const loaded = await loadCursor(ports, partition, subscription);
  const msgBacklog = loaded.cursor.backlog();
  const summary = await pendingSummary(ctx, cursor);
  // Delayed entries the dispatcher passed (the summary) and those it has not reached (the index).
  const delayed =
    summary.delayed + (ports.delayedIndex ? await countUndispatched(ctx, cursor, ports.delayedIndex) : 0);
  const head = (await ports.dispatch.readHead(subscription.cursorId))?.head;
  const counters = await ports.dispatch.readCounters(subscription.cursorId);
  const claimed = head?.delivered;
  const sumRates = (...rates: (MeasuredRate | undefined)[]) => ({
    perSecond: rates.reduce((sum, rate) => sum + (rate?.perSecond ?? 0), 0),
    bytesPerSecond: rates.reduce((sum, rate) => sum + (rate?.bytesPerSecond ?? 0), 0),
  });
  const out = sumRates(rateOf(claimed, now), rateOf(counters.out, now));
  const lastConsumed = newest(claimed, counters.out);
  // As the dispatcher decides (it folds what is acknowledged at mark-delete before it pauses).
  const window = head
    ? dispatchWindowSize(loaded.cursor.markDeletePosition, head.readPosition, loaded.state.ledgers)
    : 0;
  const { maxUnackedPerConsumer, maxUnackedPerSubscription } = ctx.limits;
  // As the dispatcher counts against the cap (entries past their ack timeout are due again).
  const held = heldAgainstCap(summary);
  const permitsOf = (consumerId: string) =>
    Math.max(
      0,
      isCumulativeAckType(subscription.type)
        ? Math.min(maxUnackedPerConsumer, maxUnackedPerSubscription) - window
        : maxUnackedPerConsumer - (held.get(consumerId) ?? 0),
    );
  const consumers = await consumersOf(ports, partition, subscription, {
    unacked: summary.unackedByConsumer,
    permitsOf,
  });
  return {
    type: subscription.type,
    msgBacklog,
    msgBacklogNoDelayed: Math.max(0, msgBacklog - delayed),
    msgDelayed: delayed,
    unackedMessages: summary.unacked,
    msgRedeliverCounter: counters.redelivered?.count ?? 0,
    msgOutCounter: (claimed?.count ?? 0) + (counters.out?.count ?? 0),
    bytesOutCounter: (claimed?.bytes ?? 0) + (counters.out?.bytes ?? 0),
    msgRateOut: out.perSecond,
    msgThroughputOut: out.bytesPerSecond,
    msgRateRedeliver: rateOf(counters.redelivered, now)?.perSecond ?? 0,
    ...(summary.lastAckedAtMs !== undefined ? { lastAckedTimestamp: summary.lastAckedAtMs } : {}),
    ...(lastConsumed !== undefined ? { lastConsumedTimestamp: lastConsumed } : {}),
    isDurable: true,
    blockedSubscriptionOnUnackedMsgs: window >= ctx.limits.maxUnackedPerSubscription,
    consumers,
  };
}

function newest(...counters: (RateCounter | undefined)[]): number | undefined {
  const times = counters.flatMap((counter) => (counter ? [counter.lastAtMs] : []));
  return times.length > 0 ? Math.max(...times) : undefined;
}

/** What each consumer of a subscription holds on a partition, as subscriptionStats counted it. */
interface ConsumerHoldings {
  /** Entries delivered and not acknowledged, per consumerId. */
  readonly unacked: ReadonlyMap<string, number>;
  /** Entries the consumer may still take before its cap (Pulsar's availablePermits). */
  readonly permitsOf: (consumerId: string) => number;
}

/**
 * The subscription's live consumers that read this partition, from the consumer registry (its
 * members' leases, and one record per member).
 */
async function consumersOf(
  ports: UseCasePorts,
  partition: TopicName,
  subscription: SubscriptionRecord,
  { unacked, permitsOf }: ConsumerHoldings,
): Promise<ConsumerStats[]> {
  const key = subscriptionKey(partition.partitionedTopicName.toString(), subscription.name);
  const now = ports.clock.nowMs();
  const leases = (await ports.consumers.leases(key)).filter((lease) => lease.untilMs >= now);
  const records = await Promise.all(leases.map((lease) => ports.consumers.get(lease.consumerId)));
  const consumers: ConsumerStats[] = [];
  leases.forEach((_lease, index) => {
    const record = records[index];
    if (!record?.partitions.some((p) => p.cursorId === subscription.cursorId)) return;
    const availablePermits = permitsOf(record.consumerId);
    consumers.push({
      consumerName: record.consumerName,
      consumerId: record.consumerId,
      connectedSince: new Date(record.createdAtMs).toISOString(),
      unackedMessages: unacked.get(record.consumerId) ?? 0,
      availablePermits,
      blockedConsumerOnUnackedMsgs: availablePermits === 0,
    });
  });
  return consumers;
}

export interface CursorInternalStats {
  markDeletePosition: string;
  readPosition: string;
  individuallyDeletedMessages: string;
  totalNonContiguousDeletedMessagesRange: number;
  /** Pulsar's relation: entries added to the partition less the cursor's backlog. */
  messagesConsumedCounter: number;
  /** -1: no cursor ledger (the cursor lives in DynamoDB items). */
  cursorLedger: number;
  cursorLedgerLastEntry: number;
  state: string;
  properties: Record<string, number>;
}

export interface InternalStats {
  entriesAddedCounter: number;
  numberOfEntries: number;
  totalSize: number;
  currentLedgerEntries: number;
  lastConfirmedEntry: string;
  state: string;
  /** Each ledger's entries; no `size`: ackline counts bytes per partition, not per ledger. */
  ledgers: { ledgerId: number | string; entries: number; offloaded: boolean }[];
  cursors: Record<string, CursorInternalStats>;
}

/**
 * Pulsar's internal stats of a managed ledger: ledgers and each cursor's
 * mark-delete position, read position and `individuallyDeletedMessages`. A
 * partitioned topic answers `{ metadata, partitions: { name: stats } }`.
 */
export async function getInternalStats(
  ports: UseCasePorts,
  principal: Principal | undefined,
  topic: TopicName,
): Promise<InternalStats | { metadata: { partitions: number }; partitions: Record<string, InternalStats> }> {
  await requireAction(ports.permissions, principal, topic, ['consume', 'produce', 'acknowledge_message']);
  const resolved = await resolveTopic(ports, topic);
  const perPartition = await Promise.all(resolved.partitions.map((p) => partitionInternalStats(ports, p)));
  if (resolved.record.partitions === 0 || topic.isPartition) return perPartition[0] as InternalStats;
  const partitions: Record<string, InternalStats> = {};
  perPartition.forEach((stats, index) => {
    partitions[resolved.partitions[index]?.toString() as string] = stats;
  });
  return { metadata: { partitions: resolved.record.partitions }, partitions };
}

async function partitionInternalStats(ports: UseCasePorts, partition: TopicName): Promise<InternalStats> {
  const cursors: Record<string, CursorInternalStats> = {};
  const state = await ports.ledger.state(partition);
  for (const subscription of await ports.catalog.listSubscriptions(partition)) {
    const { cursor } = await loadCursor(ports, partition, subscription);
    const ranges = cursor.acknowledgedRanges().length;
    // Pulsar's readPosition is the dispatcher's: the next entry never read (an Exclusive or
    // Failover rewind restarts it at the replay). Never at or before mark-delete.
    const head = (await ports.dispatch.readHead(subscription.cursorId))?.head;
    const dispatched = head ? (head.replayFrom ?? head.readPosition) : undefined;
    const readPosition =
      dispatched && dispatched.compareTo(cursor.readPosition) > 0 ? dispatched : cursor.readPosition;
    cursors[subscription.name] = {
      markDeletePosition: cursor.markDeletePosition.toString(),
      readPosition: readPosition.toString(),
      individuallyDeletedMessages: cursor.individuallyDeletedMessages(),
      totalNonContiguousDeletedMessagesRange: ranges,
      messagesConsumedCounter: Math.max(0, (state?.msgInCounter ?? 0) - cursor.backlog()),
      cursorLedger: -1,
      cursorLedgerLastEntry: -1,
      state: 'Open',
      properties: {},
    };
  }
  const ledgers = state?.ledgers ?? [];
  const numberOfEntries =
    ledgers.reduce((sum, ledger) => sum + Number(ledger.entries), 0) - (state?.entriesDeleted ?? 0);
  const current = ledgers[ledgers.length - 1];
  const lastWritten = [...ledgers].reverse().find((ledger) => ledger.entries > 0n);
  return {
    entriesAddedCounter: state?.msgInCounter ?? 0,
    numberOfEntries,
    totalSize: (state?.bytesInCounter ?? 0) - (state?.bytesDeleted ?? 0),
    currentLedgerEntries: Number(current?.entries ?? 0n),
    lastConfirmedEntry: lastWritten
      ? `${lastWritten.ledgerId}:${lastWritten.entries - 1n}`
      : `${current?.ledgerId ?? -1}:-1`,
    state: 'LedgerOpened',
    ledgers: ledgers.map((ledger) => ({
      ledgerId: jsonId(ledger.ledgerId),
      entries: Number(ledger.entries),
      offloaded: false,
    })),
    cursors,
  };
}
