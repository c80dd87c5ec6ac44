// maxSubscriptionsPerTopic and maxConsumersPerSubscription (issue 22, criterion 7) over in-memory
// ports: the namespace's limit, the topic's over it, the default once both are removed, and the
// refusals Pulsar answers (412 for a subscription, ConsumerBusy 409 for a consumer).
import { describe, expect, it } from 'vitest';
import { subscribeConsumer } from '../../../../shared/application/consumers/subscribe-consumer.ts';
import { createSubscription } from '../../../../shared/application/subscriptions/manage-subscriptions.ts';
import { getPolicy, setLimit } from '../../../../shared/application/tenancy/manage-policies.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { createTopic } from '../../../../shared/application/topics/manage-topics.ts';
import { ConflictError, ForbiddenError, PreconditionFailedError } from '../../../../shared/domain/errors.ts';
import { appliedPolicies, DEFAULT_LIMITS, limitReached } from '../../../../shared/domain/policies.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { InMemoryConsumerRegistry } from '../../../support/in-memory-consumer-registry.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { InMemoryScheduler } from '../../../support/in-memory-scheduler.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

const admin: Principal = { role: 'admin', superuser: true };
const NAMESPACE = 'public/default';
const topic = TopicName.parse('persistent://public/default/limited');

function world() {
  const clock = new ManualClock(1_700_000_000_000);
  const { ports } = inMemoryPorts({
    clock,
    consumers: new InMemoryConsumerRegistry(),
    scheduler: new InMemoryScheduler(),
  });
  const create = (name: string) =>
    createSubscription(ports, admin, topic, { name, type: 'Shared', initialPosition: 'Earliest' });
  const subscribe = (subscription: string) =>
    subscribeConsumer(ports, admin, {
      topic,
      subscription,
      subscriptionType: 'Shared',
      initialPosition: 'Earliest',
      policy: {},
    });
  return { clock, ports, create, subscribe };
}

describe('the limits in force', () => {
  it('are the topic’s, else the namespace’s, else 1,000 each; 0 lifts a limit', () => {
    expect(DEFAULT_LIMITS).toEqual({ maxSubscriptionsPerTopic: 1000, maxConsumersPerSubscription: 1000 });
    const applied = appliedPolicies(
      { maxSubscriptionsPerTopic: 3 },
      { maxSubscriptionsPerTopic: 2, maxConsumersPerSubscription: 5 },
    );
    expect(applied.maxSubscriptionsPerTopic).toBe(3);
    expect(applied.maxConsumersPerSubscription).toBe(5);
    expect(appliedPolicies(undefined, undefined).maxConsumersPerSubscription).toBe(1000);
    expect(limitReached(0, 10_000)).toBe(false);
    expect(limitReached(2, 2)).toBe(true);
    expect(limitReached(2, 1)).toBe(false);
  });
});

describe('setLimit / getPolicy', () => {
  it('sets, reads and removes a namespace limit; a negative one is 412; only a superuser', async () => {
    const { ports } = world();
    const target = { namespace: NAMESPACE };
    await setLimit(ports, admin, target, { name: 'maxSubscriptionsPerTopic', value: 2 });
    expect(await getPolicy(ports, admin, target, { name: 'maxSubscriptionsPerTopic' })).toBe(2);
    expect(await getPolicy(ports, admin, target, { name: 'maxConsumersPerSubscription' })).toBeUndefined();
    await expect(
      setLimit(ports, admin, target, { name: 'maxConsumersPerSubscription', value: -1 }),
    ).rejects.toThrow(new PreconditionFailedError('maxConsumersPerSubscription must be 0 or more, got -1'));
    await expect(
      setLimit(ports, { role: 'app', superuser: false }, target, {
        name: 'maxSubscriptionsPerTopic',
        value: 1,
      }),
    ).rejects.toBeInstanceOf(ForbiddenError);
    await setLimit(ports, admin, target, { name: 'maxSubscriptionsPerTopic', value: null });
    expect(await getPolicy(ports, admin, target, { name: 'maxSubscriptionsPerTopic' })).toBeUndefined();
  });

  it('answers the limit in force on a topic with applied', async () => {
    const { ports } = world();
    await createTopic(ports, admin, topic, 0);
    const query = { name: 'maxConsumersPerSubscription', applied: true } as const;
    expect(await getPolicy(ports, admin, { topic }, query)).toBe(1000);
    await setLimit(ports, admin, { namespace: NAMESPACE }, { name: 'maxConsumersPerSubscription', value: 7 });
    expect(await getPolicy(ports, admin, { topic }, query)).toBe(7);
    await setLimit(ports, admin, { topic }, { name: 'maxConsumersPerSubscription', value: 9 });
    expect(await getPolicy(ports, admin, { topic }, query)).toBe(9);
  });
});

describe('maxSubscriptionsPerTopic', () => {
  it('refuses one more subscription (admin or subscribe) with Pulsar’s reason; the topic’s limit overrides', async () => {
    const { ports, create, subscribe } = world();
    await createTopic(ports, admin, topic, 0);
    await setLimit(ports, admin, { namespace: NAMESPACE }, { name: 'maxSubscriptionsPerTopic', value: 2 });
    await create('a');
    await subscribe('b');
    const refused = create('c');
    await expect(refused).rejects.toBeInstanceOf(PreconditionFailedError);
    await expect(refused).rejects.toThrow(
      'Exceed the maximum number of subscriptions of the topic: persistent://public/default/limited (maxSubscriptionsPerTopic 2)',
    );
    await expect(subscribe('c')).rejects.toBeInstanceOf(PreconditionFailedError);
    // Existing subscriptions stay joinable at the limit.
    await expect(subscribe('a')).resolves.toHaveProperty('consumerId');
    await setLimit(ports, admin, { topic }, { name: 'maxSubscriptionsPerTopic', value: 3 });
    await create('c');
    await expect(create('d')).rejects.toBeInstanceOf(PreconditionFailedError);
    await setLimit(ports, admin, { topic }, { name: 'maxSubscriptionsPerTopic', value: null });
    await setLimit(ports, admin, { namespace: NAMESPACE }, { name: 'maxSubscriptionsPerTopic', value: null });
    await create('d');
    expect((await ports.catalog.listSubscriptions(topic)).length).toBe(4);
  });

  it('counts each partition of a partitioned topic', async () => {
    const { ports } = world();
    const partitioned = TopicName.parse('persistent://public/default/parted');
    await createTopic(ports, admin, partitioned, 2);
    await setLimit(ports, admin, { topic: partitioned }, { name: 'maxSubscriptionsPerTopic', value: 1 });
    const spec = { type: 'Shared', initialPosition: 'Earliest' } as const;
    await createSubscription(ports, admin, partitioned, { name: 'a', ...spec });
    await expect(
      createSubscription(ports, admin, partitioned, { name: 'b', ...spec }),
    ).rejects.toBeInstanceOf(PreconditionFailedError);
    expect((await ports.catalog.listSubscriptions(partitioned.partition(1))).map((s) => s.name)).toEqual([
      'a',
    ]);
  });
});

describe('maxConsumersPerSubscription', () => {
  it('refuses one more connected consumer (ConsumerBusy, 409); a lapsed one stops counting', async () => {
    const { clock, ports, subscribe } = world();
    await createTopic(ports, admin, topic, 0);
    await setLimit(ports, admin, { namespace: NAMESPACE }, { name: 'maxConsumersPerSubscription', value: 2 });
    await subscribe('s');
    await subscribe('s');
    const refused = subscribe('s');
    await expect(refused).rejects.toBeInstanceOf(ConflictError);
    await expect(refused).rejects.toThrow(
      'Subscription reached max consumers limit: 2 consumers on s of persistent://public/default/limited (maxConsumersPerSubscription 2)',
    );
    // Another subscription has its own count.
    await subscribe('other');
    await setLimit(ports, admin, { topic }, { name: 'maxConsumersPerSubscription', value: 3 });
    await subscribe('s');
    await expect(subscribe('s')).rejects.toBeInstanceOf(ConflictError);
    clock.advance(61_000); // the leases (60 s) lapse
    await expect(subscribe('s')).resolves.toHaveProperty('consumerId');
  });
});
