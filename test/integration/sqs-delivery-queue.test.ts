import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SQSClient } from '@aws-sdk/client-sqs';
import { createSqsServer } from 'local-aws-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../infra/local/embedded-stack.ts';
import { SqsDeliveryQueue } from '../../shared/adapters/sqs/sqs-delivery-queue.ts';
import type { DeliveryToken } from '../../shared/domain/delivery-token.ts';
import { NotFoundError } from '../../shared/domain/errors.ts';
import type { SubscriptionQueue } from '../../shared/ports/delivery-queue.ts';

// SqsDeliveryQueue's queue inspection against local-aws-sqs, in this process.

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

function newQueue(ordered = false): SubscriptionQueue {
  sequence += 1;
  return { cursorId: `depth-${sequence}`, ordered };
}

const tokens = (count: number, delaySeconds = 0) =>
  Array.from({ length: count }, (_, i) => ({
    token: {
      topic: 'persistent://public/default/orders',
      ledgerId: '1',
      entryId: String(i),
      redeliveryCount: 0,
    } satisfies DeliveryToken,
    delaySeconds,
  }));

describe('SqsDeliveryQueue.depth', () => {
  it('is 0 for a new queue and counts the tokens sent, visible or delayed', async () => {
    const queues = new SqsDeliveryQueue(client, 'it-');
    const queue = newQueue();
    await queues.create(queue);

    const empty = await queues.depth(queue);
    await queues.send(queue, tokens(12));
    await queues.send(queue, tokens(3, 600));

    expect(empty).toBe(0);
    expect(await queues.depth(queue)).toBe(15);
  });

  it('counts the tokens of an ordered (FIFO) queue', async () => {
    const queues = new SqsDeliveryQueue(client, 'it-');
    const queue = newQueue(true);
    await queues.create(queue);

    await queues.send(queue, tokens(7));

    expect(await queues.depth(queue)).toBe(7);
  });

  it('throws NotFoundError for a queue never created or deleted since its URL was cached', async () => {
    const queues = new SqsDeliveryQueue(client, 'it-');
    const deleted = newQueue();
    await queues.create(deleted);
    await queues.depth(deleted);
    // Another process deletes it: this one still has its URL.
    await new SqsDeliveryQueue(client, 'it-').delete(deleted);

    await expect(queues.depth(newQueue())).rejects.toBeInstanceOf(NotFoundError);
    await expect(queues.depth(deleted)).rejects.toBeInstanceOf(NotFoundError);
  });
});
