// ProducerAccessStore's contract (producer access modes, issue 23) over the in-memory fake, dynalite
// and DynamoDB Local: the holder lives on the partition's ledger state, and the ledger's id
// allocation checks each publish against it in the same write (what a publish costs, measured).
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { TopicNotFoundError } from '../../shared/domain/catalog-errors.ts';
import { ProducerBusyError, ProducerFencedError } from '../../shared/domain/producer-access.ts';
import { TopicName } from '../../shared/domain/topic-name.ts';
import type { NewEntry } from '../../shared/ports/ledger.ts';
import { type StorageStores, storageBackends, useStorage } from '../support/storage-backends.ts';

const T = 1_700_000_000_000;
const LEASE_MS = 30_000;

const partitionNamed = (label: string) =>
  TopicName.parse(`persistent://public/default/access-${label}-${randomUUID().slice(0, 8)}`);
const one: NewEntry[] = [{ payload: 'm', properties: {} }];

async function initialized(stores: StorageStores, label: string) {
  const ledger = stores.ledger(1000);
  const partition = partitionNamed(label);
  await ledger.initialize(partition);
  return { ledger, partition, access: stores.producerAccess() };
}

function acquire(
  stores: ReturnType<typeof initialized> extends Promise<infer R> ? R : never,
  producerId: string,
  options: { fence?: boolean; nowMs?: number } = {},
) {
  const nowMs = options.nowMs ?? T;
  return stores.access.acquire({
    partition: stores.partition,
    producerId,
    producerName: `name-${producerId}`,
    fence: options.fence ?? false,
    nowMs,
    leaseUntilMs: nowMs + LEASE_MS,
  });
}

describe.each(storageBackends())('ProducerAccessStore on $name', (backend) => {
  const storage = useStorage(backend);

  it('the first exclusive producer takes the partition at epoch 1; a second is refused and sees the holder', async () => {
    const world = await initialized(storage(), 'first');

    const first = await acquire(world, 'a');
    const second = await acquire(world, 'b');

    expect(first).toEqual({
      acquired: true,
      holder: { producerId: 'a', producerName: 'name-a', topicEpoch: 1, leaseUntilMs: T + LEASE_MS },
    });
    expect(second).toEqual({ acquired: false, holder: first.holder });
  });

  it('a lapsed lease frees the partition: the next producer takes it at the next epoch', async () => {
    const world = await initialized(storage(), 'lapsed');
    await acquire(world, 'a');

    const later = await acquire(world, 'b', { nowMs: T + LEASE_MS + 1 });

    expect(later.acquired).toBe(true);
    expect(later.holder?.topicEpoch).toBe(2);
  });

  it('fencing takes the partition from a live holder; the holder can no longer renew or publish', async () => {
    const world = await initialized(storage(), 'fence');
    await acquire(world, 'a');

    const taken = await acquire(world, 'b', { fence: true });

    expect(taken.acquired).toBe(true);
    expect(taken.holder?.topicEpoch).toBe(2);
    expect(
      await world.access.renew({ partition: world.partition, producerId: 'a', leaseUntilMs: T + 1 }),
    ).toBe(false);
    await expect(
      world.ledger.append(world.partition, one, T, { access: { producerId: 'a' } }),
    ).rejects.toBeInstanceOf(ProducerFencedError);
    const appended = await world.ledger.append(world.partition, one, T, { access: { producerId: 'b' } });
    expect(appended.positions).toHaveLength(1);
    expect((await world.ledger.state(world.partition))?.msgInCounter).toBe(1);
  });

  it('while an exclusive producer holds the partition a publish without its token is refused; after release it is not', async () => {
    const world = await initialized(storage(), 'busy');
    await acquire(world, 'a');

    await expect(world.ledger.append(world.partition, one, T)).rejects.toBeInstanceOf(ProducerBusyError);
    // Past the holder's lease, others publish again.
    expect((await world.ledger.append(world.partition, one, T + LEASE_MS + 1)).positions).toHaveLength(1);
    await world.access.release(world.partition, 'a');
    expect(await world.access.holder(world.partition)).toBeUndefined();
    expect((await world.ledger.append(world.partition, one, T)).positions).toHaveLength(1);
  });

  it("a holder's publish renews its lease; release by another producer changes nothing", async () => {
    const world = await initialized(storage(), 'renew');
    await acquire(world, 'a');

    await world.ledger.append(world.partition, one, T + 20_000, { access: { producerId: 'a' } });
    await world.access.release(world.partition, 'b');

    expect((await world.access.holder(world.partition))?.leaseUntilMs).toBe(T + 20_000 + LEASE_MS);
    expect(
      await world.access.renew({ partition: world.partition, producerId: 'a', leaseUntilMs: T + 99_000 }),
    ).toBe(true);
    expect((await world.access.holder(world.partition))?.leaseUntilMs).toBe(T + 99_000);
  });

  it('a partition without a ledger: acquire rejects TopicNotFoundError, holder is undefined', async () => {
    const stores = storage();
    const partition = partitionNamed('missing');

    await expect(
      stores.producerAccess().acquire({
        partition,
        producerId: 'a',
        producerName: 'a',
        fence: true,
        nowMs: T,
        leaseUntilMs: T + LEASE_MS,
      }),
    ).rejects.toBeInstanceOf(TopicNotFoundError);
    expect(await stores.producerAccess().holder(partition)).toBeUndefined();
  });
});

describe.each(
  storageBackends().filter((backend) => backend.name !== 'in-memory'),
)('what the access check costs a publish on $name', (backend) => {
  const storage = useStorage(backend);

  it('a publish costs the same with or without an exclusive producer on the partition (the check rides on the id allocation)', async () => {
    const stores = storage();
    const plain = await initialized(stores, 'cost-plain');
    const exclusive = await initialized(stores, 'cost-exclusive');
    await acquire(exclusive, 'a');
    // The first publish of a minute renews the rate snapshot: measure the second.
    await plain.ledger.append(plain.partition, one, T, { producerName: 'orders' });
    await exclusive.ledger.append(exclusive.partition, one, T, {
      producerName: 'orders',
      access: { producerId: 'a' },
    });

    stores.meter?.reset();
    await plain.ledger.append(plain.partition, one, T, { producerName: 'orders' });
    const withoutHolder = stores.meter?.snapshot();
    stores.meter?.reset();
    await exclusive.ledger.append(exclusive.partition, one, T, {
      producerName: 'orders',
      access: { producerId: 'a' },
    });
    const withHolder = stores.meter?.snapshot();

    expect(withoutHolder).toEqual({
      UpdateItem: { requests: 1, readCapacityUnits: 0, writeCapacityUnits: 1 },
      PutItem: { requests: 1, readCapacityUnits: 0, writeCapacityUnits: 1 },
    });
    expect(withHolder).toEqual(withoutHolder);
  });
});
