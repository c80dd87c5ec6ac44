import { ConflictError, NotFoundError } from '../../domain/errors.ts';
import type { ConsumerRecord } from '../../ports/consumer-registry.ts';
import type { UseCasePorts } from '../use-case-ports.ts';
import { subscriptionKey } from './consumer-session.ts';

/** The subscription an event-driven consumer was subscribed to, by name. */
export interface LambdaConsumerRef {
  readonly topic: string;
  readonly subscription: string;
  /** Its `consumerName`: needed only when the subscription has several event-driven consumers. */
  readonly consumerName?: string;
}

/**
 * The id of the event-driven consumer (`consumerKind: "lambda"`, durable) subscribed to a
 * subscription, found by topic and subscription name, so a function is configured by names.
 * Cost: one Query of the subscription's members and one read per member (once per cold start).
 * @throws NotFoundError when no event-driven consumer (of that name) is subscribed there.
 * @throws ConflictError when several are and no consumerName tells them apart.
 */
export async function findLambdaConsumer(ports: UseCasePorts, ref: LambdaConsumerRef): Promise<string> {
  const members = await ports.consumers.members(
    subscriptionKey(ref.topic, ref.subscription),
    ports.clock.nowMs(),
  );
  const records = await Promise.all(members.map((consumerId) => ports.consumers.get(consumerId)));
  const found = records.filter(
    (record): record is ConsumerRecord =>
      record?.kind === 'lambda' &&
      (ref.consumerName === undefined || record.consumerName === ref.consumerName),
  );
  const named = ref.consumerName === undefined ? '' : ` named ${ref.consumerName}`;
  const [only, ...others] = found;
  if (only === undefined) {
    throw new NotFoundError(
      `No event-driven consumer${named} on subscription ${ref.subscription} of ${ref.topic}: ` +
        'subscribe one first (consumerKind "lambda")',
    );
  }
  if (others.length > 0) {
    throw new ConflictError(
      `Subscription ${ref.subscription} of ${ref.topic} has ${found.length} event-driven consumers ` +
        `(${found.map((record) => record.consumerName).join(', ')}): give the function its consumerName`,
    );
  }
  return only.consumerId;
}
