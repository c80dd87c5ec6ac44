import { SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { SqsDeliveryQueue } from '../../../shared/adapters/sqs/sqs-delivery-queue.ts';
import { ValidationError } from '../../../shared/domain/errors.ts';
import { cursorIdOfQueueArn } from '../../../shared/lambda/subscription-queue-arn.ts';

const PREFIX = 'ackline-prod--';
const arnOf = (name: string) => `arn:aws:sqs:eu-west-1:123456789012:${name}`;

describe('cursorIdOfQueueArn', () => {
  // The adapter names the queues; the event-driven consumer reads the cursor back from the name.
  const queues = new SqsDeliveryQueue(new SQSClient({ region: 'eu-west-1' }), { queuePrefix: PREFIX });

  it.each([
    { cursorId: 'Xq3_b-9AbCdEfGhIjKlMnO', ordered: false },
    { cursorId: 'Xq3_b-9AbCdEfGhIjKlMnO', ordered: true },
    { cursorId: 'ends-with-dash-', ordered: true },
  ])('reads the cursor id back from the name SqsDeliveryQueue gives (ordered: $ordered)', ({
    cursorId,
    ordered,
  }) => {
    expect(cursorIdOfQueueArn(PREFIX, arnOf(queues.queueName({ cursorId, ordered })))).toBe(cursorId);
  });

  it.each([
    ['another stage', arnOf('ackline-dev--s-abc')],
    ['a stage that starts with this one', arnOf('ackline-prod-eu--s-abc')],
    ['the scheduler queue', arnOf('ackline-prod--scheduler')],
    ['no cursor id', arnOf('ackline-prod--s-')],
    ['no cursor id, FIFO', arnOf('ackline-prod--s-.fifo')],
  ])('refuses %s', (_what, arn) => {
    expect(() => cursorIdOfQueueArn(PREFIX, arn)).toThrow(ValidationError);
  });
});
