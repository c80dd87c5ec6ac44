import { randomUUID } from 'node:crypto';
import { GetItemCommand, PutItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import type { OperationUsage } from '../../shared/adapters/dynamodb/capacity-meter.ts';
import { Position } from '../../shared/domain/position.ts';
import { TopicName } from '../../shared/domain/topic-name.ts';
import type { NewEntry } from '../../shared/ports/ledger.ts';
import { type StorageStores, storageBackends, useStorage } from '../support/storage-backends.ts';

// Issue 22, criterion 2: no item grows with history. The partition's state item is updated by
// every publish (the id allocation), and DynamoDB bills an update on the larger of the item before
// and after, per started KB: it holds nothing that grows with the number of ledgers, whose list
// lives in items of their own, one per closed ledger, written once. Measured with the capacity
// DynamoDB itself reports (dynalite and AWS's DynamoDB Local apply DynamoDB's size rules).
// 10,000 rollovers (8 requests each) take about 95 s on DynamoDB Local, AWS's own
// implementation, and about 5 minutes on dynalite, which applies the same size rules: dynalite runs 2,000
// (10,000 measured the same). ACKLINE_TEST_ROLLOVERS sets both.
const ROLLOVERS: Record<string, number> = { dynalite: 2_000, 'DynamoDB Local': 10_000 };
const rolloversOn = (backend: string): number =>
  Number(process.env.ACKLINE_TEST_ROLLOVERS ?? ROLLOVERS[backend] ?? 2_000);
const T = 1_700_000_000_000;

function partitionNamed(prefix: string): TopicName {
  return TopicName.parse(`persistent://cost/${prefix}-${randomUUID().slice(0, 8)}/orders`).partition(0);
}

const entries = (count: number): NewEntry[] =>
  Array.from({ length: count }, (_, i) => ({ payload: `message ${i}`, properties: {} }));

describe.each(
  storageBackends().filter((backend) => backend.name !== 'in-memory'),
)('ledger state cost on $name', (backend) => {
  const stores = useStorage(backend);

  /** What one call cost, per operation. */
  async function cost(
    stores: StorageStores,
    call: () => Promise<unknown>,
  ): Promise<Record<string, OperationUsage>> {
    stores.meter?.reset();
    await call();
    return stores.meter?.snapshot() ?? {};
  }

  const rollovers = rolloversOn(backend.name);

  it(
    `a publish costs what it cost at the first after ${rollovers} rollovers (ledgers of 2 entries)`,
    async () => {
      const s = stores();
      const ledger = s.ledger(2);
      const partition = partitionNamed('rollovers');
      await ledger.initialize(partition);
      const publish = (count: number, atMs: number) =>
        cost(s, () => ledger.append(partition, entries(count), atMs, { producerName: 'orders' }));

      // The first publish renews the rate snapshot (there is none yet); the second is a plain one.
      const firstRenewing = await publish(1, T);
      const firstPlain = await publish(1, T);
      // Each publish of 2 into a full ledger rolls over once and fills the new ledger.
      const firstRollover = await publish(2, T);
      for (let i = 1; i < rollovers - 1; i++) await publish(2, T);
      const lastRollover = await publish(2, T);
      // A new ledger with room: one renewing and one plain publish, a minute later.
      await publish(1, T);
      const laterRenewing = await publish(1, T + 60_000);
      await publish(1, T + 60_000);
      const laterPlain = await publish(1, T + 60_000);

      expect(firstPlain).toEqual({
        UpdateItem: { requests: 1, readCapacityUnits: 0, writeCapacityUnits: 1 },
        PutItem: { requests: 1, readCapacityUnits: 0, writeCapacityUnits: 1 },
      });
      expect(firstRenewing).toEqual({
        UpdateItem: { requests: 2, readCapacityUnits: 0, writeCapacityUnits: 2 },
        PutItem: { requests: 1, readCapacityUnits: 0, writeCapacityUnits: 1 },
      });
      expect(laterPlain).toEqual(firstPlain);
      expect(laterRenewing).toEqual(firstRenewing);
      expect(lastRollover).toEqual(firstRollover);
      const state = await ledger.state(partition);
      expect(state?.ledgers).toHaveLength(rollovers + 3);
      expect(state?.ledgers.slice(0, -1).every((info) => info.entries === 2n)).toBe(true);
      expect(state?.msgInCounter).toBe(2 * rollovers + 6);
      console.info(
        `${backend.name}: publish of 1 entry at the first and after ${rollovers + 2} rollovers:`,
        JSON.stringify(laterPlain),
        '; a publish that rolls over:',
        JSON.stringify(lastRollover),
      );

      // A process that never read the partition reads every closed ledger once (one Query),
      // then only the state; after a rollover by another process, the one closed ledger more.
      const cold = s.ledger(2);
      const coldRead = await cost(s, () => cold.state(partition));
      const warmRead = await cost(s, () => cold.state(partition));
      await publish(1, T + 60_000);
      const afterRollover = await cost(s, () => cold.state(partition));

      const itemBytes = 80 + partition.toString().length;
      expect(coldRead.Query?.readCapacityUnits).toBeLessThanOrEqual(
        Math.ceil(((rollovers + 3) * itemBytes) / 4096) + 1,
      );
      expect(warmRead).toEqual({ GetItem: { requests: 1, readCapacityUnits: 1, writeCapacityUnits: 0 } });
      expect(afterRollover).toEqual({
        GetItem: { requests: 1, readCapacityUnits: 1, writeCapacityUnits: 0 },
        Query: { requests: 1, readCapacityUnits: 1, writeCapacityUnits: 0 },
      });
      expect((await cold.state(partition))?.ledgers).toHaveLength(rollovers + 4);
      console.info(
        `${backend.name}: a cold read of ${rollovers + 3} closed ledgers:`,
        JSON.stringify(coldRead),
      );
    },
    30 * 60_000,
  );

  it('purging a deleted partition deletes its closed-ledger items with its entries and index', async () => {
    const s = stores();
    const { client, catalogTable } = s.dynamodb!;
    const ledger = s.ledger(1);
    const partition = partitionNamed('purge');
    await ledger.initialize(partition);
    for (let i = 0; i < 4; i++) await ledger.append(partition, entries(1), T);
    const ledgerIds = ((await ledger.state(partition))?.ledgers ?? []).map((info) => info.ledgerId);
    const layoutItems = () =>
      client.send(
        new QueryCommand({
          TableName: catalogTable,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :l)',
          ExpressionAttributeValues: { ':pk': { S: `ML#${partition}` }, ':l': { S: 'L#' } },
          ConsistentRead: true,
        }),
      );
    expect((await layoutItems()).Items).toHaveLength(3);

    await ledger.detachPartition(partition, ledgerIds[0] as bigint);
    for (const ledgerId of ledgerIds) while (await ledger.purgeLedger(ledgerId, 100));

    expect((await layoutItems()).Items).toEqual([]);
    expect(await Promise.all(ledgerIds.map((id) => ledger.ownerOf(id)))).toEqual(
      ledgerIds.map(() => undefined),
    );
  });

  it('a state written before closed-ledger items is read as it is, and its next rollover moves its list out', async () => {
    const s = stores();
    const { client, catalogTable } = s.dynamodb!;
    const partition = partitionNamed('legacy');
    const first = (await s.ledger(3).initialize(partition)).ledgers[0]!.ledgerId;
    // As the adapter wrote it before: the closed ledgers in a list `ld`, no `fl` nor `pc`.
    // Ledger ids are unique per deployment only, so the "closed" ones borrow ids far above the counter.
    const closed = [first, first + 1_000_000n, first + 1_000_001n];
    const current = first + 1_000_002n;
    const stateKey = { pk: { S: `ML#${partition}` }, sk: { S: 'M' } };
    await client.send(
      new PutItemCommand({
        TableName: catalogTable,
        Item: {
          ...stateKey,
          cl: { N: current.toString() },
          nx: { N: '3' },
          ld: { L: closed.map((id) => ({ M: { i: { N: id.toString() }, n: { N: '3' } } })) },
          mi: { N: '12' },
          bi: { N: '12' },
          sv: { N: '2' },
        },
      }),
    );
    const ledger = s.ledger(3);
    const before = await ledger.state(partition);
    expect(before?.ledgers).toEqual([...closed, current].map((ledgerId) => ({ ledgerId, entries: 3n })));
    expect(before?.subscriptionsVersion).toBe(`${first}.2`);

    const { positions, subscriptionsVersion } = await ledger.append(partition, entries(1), T);

    expect(subscriptionsVersion).toBe(`${first}.2`);
    const item = (await client.send(new GetItemCommand({ TableName: catalogTable, Key: stateKey }))).Item;
    expect(item?.ld).toBeUndefined();
    expect(item?.fl).toEqual({ N: first.toString() });
    const after = await s.ledger(3).state(partition);
    expect(after?.ledgers.slice(0, -1)).toEqual(
      [...closed, current].map((ledgerId) => ({ ledgerId, entries: 3n })),
    );
    expect(after?.ledgers.at(-1)).toEqual({ ledgerId: positions[0]!.ledgerId, entries: 1n });
    expect(positions[0]).toEqual(Position.of(positions[0]!.ledgerId, 0n));
    await ledger.detachPartition(partition, first);
    expect(await ledger.state(partition)).toBeUndefined();
  });
});
