import type { TopicName } from '../../domain/topic-name.ts';

/**
 * Whether a `ledgerId:entryId:partitionIndex` text names another partition than the one its ledger
 * belongs to (-1: a topic that is not partitioned). Without a partition index it names none and
 * never mismatches: the ledger alone finds the partition.
 */
export function namesOtherPartition(messageId: string, partition: TopicName): boolean {
  const named = messageId.split(':')[2];
  return named !== undefined && Number(named) !== partition.partitionIndex;
}

/** The refusal's words for such an id. */
export function otherPartitionText(messageId: string, partition: TopicName): string {
  return `'${messageId}' names partition ${messageId.split(':')[2]}, but its ledger belongs to ${partition.toString()} (partition index ${partition.partitionIndex})`;
}
