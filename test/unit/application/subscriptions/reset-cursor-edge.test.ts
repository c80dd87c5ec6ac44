// resetcursor with MessageId.earliest / MessageId.latest and a partitionIndex: as a message id of
// one partition moves that partition's cursor only, an edge naming a partition resets that one;
// a partition the topic does not have is refused (412), moving nothing.
import { describe, expect, it } from 'vitest';
import { publishMessages } from '../../../../shared/application/producers/publish-messages.ts';
import { createSubscription } from '../../../../shared/application/subscriptions/manage-subscriptions.ts';
import { resetCursorToEdge } from '../../../../shared/application/subscriptions/reset-subscription.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { createTopic } from '../../../../shared/application/topics/manage-topics.ts';
import { getTopicStats } from '../../../../shared/application/topics/topic-stats.ts';
import { RoundRobinRouter } from '../../../../shared/domain/message-router.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { resetCursorBodyOf } from '../../../../shared/http/admin-requests.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';

const admin: Principal = { role: 'admin', superuser: true };
const topic = TopicName.parse('persistent://tenant/ns/edges');

async function world() {
  const { ports } = inMemoryPorts({
    consumers: new InMemoryConsumerRegistry(),
    scheduler: new InMemoryScheduler(),
  });
  await createTopic(ports, admin, topic, 2);
  const messages = Array.from({ length: 4 }, (_, i) => ({ payload: `m${i}`, properties: {} }));
  await publishMessages(ports, admin, topic, { messages, router: new RoundRobinRouter(0) });
  await createSubscription(ports, admin, topic, { name: 'sub', type: 'Shared', initialPosition: 'Latest' });
  const backlogs = async () =>
    Object.values((await getTopicStats(ports, admin, topic, { perPartition: true })).partitions ?? {}).map(
      (stats) => stats.subscriptions.sub?.msgBacklog,
    );
  return { ports, backlogs };
}

describe('resetcursor to earliest/latest with a partitionIndex', () => {
  it('the body keeps the partitionIndex of an edge (-1: every partition)', () => {
    expect(resetCursorBodyOf({ ledgerId: -1, entryId: -1, partitionIndex: 1 })).toEqual({
      edge: 'earliest',
      partitionIndex: 1,
    });
    expect(resetCursorBodyOf({ ledgerId: -1, entryId: -1, partitionIndex: -1 })).toEqual({
      edge: 'earliest',
    });
  });

  it('resets only the partition named', async () => {
    const { ports, backlogs } = await world();
    expect(await backlogs()).toEqual([0, 0]);
    const request = { topic, subscriptionName: 'sub', dryRun: false, principal: admin, requestId: 'r' };

    await resetCursorToEdge(ports, { ...request, edge: 'earliest', partitionIndex: 1 });

    expect(await backlogs()).toEqual([0, 2]);
  });

  it('refuses a partition the topic does not have (412), moving nothing', async () => {
    const { ports, backlogs } = await world();
    const request = { topic, subscriptionName: 'sub', dryRun: false, principal: admin, requestId: 'r' };

    await expect(
      resetCursorToEdge(ports, { ...request, edge: 'earliest', partitionIndex: 5 }),
    ).rejects.toThrow(
      expect.objectContaining({
        name: 'PreconditionFailedError',
        message: expect.stringMatching(/partition 5/),
      }),
    );
    expect(await backlogs()).toEqual([0, 0]);
  });
});
