import { TopicName } from '../domain/topic-name.ts';
import type { ConsumerPartition, ConsumerRecord } from '../ports/consumer-registry.ts';
import { DEFAULT_ENGINE_LIMITS, type EngineContext, type PartitionCursor } from './engine/engine-context.ts';
import type { UseCasePorts } from './ports.ts';
import { recentLedgerState } from './process-memo.ts';

/** The delivery engine's context over the use cases' ports. */
export function engineOf(ports: UseCasePorts): EngineContext {
  return {
    store: ports.dispatch,
    ledger: ports.ledger,
    clock: ports.clock,
    limits: ports.engineLimits ?? DEFAULT_ENGINE_LIMITS,
    recentState: (partition) => recentLedgerState(ports, partition),
    ...(ports.pauseAfterConflict ? { pauseAfterConflict: ports.pauseAfterConflict } : {}),
  };
}

/** One partition of a consumer's subscription, as the engine addresses it. */
export function cursorOf(
  consumer: Pick<ConsumerRecord, 'subscriptionType'>,
  partition: ConsumerPartition,
): PartitionCursor {
  return {
    partition: TopicName.parse(partition.topic),
    cursorId: partition.cursorId,
    type: consumer.subscriptionType,
  };
}
