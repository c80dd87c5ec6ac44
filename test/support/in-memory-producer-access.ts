import { TopicNotFoundError } from '../../shared/domain/catalog-errors.ts';
import { type ExclusiveProducer, holds } from '../../shared/domain/producer-access.ts';
import type { TopicName } from '../../shared/domain/topic-name.ts';
import type { Acquired, AcquireRequest, ProducerAccessStore } from '../../shared/ports/producer-access.ts';
import type { InMemoryLedgerTables, PartitionRecord } from './in-memory-ledger.ts';

/**
 * ProducerAccessStore in memory, with DynamoDbProducerAccessStore's conditions, on the partition
 * states of an InMemoryLedger's tables (so that its appends check the holder, as DynamoDB's do).
 */
export class InMemoryProducerAccessStore implements ProducerAccessStore {
  constructor(private readonly tables: InMemoryLedgerTables) {}

  async acquire(request: AcquireRequest): Promise<Acquired> {
    const record = this.record(request.partition);
    const current = record.exclusive;
    if (!request.fence && holds(current, request.nowMs) && current.producerId !== request.producerId) {
      return { acquired: false, holder: { ...current } };
    }
    const topicEpoch = (record.topicEpoch ?? 0) + 1;
    record.topicEpoch = topicEpoch;
    record.exclusive = {
      producerId: request.producerId,
      producerName: request.producerName,
      topicEpoch,
      leaseUntilMs: request.leaseUntilMs,
    };
    return { acquired: true, holder: { ...record.exclusive } };
  }

  async renew(request: {
    readonly partition: TopicName;
    readonly producerId: string;
    readonly leaseUntilMs: number;
  }): Promise<boolean> {
    const record = this.tables.partitions.get(request.partition.toString());
    const current = record?.exclusive;
    if (record === undefined || current?.producerId !== request.producerId) return false;
    record.exclusive = { ...current, leaseUntilMs: request.leaseUntilMs };
    return true;
  }

  async release(partition: TopicName, producerId: string): Promise<void> {
    const record = this.tables.partitions.get(partition.toString());
    if (record?.exclusive?.producerId === producerId) record.exclusive = undefined;
  }

  async holder(partition: TopicName): Promise<ExclusiveProducer | undefined> {
    const exclusive = this.tables.partitions.get(partition.toString())?.exclusive;
    return exclusive ? { ...exclusive } : undefined;
  }

  private record(partition: TopicName): PartitionRecord {
    const record = this.tables.partitions.get(partition.toString());
    if (record === undefined) throw new TopicNotFoundError(partition.toString());
    return record;
  }
}
