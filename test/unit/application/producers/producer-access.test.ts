// Producer access modes (issue 23) over in-memory ports and a manual clock: Pulsar's
// incrementTopicEpochIfNeeded answers, per partition, and the publishes they allow.
import { describe, expect, it } from 'vitest';
import {
  registerProducer,
  releaseProducer,
  renewProducer,
} from '../../../../shared/application/producers/producer-access.ts';
import { publishMessages } from '../../../../shared/application/producers/publish-messages.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { createTopic } from '../../../../shared/application/topics/manage-topics.ts';
import type { UseCasePorts } from '../../../../shared/application/use-case-ports.ts';
import { ForbiddenError } from '../../../../shared/domain/errors.ts';
import { RoundRobinRouter } from '../../../../shared/domain/message-router.ts';
import {
  PRODUCER_LEASE_MS,
  ProducerBusyError,
  ProducerFencedError,
} from '../../../../shared/domain/producer-access.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

const admin: Principal = { role: 'admin', superuser: true };

async function world(partitions: number) {
  const clock = new ManualClock(1_700_000_000_000);
  const { ports } = inMemoryPorts({ clock });
  const topic = TopicName.parse(`persistent://public/default/access-${partitions}`);
  await createTopic(ports, admin, topic, partitions);
  return { clock, ports, topic };
}

function publish(ports: UseCasePorts, topic: TopicName, producerId?: string) {
  return publishMessages(ports, admin, topic, {
    messages: [{ payload: 'm', properties: {} }],
    router: new RoundRobinRouter(0),
    ...(producerId ? { access: { producerId } } : {}),
  });
}

async function stored(ports: UseCasePorts, topic: TopicName, partitions: number): Promise<number> {
  const names = partitions === 0 ? [topic] : Array.from({ length: partitions }, (_, i) => topic.partition(i));
  let count = 0;
  for (const name of names) count += (await ports.ledger.state(name))?.msgInCounter ?? 0;
  return count;
}

describe('producer access modes', () => {
  it.each([
    0, 3,
  ])('Exclusive: a second exclusive producer is refused ProducerFenced, a Shared one ProducerBusy (%i partitions)', async (partitions) => {
    const { ports, topic } = await world(partitions);
    const first = await registerProducer(ports, admin, topic, {
      producerName: 'p-1',
      accessMode: 'Exclusive',
    });

    await expect(
      registerProducer(ports, admin, topic, { producerName: 'p-2', accessMode: 'Exclusive' }),
    ).rejects.toBeInstanceOf(ProducerFencedError);
    await expect(
      registerProducer(ports, admin, topic, { producerName: 'p-3', accessMode: 'WaitForExclusive' }),
    ).rejects.toBeInstanceOf(ProducerBusyError);
    await expect(
      registerProducer(ports, admin, topic, { producerName: 'p-4', accessMode: 'Shared' }),
    ).rejects.toBeInstanceOf(ProducerBusyError);
    await expect(publish(ports, topic)).rejects.toBeInstanceOf(ProducerBusyError);
    await publish(ports, topic, first.producerId);

    expect(first.leaseMs).toBe(PRODUCER_LEASE_MS);
    expect(Object.values(first.topicEpochs ?? {})).toEqual(Array(Math.max(1, partitions)).fill(1));
    expect(await stored(ports, topic, partitions)).toBe(1);
  });

  it('a refused registration gives back the partitions it took before the refusal', async () => {
    const { ports, topic } = await world(3);
    // Another producer holds partition 2 only.
    await registerProducer(ports, admin, topic.partition(2), {
      producerName: 'holder',
      accessMode: 'Exclusive',
    });

    await expect(
      registerProducer(ports, admin, topic, { producerName: 'p', accessMode: 'Exclusive' }),
    ).rejects.toBeInstanceOf(ProducerFencedError);

    expect(await ports.producerAccess.holder(topic.partition(0))).toBeUndefined();
    expect(await ports.producerAccess.holder(topic.partition(1))).toBeUndefined();
    expect((await ports.producerAccess.holder(topic.partition(2)))?.producerName).toBe('holder');
  });

  it('WaitForExclusive gets the topic once the holder releases it, or once its lease lapses without heartbeats', async () => {
    const { clock, ports, topic } = await world(0);
    const first = await registerProducer(ports, admin, topic, {
      producerName: 'p-1',
      accessMode: 'Exclusive',
    });
    await releaseProducer(ports, admin, topic, first.producerId as string);
    const second = await registerProducer(ports, admin, topic, {
      producerName: 'p-2',
      accessMode: 'WaitForExclusive',
    });

    clock.advance(PRODUCER_LEASE_MS - 1);
    await renewProducer(ports, admin, topic, second.producerId as string);
    clock.advance(PRODUCER_LEASE_MS - 1);
    await expect(
      registerProducer(ports, admin, topic, { producerName: 'p-3', accessMode: 'WaitForExclusive' }),
    ).rejects.toBeInstanceOf(ProducerBusyError);
    clock.advance(2);
    const third = await registerProducer(ports, admin, topic, {
      producerName: 'p-3',
      accessMode: 'WaitForExclusive',
    });

    expect(third.topicEpochs).toEqual({ '-1': 3 });
    // The producer whose lease lapsed was fenced by the takeover.
    await expect(renewProducer(ports, admin, topic, second.producerId as string)).rejects.toBeInstanceOf(
      ProducerFencedError,
    );
  });

  it('ExclusiveWithFencing takes the topic from a live holder: its publishes and heartbeats are refused, nothing stored', async () => {
    const { ports, topic } = await world(2);
    const first = await registerProducer(ports, admin, topic, {
      producerName: 'p-1',
      accessMode: 'Exclusive',
    });
    await publish(ports, topic, first.producerId);

    const second = await registerProducer(ports, admin, topic, {
      producerName: 'p-2',
      accessMode: 'ExclusiveWithFencing',
    });

    await expect(publish(ports, topic, first.producerId)).rejects.toBeInstanceOf(ProducerFencedError);
    await expect(renewProducer(ports, admin, topic, first.producerId as string)).rejects.toBeInstanceOf(
      ProducerFencedError,
    );
    // The fenced producer's close leaves the new holder in place.
    await releaseProducer(ports, admin, topic, first.producerId as string);
    await publish(ports, topic, second.producerId);
    expect(second.topicEpochs).toEqual({ '0': 2, '1': 2 });
    expect(await stored(ports, topic, 2)).toBe(2);
  });

  it('with deduplication on, a refused publish settles its claim: the producer publishes again at once once allowed', async () => {
    const { ports, topic } = await world(0);
    await ports.policies.update({ topic: topic.toString() }, { deduplicationEnabled: true });
    const exclusive = await registerProducer(ports, admin, topic, {
      producerName: 'x',
      accessMode: 'Exclusive',
    });
    const sequenced = (sequenceId: number) =>
      publishMessages(ports, admin, topic, {
        messages: [{ payload: 'm', properties: {}, producerName: 'shared', sequenceId }],
        router: new RoundRobinRouter(0),
      });

    await expect(sequenced(0)).rejects.toBeInstanceOf(ProducerBusyError);
    await releaseProducer(ports, admin, topic, exclusive.producerId as string);
    const [first] = await sequenced(0);
    const [again] = await sequenced(0);

    expect(first?.errorCode).toBe(0);
    expect(again).toEqual(first);
    expect(await ports.producerSequences.get(topic.toString(), 'shared')).toMatchObject({
      lastSequenceId: 0,
    });
    expect(await stored(ports, topic, 0)).toBe(1);
  });

  it('Shared registration writes nothing and answers no registration id', async () => {
    const { ports, topic } = await world(0);

    const shared = await registerProducer(ports, admin, topic, { producerName: 'p', accessMode: 'Shared' });

    expect(shared).toEqual({ accessMode: 'Shared', leaseMs: 0 });
    expect(await ports.producerAccess.holder(topic)).toBeUndefined();
  });

  it('needs the produce permission (consume is not enough)', async () => {
    const { ports, topic } = await world(0);
    const reader: Principal = { role: 'reader', superuser: false };
    const writer: Principal = { role: 'writer', superuser: false };
    await ports.permissions.grant('public/default', reader.role, ['consume']);
    await ports.permissions.grant('public/default', writer.role, ['produce']);

    await expect(
      registerProducer(ports, reader, topic, { producerName: 'p', accessMode: 'Exclusive' }),
    ).rejects.toBeInstanceOf(ForbiddenError);
    await expect(renewProducer(ports, reader, topic, 'id-1')).rejects.toBeInstanceOf(ForbiddenError);
    await expect(releaseProducer(ports, reader, topic, 'id-1')).rejects.toBeInstanceOf(ForbiddenError);
    expect(await ports.producerAccess.holder(topic)).toBeUndefined();
    const registered = await registerProducer(ports, writer, topic, {
      producerName: 'p',
      accessMode: 'Exclusive',
    });
    expect(registered.producerId).toBeDefined();
  });
});
