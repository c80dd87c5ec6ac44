/**
 * Event-driven consumers: your Lambda function consumes a subscription (see
 * {@link acklineConsumer}). The AcklineSubscriptionConsumer construct (@ackline/cdk) deploys
 * ackline's runner beside it, which dispatches the subscription's messages and invokes your
 * function with them: your function touches no ackline table or queue, and this package has no
 * dependencies.
 *
 * @example
 * import { acklineConsumer } from '@ackline/lambda';
 *
 * export const handler = acklineConsumer({ process: async (message) => console.log(message.payload) });
 */
export type { BatchOrder, ConsumerMessage } from '../application/consumers/consumer-message.ts';
export {
  type AcklineConsumerHandler,
  type AcklineConsumerOptions,
  acklineConsumer,
  type MessageProcessor,
} from './ackline-consumer.ts';
export type { AcklineBatchEvent, AcklineBatchResponse, AcklineFailure } from './consumer-batch.ts';
export { MAX_RETRY_AFTER_MS, RetryAfterError } from './retry-after-error.ts';
