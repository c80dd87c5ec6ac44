import { TopicNotFoundError } from '../../domain/catalog-errors.ts';
import type { TopicName } from '../../domain/topic-name.ts';
import { requireAction } from '../tenancy/authorization.ts';
import type { Principal } from '../tenancy/principal.ts';
import { resolveTopic } from '../topics/topic-lookup.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { incarnationOf } from './deduplication.ts';

/** The answer of {@link lastSequenceId}. */
export interface LastSequenceIdAnswer {
  readonly producerName: string;
  /** The highest over the partitions; -1 when none is stored. */
  readonly lastSequenceId: number;
  /** Per partition index (-1: a non-partitioned topic). */
  readonly partitions: Readonly<Record<string, number>>;
}

/**
 * The last sequence id stored for a producer name on a topic (what Pulsar's broker tells a
 * producer that connects, so it numbers on after it): per partition, and the highest. Stored only
 * while deduplication is on; -1 when none is (or the topic does not exist yet: a producer may
 * create it by publishing). The caller needs `produce`.
 * Cost: the catalog (cached), and per partition the ledger state (cached) and one read.
 */
export async function lastSequenceId(
  ports: UseCasePorts,
  principal: Principal | undefined,
  topic: TopicName,
  producerName: string,
): Promise<LastSequenceIdAnswer> {
  await requireAction(ports.permissions, principal, topic, ['produce']);
  let partitions: readonly TopicName[];
  try {
    partitions = (await resolveTopic(ports, topic)).partitions;
  } catch (error) {
    if (error instanceof TopicNotFoundError) return { producerName, lastSequenceId: -1, partitions: {} };
    throw error;
  }
  const perPartition: Record<string, number> = {};
  for (const partition of partitions) {
    const state = await ports.producerSequences.get(partition.toString(), producerName);
    const current = state !== undefined && state.incarnation === (await incarnationOf(ports, partition));
    perPartition[String(partition.partitionIndex)] = current ? state.lastSequenceId : -1;
  }
  const highest = Math.max(-1, ...Object.values(perPartition));
  return { producerName, lastSequenceId: highest, partitions: perPartition };
}
