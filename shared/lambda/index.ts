/**
 * Event-driven consumers: a Lambda function that an SQS event source feeds
 * from a subscription's queue (see {@link acklineConsumer}). Its own entry
 * point, because it brings the AWS SDK and Powertools, which the HTTP client
 * SDK does without.
 *
 * @example
 * import { acklineConsumer } from '@ackline/lambda';
 *
 * export const handler = acklineConsumer({ process: async (message) => console.log(message.payload) });
 */
export type { ConsumerMessage } from '../application/consumers/receive-messages.ts';
export type { MessageProcessor } from '../application/process-queue-records.ts';
export {
  type AcklineConsumerHandler,
  type AcklineConsumerOptions,
  acklineConsumer,
  makeAcklineConsumer,
} from './ackline-consumer.ts';
export { CONSUMER_ID_ENV } from './consumer-env.ts';
export type { InvocationContext, SqsBatchResponse, SqsEvent, SqsEventRecord } from './sqs-event.ts';
