import { describe, expect, it } from 'vitest';
import { Position } from '../../shared/domain/position.ts';
import { storageBackends, useStorage } from '../support/storage-backends.ts';

// The claim of the cursor layout: the write cost of an acknowledgement does not
// grow with the number of ack holes. Measured with the capacity DynamoDB
// itself reports (dynalite and AWS's DynamoDB Local apply DynamoDB's size rules).
const HOLES = 20_000;
const LEDGER = 7n;

describe.each(
  storageBackends().filter((backend) => backend.name !== 'in-memory'),
)('acknowledgement cost on $name', (backend) => {
  const stores = useStorage(backend);

  it(`stays at one write unit per ack page with ${HOLES} holes in the cursor`, async () => {
    const { cursorStore, meter } = stores();
    await cursorStore.create('cost', Position.beforeFirst(LEDGER));
    // Every other entry acknowledged: HOLES holes, acked in requests of 500 (as a consumer groups acks).
    const acked = Array.from({ length: HOLES }, (_, i) => Position.of(LEDGER, BigInt(2 * i + 1)));
    for (let i = 0; i < acked.length; i += 500)
      await cursorStore.acknowledge('cost', acked.slice(i, i + 500));

    meter?.reset();
    await cursorStore.acknowledge('cost', [Position.of(LEDGER, 2n * BigInt(HOLES) + 1n)]);
    const single = meter?.snapshot().UpdateItem;

    meter?.reset();
    const tenInOnePage = Array.from({ length: 10 }, (_, i) =>
      Position.of(LEDGER, 2n * BigInt(HOLES) + 3n + BigInt(i)),
    );
    await cursorStore.acknowledge('cost', tenInOnePage);
    const batch = meter?.snapshot().UpdateItem;

    const stored = await cursorStore.load('cost');
    expect(stored?.acknowledged).toHaveLength(HOLES + 11);
    expect(single).toEqual({ requests: 1, readCapacityUnits: 0, writeCapacityUnits: 1 });
    expect(batch).toEqual({ requests: 1, readCapacityUnits: 0, writeCapacityUnits: 1 });
  });

  it('costs one write unit even when the page is full', async () => {
    const { cursorStore, meter } = stores();
    await cursorStore.create('full-page', Position.beforeFirst(LEDGER));
    const page = Array.from({ length: 255 }, (_, i) => Position.of(LEDGER, BigInt(256 + i)));
    await cursorStore.acknowledge('full-page', page);

    meter?.reset();
    await cursorStore.acknowledge('full-page', [Position.of(LEDGER, 511n)]);

    expect(meter?.snapshot().UpdateItem).toEqual({
      requests: 1,
      readCapacityUnits: 0,
      writeCapacityUnits: 1,
    });
  });
});
