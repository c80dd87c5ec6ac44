import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetQueueAttributesCommand, GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createSqsServer } from 'local-aws-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUNNER_TIMEOUT_SECONDS } from '../../infra/constructs/subscription-consumer.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../infra/local/embedded-stack.ts';
import { SqsDeliveryQueue } from '../../shared/adapters/sqs/sqs-delivery-queue.ts';
import { subscriptionQueueTemplate } from '../../shared/config/resources.ts';
import { NotFoundError } from '../../shared/domain/errors.ts';
import type { SubscriptionQueue } from '../../shared/ports/delivery-queue.ts';

// SqsDeliveryQueue's doorbells against local-aws-sqs, in this process.

let server: Server;
let client: SQSClient;
let sequence = 0;

beforeAll(async () => {
  server = await createSqsServer({ port: 0, hostname: '127.0.0.1', emulateQueueCreationLifecycle: false });
  client = new SQSClient({
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
  });
});

afterAll(async () => {
  client.destroy();
  await new Promise((resolve) => server.close(resolve));
});

function newQueue(): SubscriptionQueue {
  sequence += 1;
  return { cursorId: `bell-${sequence}`, ordered: false };
}

describe('SqsDeliveryQueue doorbells', () => {
  it("creates a subscription's queue with the template's visibility (six times the runner's timeout) and redrive", async () => {
    const queues = new SqsDeliveryQueue(client, 'it-');
    const queue = newQueue();
    await queues.create(queue);

    const { QueueUrl } = await client.send(new GetQueueUrlCommand({ QueueName: queues.queueName(queue) }));
    const { Attributes } = await client.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['VisibilityTimeout', 'RedrivePolicy'] }),
    );

    expect(Number(Attributes?.VisibilityTimeout)).toBe(subscriptionQueueTemplate.visibilityTimeoutSeconds);
    expect(Number(Attributes?.VisibilityTimeout)).toBeGreaterThanOrEqual(6 * RUNNER_TIMEOUT_SECONDS);
    expect(JSON.parse(Attributes?.RedrivePolicy ?? '{}').maxReceiveCount).toBe(
      subscriptionQueueTemplate.maxReceiveCount,
    );
  });

  it('a ring wakes a waiting receiver, which takes every ring that came', async () => {
    const queues = new SqsDeliveryQueue(client, 'it-');
    const queue = newQueue();
    await queues.create(queue);

    const before = await queues.waitForRing(queue, 0);
    await queues.ring(queue, 0);
    await queues.ring(queue, 0);
    const woke = await queues.waitForRing(queue, 1_000);
    const after = await queues.waitForRing(queue, 0);

    expect([before, woke, after]).toEqual([false, true, false]);
  });

  it('a delayed ring comes after its delay, not before', async () => {
    const queues = new SqsDeliveryQueue(client, 'it-');
    const queue = newQueue();
    await queues.create(queue);
    await queues.ring(queue, 1);

    const early = await queues.waitForRing(queue, 0);
    const startedAt = Date.now();
    const late = await queues.waitForRing(queue, 3_000);

    expect(early).toBe(false);
    expect(late).toBe(true);
    expect(Date.now() - startedAt).toBeLessThan(3_000);
  });

  it('a sub-second wait waits and looks once more', async () => {
    const queues = new SqsDeliveryQueue(client, 'it-');
    const queue = newQueue();
    await queues.create(queue);
    const startedAt = Date.now();

    expect(await queues.waitForRing(queue, 300)).toBe(false);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(250);
  });

  it('counts no dead letters on a new queue, and throws NotFoundError for a queue never created or deleted since its URL was cached', async () => {
    const queues = new SqsDeliveryQueue(client, 'it-');
    const deleted = newQueue();
    await queues.create(deleted);
    expect(await queues.deadLetterCount(deleted)).toBe(0);
    await queues.ring(deleted, 0);
    // Another process deletes it: this one still has its URL.
    await new SqsDeliveryQueue(client, 'it-').delete(deleted);

    await expect(queues.ring(newQueue(), 0)).rejects.toBeInstanceOf(NotFoundError);
    await expect(queues.ring(deleted, 0)).rejects.toBeInstanceOf(NotFoundError);
    expect(await queues.deadLetterCount(deleted)).toBe(0);
  });
});
