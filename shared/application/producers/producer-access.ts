import {
  type ExclusiveProducer,
  holds,
  PRODUCER_LEASE_MS,
  type ProducerAccessMode,
  ProducerBusyError,
  ProducerFencedError,
} from '../../domain/producer-access.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import { requireAction } from '../tenancy/authorization.ts';
import type { Principal } from '../tenancy/principal.ts';
import { ensureTopic, requirePersistent } from '../topics/topic-lookup.ts';
import type { UseCasePorts } from '../use-case-ports.ts';

/** What a producer asks for when it is created. */
export interface ProducerRegistration {
  readonly producerName: string;
  readonly accessMode: ProducerAccessMode;
}

/** The answer to a registration. */
export interface RegisteredProducer {
  readonly accessMode: ProducerAccessMode;
  /** An exclusive producer's registration: sent with each publish and heartbeat. */
  readonly producerId?: string;
  /** The topic epoch each partition was taken at (`-1` for a non-partitioned topic), exclusive modes only. */
  readonly topicEpochs?: Readonly<Record<string, number>>;
  /** How long the registration lives without a publish or a heartbeat (0: Shared, nothing to renew). */
  readonly leaseMs: number;
}

/**
 * Registers a producer with its access mode (Pulsar's `AbstractTopic.incrementTopicEpochIfNeeded`).
 * 1. The caller needs `produce`; a missing topic is created, as a publish would.
 * 2. Shared: refused (ProducerBusyError) while an exclusive producer holds a partition of the topic.
 *    Nothing is written: Shared producers are not registered. Cost: one read per partition.
 * 3. Exclusive, WaitForExclusive: each partition is taken when no live exclusive producer holds it;
 *    else what was taken is given back and the call is refused: ProducerFencedError for Exclusive
 *    (Pulsar's answer), ProducerBusyError for WaitForExclusive (the client waits and asks again).
 * 4. ExclusiveWithFencing: each partition is taken whoever holds it; the holder is fenced.
 * Cost of 3 and 4: one conditional write per partition (a refusal adds one read).
 */
export async function registerProducer(
  ports: UseCasePorts,
  principal: Principal | undefined,
  topic: TopicName,
  registration: ProducerRegistration,
): Promise<RegisteredProducer> {
  const partitions = await partitionsToProduce(ports, principal, topic);
  const nowMs = ports.clock.nowMs();
  if (registration.accessMode === 'Shared') {
    for (const partition of partitions) {
      const holder = await ports.producerAccess.holder(partition);
      if (holds(holder, nowMs)) throw busy(partition, holder);
    }
    return { accessMode: 'Shared', leaseMs: 0 };
  }
  const producerId = ports.ids.newId();
  const topicEpochs: Record<string, number> = {};
  for (const partition of partitions) {
    const result = await ports.producerAccess.acquire({
      partition,
      producerId,
      producerName: registration.producerName,
      fence: registration.accessMode === 'ExclusiveWithFencing',
      nowMs,
      leaseUntilMs: nowMs + PRODUCER_LEASE_MS,
    });
    if (!result.acquired) {
      await Promise.all(partitions.map((taken) => ports.producerAccess.release(taken, producerId)));
      throw registration.accessMode === 'Exclusive'
        ? new ProducerFencedError(busy(partition, result.holder).message)
        : busy(partition, result.holder);
    }
    topicEpochs[String(partition.partitionIndex)] = result.holder.topicEpoch;
  }
  return { accessMode: registration.accessMode, producerId, topicEpochs, leaseMs: PRODUCER_LEASE_MS };
}

/**
 * Renews an exclusive producer's lease on every partition of the topic (its heartbeat, sent while
 * it does not publish). Cost: one conditional write per partition.
 * @throws ProducerFencedError once another producer took a partition.
 */
export async function renewProducer(
  ports: UseCasePorts,
  principal: Principal | undefined,
  topic: TopicName,
  producerId: string,
): Promise<void> {
  const partitions = await partitionsToProduce(ports, principal, topic);
  const leaseUntilMs = ports.clock.nowMs() + PRODUCER_LEASE_MS;
  for (const partition of partitions) {
    if (!(await ports.producerAccess.renew({ partition, producerId, leaseUntilMs }))) {
      throw new ProducerFencedError(
        // Stryker disable next-line StringLiteral: message text only
        `Exclusive producer registration ${producerId} was fenced on ${partition.toString()}: another producer took it`,
      );
    }
  }
}

/** Frees what an exclusive producer holds (its close). Idempotent. Cost: one write per partition. */
export async function releaseProducer(
  ports: UseCasePorts,
  principal: Principal | undefined,
  topic: TopicName,
  producerId: string,
): Promise<void> {
  const partitions = await partitionsToProduce(ports, principal, topic);
  await Promise.all(partitions.map((partition) => ports.producerAccess.release(partition, producerId)));
}

/** The partitions a producer of `topic` publishes to (the topic itself when not partitioned). */
async function partitionsToProduce(
  ports: UseCasePorts,
  principal: Principal | undefined,
  topic: TopicName,
): Promise<TopicName[]> {
  requirePersistent(topic);
  await requireAction(ports.permissions, principal, topic, ['produce']);
  const record = await ensureTopic(ports, topic);
  if (topic.isPartition || record.partitions === 0) return [topic];
  return Array.from({ length: record.partitions }, (_, index) => topic.partition(index));
}

function busy(partition: TopicName, holder: ExclusiveProducer | undefined): ProducerBusyError {
  return new ProducerBusyError(
    // Stryker disable next-line StringLiteral,LogicalOperator,OptionalChaining: message text only
    `Topic ${partition.toString()} has an existing exclusive producer: '${holder?.producerName ?? ''}'`,
  );
}
