// Found by the consumer-path simulation (issue 21): the admin's cursor operations on a partitioned
// topic one of whose partitions nothing was published to yet (no ledger state): a reset to a
// timestamp answered 500 (RangeError: `... has no ledger state`) instead of moving the cursors
// of the partitions that have messages and leaving the empty one where it is.
import { describe, expect, it } from 'vitest';
import { publishMessages } from '../../../../shared/application/producers/publish-messages.ts';
import { clearBacklog } from '../../../../shared/application/subscriptions/clear-backlog.ts';
import { expireMessages } from '../../../../shared/application/subscriptions/expire-messages.ts';
import { createSubscription } from '../../../../shared/application/subscriptions/manage-subscriptions.ts';
import {
  resetCursorToEdge,
  resetCursorToTimestamp,
} from '../../../../shared/application/subscriptions/reset-subscription.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { firstPublishedAtOrAfter } from '../../../../shared/application/topics/find-by-publish-time.ts';
import { createTopic, deleteTopic } from '../../../../shared/application/topics/manage-topics.ts';
import { getTopicStats } from '../../../../shared/application/topics/topic-stats.ts';
import { RoundRobinRouter } from '../../../../shared/domain/message-router.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import type { ManualClock } from '../../../support/manual-clock.ts';

const admin: Principal = { role: 'admin', superuser: true };
const topic = TopicName.parse('persistent://tenant/ns/half-empty');

/** A topic of 2 partitions, 3 messages published to partition 0 only, a subscription at Earliest. */
async function world() {
  const { ports } = inMemoryPorts({
    consumers: new InMemoryConsumerRegistry(),
    scheduler: new InMemoryScheduler(),
  });
  await createTopic(ports, admin, topic, 2);
  await createSubscription(ports, admin, topic, { name: 'sub', type: 'Shared', initialPosition: 'Earliest' });
  const messages = Array.from({ length: 3 }, (_, i) => ({ payload: `m${i}`, properties: {} }));
  await publishMessages(ports, admin, topic.partition(0), { messages, router: new RoundRobinRouter(0) });
  const backlogs = async () =>
    Object.values((await getTopicStats(ports, admin, topic, { perPartition: true })).partitions ?? {}).map(
      (stats) => stats.subscriptions.sub?.msgBacklog,
    );
  const request = { topic, subscriptionName: 'sub', dryRun: false, principal: admin, requestId: 'r' };
  return { ports, backlogs, request, clock: ports.clock as ManualClock };
}

describe('cursor operations on a partitioned topic with a partition nothing was published to', () => {
  it('a reset to a timestamp moves the partition with messages and leaves the empty one', async () => {
    const { ports, backlogs, request, clock } = await world();
    await clearBacklog(ports, request);
    expect(await backlogs()).toEqual([0, 0]);

    await resetCursorToTimestamp(ports, { ...request, timestampMs: clock.nowMs() - 60_000 });

    expect(await backlogs()).toEqual([3, 0]);
  });

  it('expireMessages expires on the partition with messages and leaves the empty one', async () => {
    const { ports, backlogs, request, clock } = await world();
    clock.advance(120_000);

    await expireMessages(ports, { ...request, expireTimeInSeconds: 60 });

    expect(await backlogs()).toEqual([0, 0]);
  });

  it('clear-backlog and a reset to latest empty the partition with messages', async () => {
    const { ports, backlogs, request } = await world();
    await clearBacklog(ports, request);
    expect(await backlogs()).toEqual([0, 0]);
    await resetCursorToEdge(ports, { ...request, edge: 'earliest' });
    expect(await backlogs()).toEqual([3, 0]);

    await resetCursorToEdge(ports, { ...request, edge: 'latest' });

    expect(await backlogs()).toEqual([0, 0]);
  });
});

// Found by the consumer-path simulation (issue 21, `npm run sim -- --path consumer --seed 1`,
// Key_Shared): a reset to a timestamp racing the topic's deletion found the partition's ledger
// state gone after it resolved the subscriptions, and answered 500 (RangeError: `... has no
// ledger state`); now 404, as a call made after the deletion answers.
describe('a cursor operation whose partition was deleted meanwhile', () => {
  it('the publish-time search answers 404 (TopicNotFoundError), not a RangeError', async () => {
    const { ports, clock } = await world();
    await deleteTopic(ports, admin, topic, { force: true });

    await expect(firstPublishedAtOrAfter(ports.ledger, topic.partition(0), clock.nowMs())).rejects.toThrow(
      expect.objectContaining({ name: 'TopicNotFoundError' }),
    );
  });
});
