import { ValidationError } from '../domain/errors.ts';

/**
 * The cursor id of a subscription queue, from the queue's ARN (an SQS
 * record's `eventSourceARN`): subscription queues are named
 * `<queuePrefix>s-<cursorId>`, with `.fifo` for Exclusive and Failover
 * (shared/adapters/sqs/sqs-delivery-queue.ts names them; a unit test keeps the
 * two in step).
 * @throws ValidationError when the ARN names no subscription queue of the deployment with that prefix.
 */
export function cursorIdOfQueueArn(queuePrefix: string, queueArn: string): string {
  const name = queueArn.slice(queueArn.lastIndexOf(':') + 1);
  const start = `${queuePrefix}s-`;
  const cursorId = name.startsWith(start) ? name.slice(start.length).replace(/\.fifo$/, '') : '';
  if (!/^[A-Za-z0-9_-]+$/.test(cursorId)) {
    throw new ValidationError(
      `${queueArn} is not a subscription queue of this deployment (${start}<cursorId>): ` +
        "wire the function to its subscription's queue",
    );
  }
  return cursorId;
}
