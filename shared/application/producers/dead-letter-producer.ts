import { DeadLetterRefusedError, ForbiddenError } from '../../domain/errors.ts';
import { RoundRobinRouter } from '../../domain/message-router.ts';
import { TopicName } from '../../domain/topic-name.ts';
import type { ConsumerPartition, ConsumerRecord } from '../../ports/consumer-registry.ts';
import type { StoredEntry } from '../../ports/ledger.ts';
import type { DeadLetterProducer } from '../engine/engine-context.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { publishMessages } from './publish-messages.ts';

/** Dead-letter topics are usually not partitioned; when one is, keyless dead letters spread round-robin. */
const deadLetterRouter = new RoundRobinRouter(0);

/**
 * Pulsar's dead-letter producer for one consumer: entries past its policy's maxRedeliverCount are
 * published to its dead-letter topic with REAL_TOPIC, ORIGIN_MESSAGE_ID and REAL_SUBSCRIPTION, as
 * the consumer's own role (a role that may no longer produce there is refused: 403, and the
 * entries stay where they are), then acknowledged on the original subscription by the engine.
 */
export function deadLetterProducerOf(
  ports: UseCasePorts,
  consumer: ConsumerRecord,
  partition: ConsumerPartition,
): DeadLetterProducer | undefined {
  const policy = consumer.policy.deadLetterPolicy;
  if (!policy) return undefined;
  return {
    maxRedeliverCount: policy.maxRedeliverCount,
    publish: async (entries: readonly StoredEntry[]) => {
      const principal = { role: consumer.role, superuser: consumer.superuser === true };
      try {
        await publishMessages(ports, principal, TopicName.parse(policy.deadLetterTopic), {
          messages: entries.map((entry) => ({
            payload: entry.payload,
            ...(entry.binary ? { binary: true } : {}),
            ...(entry.key !== undefined ? { key: entry.key } : {}),
            ...(entry.eventTimeMs !== undefined ? { eventTimeMs: entry.eventTimeMs } : {}),
            properties: {
              ...entry.properties,
              REAL_TOPIC: partition.topic,
              ORIGIN_MESSAGE_ID: `${entry.position.toString()}:${partition.partitionIndex}`,
              REAL_SUBSCRIPTION: consumer.subscription,
            },
          })),
          router: deadLetterRouter,
        });
      } catch (error) {
        if (error instanceof ForbiddenError) {
          throw new DeadLetterRefusedError(
            `Dead letters of ${consumer.subscription} cannot go to ${policy.deadLetterTopic}: ${error.message}`,
            { cause: error },
          );
        }
        throw error;
      }
      ports.counters?.add('deadLettered', entries.length);
    },
  };
}
