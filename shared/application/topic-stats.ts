import type { TopicName } from '../domain/topic-name.ts';
import { requireAction } from './authorization.ts';
import { jsonId } from './json-id.ts';
import type { UseCasePorts } from './ports.ts';
import type { Principal } from './principal.ts';
import { loadCursor, resolveTopic } from './topic-lookup.ts';

export interface SubscriptionStats {
  type: string;
  msgBacklog: number;
  unackedMessages: number;
  msgRedeliverCounter: number;
  msgRateOut: number;
  msgThroughputOut: number;
  msgRateRedeliver: number;
  isDurable: boolean;
  consumers: unknown[];
}

export interface TopicStats {
  msgRateIn: number;
  msgThroughputIn: number;
  msgRateOut: number;
  msgThroughputOut: number;
  msgInCounter: number;
  bytesInCounter: number;
  storageSize: number;
  publishers: unknown[];
  subscriptions: Record<string, SubscriptionStats>;
  metadata?: { partitions: number };
  partitions?: Record<string, TopicStats>;
}

/**
 * Pulsar's topic stats (field names kept). A partitioned topic answers the
 * sum over its partitions, with `metadata.partitions` and each partition's own
 * stats under `partitions`, as Pulsar's partitioned-stats do. Rates are 0:
 * ackline keeps counters, not moving averages.
 */
export async function getTopicStats(
  ports: UseCasePorts,
  principal: Principal | undefined,
  topic: TopicName,
): Promise<TopicStats> {
  await requireAction(ports.permissions, principal, topic, ['consume', 'produce', 'acknowledge_message']);
  const resolved = await resolveTopic(ports, topic);
  const perPartition = await Promise.all(
    resolved.partitions.map((partition) => partitionStats(ports, partition)),
  );
  if (resolved.partitions.length === 1 && resolved.record.partitions === 0)
    return perPartition[0] as TopicStats;
  if (topic.isPartition) return perPartition[0] as TopicStats;
  const total = emptyStats();
  total.metadata = { partitions: resolved.record.partitions };
  total.partitions = {};
  perPartition.forEach((stats, index) => {
    (total.partitions as Record<string, TopicStats>)[resolved.partitions[index]?.toString() as string] =
      stats;
    total.msgInCounter += stats.msgInCounter;
    total.bytesInCounter += stats.bytesInCounter;
    total.storageSize += stats.storageSize;
    for (const [name, sub] of Object.entries(stats.subscriptions)) {
      const sum = total.subscriptions[name] ?? {
        ...sub,
        msgBacklog: 0,
        unackedMessages: 0,
        msgRedeliverCounter: 0,
      };
      sum.msgBacklog += sub.msgBacklog;
      sum.unackedMessages += sub.unackedMessages;
      sum.msgRedeliverCounter += sub.msgRedeliverCounter;
      total.subscriptions[name] = sum;
    }
  });
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
    storageSize: 0,
    publishers: [],
    subscriptions: {},
  };
}

async function partitionStats(ports: UseCasePorts, partition: TopicName): Promise<TopicStats> {
  const stats = emptyStats();
  const subscriptions = await ports.catalog.listSubscriptions(partition);
  for (const subscription of subscriptions) {
    const { cursor } = await loadCursor(ports, partition, subscription);
    const backlog = cursor.backlog();
    stats.subscriptions[subscription.name] = {
      type: subscription.type,
      msgBacklog: backlog,
      unackedMessages: 0,
      msgRedeliverCounter: 0,
      msgRateOut: 0,
      msgThroughputOut: 0,
      msgRateRedeliver: 0,
      isDurable: true,
      consumers: [],
    };
  }
  const state = await ports.ledger.state(partition);
  stats.msgInCounter = state?.msgInCounter ?? 0;
  stats.bytesInCounter = state?.bytesInCounter ?? 0;
  stats.storageSize = state?.bytesInCounter ?? 0;
  return stats;
}

export interface CursorInternalStats {
  markDeletePosition: string;
  readPosition: string;
  individuallyDeletedMessages: string;
  totalNonContiguousDeletedMessagesRange: number;
  messagesConsumedCounter: number;
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
  ledgers: { ledgerId: number | string; entries: number; size: number; offloaded: boolean }[];
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
  for (const subscription of await ports.catalog.listSubscriptions(partition)) {
    const { cursor } = await loadCursor(ports, partition, subscription);
    const ranges = cursor.acknowledgedRanges().length;
    cursors[subscription.name] = {
      markDeletePosition: cursor.markDeletePosition.toString(),
      readPosition: cursor.readPosition.toString(),
      individuallyDeletedMessages: cursor.individuallyDeletedMessages(),
      totalNonContiguousDeletedMessagesRange: ranges,
      messagesConsumedCounter: 0,
      cursorLedger: -1,
      cursorLedgerLastEntry: -1,
      state: 'Open',
      properties: {},
    };
  }
  const state = await ports.ledger.state(partition);
  const ledgers = state?.ledgers ?? [];
  const numberOfEntries = ledgers.reduce((sum, ledger) => sum + Number(ledger.entries), 0);
  const current = ledgers[ledgers.length - 1];
  const lastWritten = [...ledgers].reverse().find((ledger) => ledger.entries > 0n);
  return {
    entriesAddedCounter: state?.msgInCounter ?? 0,
    numberOfEntries,
    totalSize: state?.bytesInCounter ?? 0,
    currentLedgerEntries: Number(current?.entries ?? 0n),
    lastConfirmedEntry: lastWritten
      ? `${lastWritten.ledgerId}:${lastWritten.entries - 1n}`
      : `${current?.ledgerId ?? -1}:-1`,
    state: 'LedgerOpened',
    ledgers: ledgers.map((ledger) => ({
      ledgerId: jsonId(ledger.ledgerId),
      entries: Number(ledger.entries),
      size: 0,
      offloaded: false,
    })),
    cursors,
  };
}
