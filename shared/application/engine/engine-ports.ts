import { TopicName } from '../../domain/topic-name.ts';
import type { ConsumerPartition, ConsumerRecord } from '../../ports/consumer-registry.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { heldAgainstCap } from './consumer-cap.ts';
import { DEFAULT_ENGINE_LIMITS, type EngineContext, type PartitionCursor } from './engine-context.ts';
import { pendingSummary } from './pending-summary.ts';

/** The delivery engine's context over the use cases' ports. */
export function engineOf(ports: UseCasePorts): EngineContext {
  const ctx: EngineContext = {
    store: ports.dispatch,
    ledger: ports.ledger,
    clock: ports.clock,
    limits: ports.engineLimits ?? DEFAULT_ENGINE_LIMITS,
    recentState: (partition) => ports.ledger.recentState(partition),
    unackedByConsumer: (cursor, maxAgeMs) =>
      ports.hints.unacked.recent(cursor.cursorId, maxAgeMs, async () => {
        return heldAgainstCap(await pendingSummary(ctx, cursor));
      }),
    handedTo: (cursor, consumerId, count) => ports.hints.unacked.add(cursor.cursorId, consumerId, count),
    ...(ports.pauseAfterConflict ? { pauseAfterConflict: ports.pauseAfterConflict } : {}),
  };
  return ctx;
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
