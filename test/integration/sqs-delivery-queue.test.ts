import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueueTagsCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { createSqsServer } from 'local-aws-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUNNER_TIMEOUT_SECONDS } from '../../infra/constructs/subscription-consumer.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../infra/local/embedded-stack.ts';
import {
  SqsDeliveryQueue,
  type SqsDeliveryQueueOptions,
} from '../../shared/adapters/sqs/sqs-delivery-queue.ts';
import {
  DOORBELL_RETENTION_SECONDS,
  MAX_RETENTION_SECONDS,
  runTimeQueueTags,
  subscriptionQueueTemplate,
} from '../../shared/config/resources.ts';
import { NotFoundError } from '../../shared/domain/errors.ts';
import type { SubscriptionQueue } from '../../shared/ports/delivery-queue.ts';

// SqsDeliveryQueue's doorbells against local-aws-sqs, in this process: one server that makes a
// queue usable at once, and one that, as SQS may, makes it usable only a second after CreateQueue.

let server: Server;
let client: SQSClient;
let lazyServer: Server;
let lazyClient: SQSClient;
let sequence = 0;

async function sqsServer(emulateLazyQueues: boolean): Promise<{ server: Server; client: SQSClient }> {
  const started = await createSqsServer({
    port: 0,
    hostname: '127.0.0.1',
    emulateQueueCreationLifecycle: false,
    emulateLazyQueues,
  });
  const endpoint = `http://127.0.0.1:${(started.address() as AddressInfo).port}`;
  return {
    server: started,
    client: new SQSClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS }),
  };
}

beforeAll(async () => {
  ({ server, client } = await sqsServer(false));
  ({ server: lazyServer, client: lazyClient } = await sqsServer(true));
});

afterAll(async () => {
  client.destroy();
  lazyClient.destroy();
  await new Promise((resolve) => server.close(resolve));
  await new Promise((resolve) => lazyServer.close(resolve));
});

function newQueue(): SubscriptionQueue {
  sequence += 1;
  return { cursorId: `bell-${sequence}`, ordered: false };
}

/** A quick new-queue retry: a queue that was never created is given up on in about 60 ms. */
const QUICK_RETRY = { attempts: 3, firstPauseMs: 40 };

function queuesOn(sqs: SQSClient, options: Partial<SqsDeliveryQueueOptions> = {}): SqsDeliveryQueue {
  return new SqsDeliveryQueue(sqs, { queuePrefix: 'it-', newQueueRetry: QUICK_RETRY, ...options });
}

async function attributesOf(sqs: SQSClient, name: string): Promise<Record<string, string>> {
  const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: name }));
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['MessageRetentionPeriod'] }),
  );
  const { Tags = {} } = await sqs.send(new ListQueueTagsCommand({ QueueUrl }));
  return { ...Attributes, ...Tags };
}

describe('SqsDeliveryQueue doorbells', () => {
  it("creates a subscription's queue with the template's visibility (six times the runner's timeout) and redrive", async () => {
    const queues = new SqsDeliveryQueue(client, { queuePrefix: 'it-' });
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
    const queues = queuesOn(client);
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
    const queues = queuesOn(client);
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
    const queues = queuesOn(client);
    const queue = newQueue();
    await queues.create(queue);
    const startedAt = Date.now();

    expect(await queues.waitForRing(queue, 300)).toBe(false);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(250);
  });

  it('counts no dead letters on a new queue, and throws NotFoundError for a queue never created or deleted since its URL was cached', async () => {
    const queues = queuesOn(client);
    const deleted = newQueue();
    await queues.create(deleted);
    expect(await queues.deadLetterCount(deleted)).toBe(0);
    await queues.ring(deleted, 0);
    // Another process deletes it: this one still has its URL.
    await queuesOn(client).delete(deleted);

    await expect(queues.ring(newQueue(), 0)).rejects.toBeInstanceOf(NotFoundError);
    await expect(queues.ring(deleted, 0)).rejects.toBeInstanceOf(NotFoundError);
    expect(await queues.deadLetterCount(deleted)).toBe(0);
  });

  it('keeps rings an hour and dead letters fourteen days, and tags both queues with the stage', async () => {
    const queues = queuesOn(client, { tags: runTimeQueueTags('it') });
    const queue = newQueue();

    await queues.create(queue);

    const tags = { 'ackline:app': 'ackline', 'ackline:stage': 'it' };
    expect(await attributesOf(client, queues.queueName(queue))).toEqual({
      MessageRetentionPeriod: String(DOORBELL_RETENTION_SECONDS),
      ...tags,
    });
    expect(await attributesOf(client, `${queues.queueName(queue)}-dlq`)).toEqual({
      MessageRetentionPeriod: String(MAX_RETENTION_SECONDS),
      ...tags,
    });
  });

  it('brings a doorbell made by an earlier version (rings kept fourteen days) to the definition', async () => {
    const queues = queuesOn(client, { tags: runTimeQueueTags('it') });
    const queue = newQueue();
    await client.send(
      new CreateQueueCommand({
        QueueName: queues.queueName(queue),
        Attributes: { MessageRetentionPeriod: String(MAX_RETENTION_SECONDS) },
      }),
    );

    await queues.create(queue);
    await queues.ring(queue, 0);

    expect(await attributesOf(client, queues.queueName(queue))).toMatchObject({
      MessageRetentionPeriod: String(subscriptionQueueTemplate.messageRetentionSeconds),
      'ackline:stage': 'it',
    });
    expect(await queues.waitForRing(queue, 1_000)).toBe(true);
  });

  it('drains every ring already there, so the next wait does not wake on a stale one', async () => {
    const queues = queuesOn(client);
    const queue = newQueue();
    await queues.create(queue);
    for (let i = 0; i < 25; i++) await queues.ring(queue, 0);

    const drained = await queues.drainRings(queue);

    expect(drained).toBe(25);
    expect(await queues.waitForRing(queue, 1_000)).toBe(false);
    expect(await queues.drainRings(queue)).toBe(0);
  });

  it('uses a queue that SQS makes usable only a second after CreateQueue, without calling it deleted', async () => {
    const queues = new SqsDeliveryQueue(lazyClient, { queuePrefix: 'it-' });
    const queue = newQueue();
    await queues.create(queue);

    // Another process (Lambda container) that never saw the queue: it resolves the name itself.
    await new SqsDeliveryQueue(lazyClient, { queuePrefix: 'it-' }).ring(queue, 0);

    expect(await queues.waitForRing(queue, 1_000)).toBe(true);
  });

  it('takes a queue that stays missing past the retry as deleted (404), not before', async () => {
    const queues = queuesOn(lazyClient, { newQueueRetry: { attempts: 3, firstPauseMs: 400 } });
    const startedAt = Date.now();

    await expect(queues.ring(newQueue(), 0)).rejects.toBeInstanceOf(NotFoundError);
    // Two pauses, of 200-400 and 400-800 ms.
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(600);
  });
});
