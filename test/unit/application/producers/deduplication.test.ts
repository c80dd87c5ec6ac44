// Producer deduplication (issue 23, criterion 4) over in-memory ports and a manual clock: a publish
// applied twice with its answer lost, a retry racing the first, a publisher that died mid-way.
import { describe, expect, it } from 'vitest';
import { DEDUPLICATION_CLAIM_TIMEOUT_MS } from '../../../../shared/application/producers/deduplication.ts';
import { lastSequenceId } from '../../../../shared/application/producers/last-sequence-id.ts';
import { publishMessages } from '../../../../shared/application/producers/publish-messages.ts';
import type { Principal } from '../../../../shared/application/tenancy/principal.ts';
import { createTopic } from '../../../../shared/application/topics/manage-topics.ts';
import type { UseCasePorts } from '../../../../shared/application/use-case-ports.ts';
import { ServiceUnavailableError } from '../../../../shared/domain/errors.ts';
import { RoundRobinRouter } from '../../../../shared/domain/message-router.ts';
import { TopicName } from '../../../../shared/domain/topic-name.ts';
import type { NewEntry } from '../../../../shared/ports/ledger.ts';
import { inMemoryPorts } from '../../../support/in-memory-ports.ts';
import { ManualClock } from '../../../support/manual-clock.ts';

const admin: Principal = { role: 'admin', superuser: true };

async function world(options: { partitions: number; deduplication: boolean }) {
  const clock = new ManualClock(1_700_000_000_000);
  const { ports } = inMemoryPorts({ clock });
  const topic = TopicName.parse(`persistent://public/default/dedup-${options.partitions}`);
  await createTopic(ports, admin, topic, options.partitions);
  if (options.deduplication) {
    await ports.policies.update({ topic: topic.toString() }, { deduplicationEnabled: true });
  }
  return { clock, ports, topic };
}

const sequenced = (producerName: string, ids: readonly number[]): NewEntry[] =>
  ids.map((sequenceId) => ({ payload: `m${sequenceId}`, properties: {}, producerName, sequenceId }));

function publish(ports: UseCasePorts, topic: TopicName, messages: readonly NewEntry[]) {
  return publishMessages(ports, admin, topic, { messages, router: new RoundRobinRouter(0) });
}

async function storedCount(ports: UseCasePorts, topic: TopicName, partitions: number): Promise<number> {
  const names = partitions === 0 ? [topic] : Array.from({ length: partitions }, (_, i) => topic.partition(i));
  let count = 0;
  for (const name of names) count += (await ports.ledger.state(name))?.msgInCounter ?? 0;
  return count;
}

describe('producer deduplication', () => {
  it.each([
    0, 3,
  ])('a publish applied twice with its answer lost stores once and answers the same ids (%i partitions)', async (partitions) => {
    const { ports, topic } = await world({ partitions, deduplication: true });
    const first = await publish(ports, topic, sequenced('p', [0, 1, 2, 3]));
    const again = await publish(ports, topic, sequenced('p', [0, 1, 2, 3]));
    const overlapping = await publish(ports, topic, sequenced('p', [3, 4]));

    expect(again).toEqual(first);
    expect(overlapping[0]).toEqual(first[3]);
    expect(await storedCount(ports, topic, partitions)).toBe(5);
  });

  it('stores twice when deduplication is off (the default)', async () => {
    const { ports, topic } = await world({ partitions: 0, deduplication: false });
    await publish(ports, topic, sequenced('p', [0]));
    await publish(ports, topic, sequenced('p', [0]));

    expect(await storedCount(ports, topic, 0)).toBe(2);
  });

  it('answers 503 to a retry racing the first publish, and lets a retry take over a dead publisher claim after the timeout', async () => {
    const { clock, ports, topic } = await world({ partitions: 0, deduplication: true });
    await publish(ports, topic, sequenced('p', [0]));
    // A publisher claimed 1..2 and died before appending.
    const incarnation = String((await ports.ledger.state(topic))?.ledgers[0]?.ledgerId);
    await ports.producerSequences.claim({
      partition: topic.toString(),
      producerName: 'p',
      incarnation,
      claim: { token: 'dead', firstSequenceId: 1, lastSequenceId: 2, claimedAtMs: clock.nowMs() },
      staleBeforeMs: 0,
    });
    const racing = await publish(ports, topic, sequenced('p', [1, 2])).catch((error: unknown) => error);
    clock.advance(DEDUPLICATION_CLAIM_TIMEOUT_MS + 1);
    const takenOver = await publish(ports, topic, sequenced('p', [1, 2]));
    const last = await lastSequenceId(ports, admin, topic, 'p');

    expect(racing).toBeInstanceOf(ServiceUnavailableError);
    expect(takenOver.every((result) => result.errorCode === 0)).toBe(true);
    expect(await storedCount(ports, topic, 0)).toBe(3);
    expect(last).toEqual({ producerName: 'p', lastSequenceId: 2, partitions: { '-1': 2 } });
  });

  it('keeps each producer name apart, and leaves messages without a sequence id alone', async () => {
    const { ports, topic } = await world({ partitions: 0, deduplication: true });
    await publish(ports, topic, sequenced('a', [5]));
    await publish(ports, topic, sequenced('b', [5]));
    await publish(ports, topic, [{ payload: 'plain', properties: {}, producerName: 'a' }]);
    await publish(ports, topic, [{ payload: 'plain', properties: {}, producerName: 'a' }]);

    expect(await storedCount(ports, topic, 0)).toBe(4);
  });

  it('answers a duplicate older than the remembered batches with an error, and stores nothing', async () => {
    const { ports, topic } = await world({ partitions: 0, deduplication: true });
    for (let id = 0; id < 10; id += 1) await publish(ports, topic, sequenced('p', [id]));
    const [oldest] = await publish(ports, topic, sequenced('p', [0]));
    const [recent] = await publish(ports, topic, sequenced('p', [9]));

    expect(oldest?.errorCode).toBe(2);
    expect(oldest?.errorMsg).toMatch(/not stored again/);
    expect(recent?.errorCode).toBe(0);
    expect(await storedCount(ports, topic, 0)).toBe(10);
  });
});
